"""A goal or rule body that calls a predicate nothing defines still runs, and says so: "unknown procedure
edg/2; did you mean edge/2", in the structured result of every tool that takes a goal or a rule."""

import jsonschema
import pytest

from memory import Memory
from memory.access import CallerContext
from memory.tools import REGISTRY, call_tool


def test_a_typo_in_a_query_is_a_warning_with_the_nearest_names(mem):
    mem.remember_fact("edge(a, b)")
    mem.define_rule("path(X, Y)", "edge(X, Y)")
    result = mem.query_logic("edg(X, Y)")
    assert result.total == 0 and result.warnings == ["unknown procedure edg/2; did you mean edge/2"]
    assert mem.query_logic("edge(X)").warnings == ["unknown procedure edge/1; did you mean edge/2"]
    assert mem.query_logic("pth(a, Y), edg(Y, Z), pth(a, Q)").warnings == [
        "unknown procedure pth/2; did you mean path/2", "unknown procedure edg/2; did you mean edge/2"]
    assert mem.query_logic("zzz").warnings == ["unknown procedure zzz/0 (no facts or rules define it)"]
    assert mem.query_logic("path(a, Y)").warnings == []


def test_calls_inside_negation_disjunction_and_aggregates_are_checked(mem):
    mem.remember_fact("edge(a, b)")
    goal = "edge(X, Y), \\+ blocked(X), (edge(Y, _) ; edgee(Y, _)), aggregate_all(count, edje(X, _), N)"
    assert [w.split(";")[0] for w in mem.query_logic(goal).warnings] == [
        "unknown procedure blocked/1 (no facts or rules define it)", "unknown procedure edgee/2",
        "unknown procedure edje/2"]


def test_builtins_computed_relations_and_other_segments_are_not_unknown(mem):
    mem.remember_fact("edge(a, b)")
    mem.create_memory("other")
    mem.mount_memory("other")
    goal = ("edge(X, Y), X \\= Y, X @< Y, N is 1 + 2, N > 1, true, \\+ fail, hedge(E, F, T, W), member(E, M), "
            "entity_type(M, Ty), other:anything(X)")
    assert mem.query_logic(goal).warnings == []


def test_a_rule_body_is_checked_and_its_own_head_counts_as_defined(mem):
    mem.remember_fact("edge(a, b)")
    change = mem.define_rule("path(X, Z)", "edge(X, Y), path(Y, Z), linked(Y)")
    assert change.created and change.warnings == ["unknown procedure linked/1 (no facts or rules define it)"]
    assert mem.define_rule("reach(X, Y)", "path(X, Y)").warnings == []  # path/2 has rules now
    again = mem.define_rule("path(X, Z)", "edge(X, Y), path(Y, Z), linked(Y)")  # already defined: still said
    assert not again.created and again.warnings == change.warnings


def test_explain_why_warns_about_an_unknown_fact(mem):
    mem.remember_fact("edge(a, b)")
    explanation = mem.explain_why("edg(a, b)")
    assert not explanation.proven and explanation.warnings == ["unknown procedure edg/2; did you mean edge/2"]


def test_suggestions_never_name_predicates_the_caller_cannot_see(tmp_path):
    """Names come from the facts the caller may read: another session's projections stay hidden."""
    db = str(tmp_path / "m.db")
    with Memory(db, context=CallerContext(principal="a", session_id="s1", project_remote=None)) as m:
        m.memory_remember("secret", scope="session",
                          projections=[{"predicate": "secret_plan", "arguments": ["x"], "statement": "s"}])
        assert m.query_logic("secret_plans(X)").warnings == [
            "unknown procedure secret_plans/1; did you mean secret_plan/1"]
    with Memory(db, context=CallerContext(principal="b", session_id="s2", project_remote=None)) as m:
        assert m.query_logic("secret_plans(X)").warnings == [
            "unknown procedure secret_plans/1 (no facts or rules define it)"]
        assert m.query_logic("secret_plan(X)").warnings == [
            "unknown procedure secret_plan/1 (no facts or rules define it)"]


@pytest.mark.parametrize("name, arguments", [
    ("query_logic", {"goal": "edg(X, Y)"}),
    ("define_rule", {"head": "p(X)", "body": "edg(X, _)"}),
    ("explain_why", {"fact": "edg(a, b)"}),
])
def test_the_tools_return_warnings_in_their_structured_result(mem, name, arguments):
    mem.remember_fact("edge(a, b)")
    result = call_tool(mem, name, arguments)
    jsonschema.validate(result.structured, REGISTRY[name].output_schema)
    assert result.structured["warnings"] == ["unknown procedure edg/2; did you mean edge/2"]
    assert "warnings" in REGISTRY[name].output_schema["properties"]
    mem.define_rule("edg(X, Y)", "edge(X, Y)")
    quiet = call_tool(mem, name, {**arguments, **({"head": "q(X)"} if name == "define_rule" else {})})
    assert "warnings" not in quiet.structured  # an optional property: left out when there are none
