"""The zpm-parity knowledge tools: edits, inspection, references and rename, done right."""

import hashlib
import json
from pathlib import Path

import apsw
import pytest

from memory import Memory
from memory.errors import Conflict, InvalidArguments, NotFound, ReadOnly
from memory.tools import call_tool


def add_segment(m, name, mode="rw"):
    with m.store.write() as conn:
        conn.execute("INSERT INTO segments (name, mode, created_at) VALUES (?, ?, 'now')", (name, mode))


def add_assumption(m, fact, assumption, memory="default"):
    with m.store.write() as conn:
        fact_id = conn.execute(
            "SELECT f.id FROM facts f JOIN segments s ON s.id = f.segment_id WHERE s.name = ? AND f.text = ?",
            (memory, fact)).fetchone()[0]
        conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES (?, 'assumption', ?, 't', 'now')",
                     (fact_id, assumption))


def rows(m, goal, memory=None):
    return m.query_logic(goal, memory).bindings


# --- clear, update, upsert -------------------------------------------------------

def test_clear_context_removes_matches_and_reports_them(mem):
    for fact in ["project(beta, a)", "project(beta, b)", "project(alpha, c)", "same(x, x)", "same(x, y)"]:
        mem.remember_fact(fact)
    result = mem.clear_context("project(beta, _)")
    assert result.removed == ["project(beta, a)", "project(beta, b)"]
    assert rows(mem, "project(P, X)") == [{"P": "alpha", "X": "c"}]
    assert mem.clear_context("same(X, X)").removed == ["same(x, x)"]
    assert mem.clear_context("nothing(_, _)").removed == []


def test_clear_context_keeps_facts_supported_otherwise(mem):
    mem.remember_fact("status(a, up)")
    add_assumption(mem, "status(a, up)", "optimistic")
    out = call_tool(mem, "clear_context", {"category": "status(_, _)"})
    assert out.structured["removed"] == [] and out.structured["kept"] == ["status(a, up)"]
    assert "still believed" in out.text
    assert rows(mem, "status(a, X)") == [{"X": "up"}]


def test_update_fact_is_atomic(mem):
    mem.remember_fact('server(alpha, "1.0")')
    out = call_tool(mem, "update_fact", {"old_fact": 'server(alpha, "1.0")', "new_fact": 'server(alpha, "2.0")'})
    assert out.text == 'Updated: server(alpha, "1.0") -> server(alpha, "2.0")'
    assert rows(mem, "server(alpha, V)") == [{"V": '"2.0"'}]
    with pytest.raises(NotFound, match=r'No matching clause for: server\(alpha, "1.0"\)'):
        mem.update_fact('server(alpha, "1.0")', 'server(alpha, "3.0")')
    with pytest.raises(InvalidArguments, match="new_fact must not contain rule syntax"):
        mem.update_fact('server(alpha, "2.0")', "a :- b")
    assert rows(mem, "server(alpha, V)") == [{"V": '"2.0"'}]


def test_upsert_keys_on_the_parsed_first_argument(mem):
    mem.remember_fact("deploy(prod, v1)")
    mem.remember_fact("deploy(staging, v1)")
    assert call_tool(mem, "upsert_fact", {"fact": "deploy(prod, v2)"}).text == "Upserted: deploy(prod, v2)"
    assert rows(mem, "deploy(E, V)") == [{"E": "prod", "V": "v2"}, {"E": "staging", "V": "v1"}]
    # A list, a quoted comma and a nested term in the first argument: zpm's comma counting breaks here.
    mem.remember_fact("cfg([a, b], 'x,y', old)")
    mem.remember_fact("cfg([a], 'x,y', other)")
    result = mem.upsert_fact("cfg([a, b], 'x,y', new)")
    assert result.removed == ["cfg([a, b], 'x,y', old)"]
    assert sorted(r["T"] for r in rows(mem, "cfg(_, _, T)")) == ["new", "other"]
    mem.upsert_fact("flag")
    assert rows(mem, "flag") == [{}]


# --- trace, verify, schema, overview ---------------------------------------------

def test_trace_dependency_follows_path_and_handles_cycles(mem):
    with pytest.raises(NotFound, match="path/2 is not defined"):
        mem.trace_dependency("a")
    for a, b in [("a", "b"), ("b", "c"), ("c", "a"), ("x", "y")]:
        mem.remember_fact(f"depends_on({a}, {b})")
    mem.define_rule("path(X, Y)", "depends_on(X, Y)")
    mem.define_rule("path(X, Z)", "depends_on(X, Y), path(Y, Z)")
    out = call_tool(mem, "trace_dependency", {"start_node": "a"})
    assert out.text == '["a","b","c"]'
    assert mem.trace_dependency("y")["nodes"] == []
    with pytest.raises(InvalidArguments):
        mem.trace_dependency("X")


def test_verify_consistency_covers_every_arity_and_scopes(mem):
    assert call_tool(mem, "verify_consistency", {}).text == '{"violations":[]}'
    mem.remember_fact("untested(deploy_v3)")
    mem.remember_fact("in_production(deploy_v3)")
    mem.define_rule("integrity_violation(X)", "untested(X), in_production(X)")
    assert call_tool(mem, "verify_consistency", {}).text == '{"violations":["deploy_v3"]}'
    mem.remember_fact("owner(deploy_v3, nobody)")
    mem.define_rule("integrity_violation(X, no_owner)", "owner(X, nobody)")
    mem.define_rule("integrity_violation_deployment(X)", "in_production(X)")
    result = mem.verify_consistency()
    assert result["violations"] == ["deploy_v3", "integrity_violation(deploy_v3, no_owner)"]
    assert result["checked"] == ["integrity_violation/1", "integrity_violation/2"]
    assert mem.verify_consistency("deployment")["violations"] == ["deploy_v3"]
    with pytest.raises(InvalidArguments):
        mem.verify_consistency("x), halt(")


def test_knowledge_schema_counts_exactly(mem):
    for i in range(150):  # zpm caps counts at 100
        mem.remember_fact(f"item({i})")
    mem.remember_fact("path(a, b)")
    mem.define_rule("path(X, Y)", "edge(X, Y)")
    schema = json.loads(call_tool(mem, "get_knowledge_schema", {}).text)
    assert schema == {"predicates": [{"name": "item", "arity": 1, "type": "fact", "count": 150},
                                     {"name": "path", "arity": 2, "type": "both", "count": 2}], "total": 2}


def test_overview_shape_and_samples(mem):
    mem.remember_fact("parent(tom, bob)")
    mem.remember_fact("parent(bob, sue)")
    mem.define_rule("ancestor(X, Y)", "parent(X, Y)")
    add_assumption(mem, "parent(tom, bob)", "infra_healthy")
    view = json.loads(call_tool(mem, "get_kb_overview", {"sample_size": 2}).text)
    assert view["predicates"] == [
        {"functor": "ancestor", "arity": 2, "kind": "rule", "count": 1, "samples": ["ancestor(X, Y) :- parent(X, Y)"]},
        {"functor": "parent", "arity": 2, "kind": "fact", "count": 2, "samples": ["parent(tom, bob)", "parent(bob, sue)"]},
    ]
    assert view["assumptions"] == {"count": 1, "names": ["infra_healthy"]}
    assert view["mounts"] == {"available": True, "count": 1, "items": [{"name": "default", "scope": "project", "mode": "rw"}]}
    assert view["truncated"] is False
    assert json.loads(call_tool(mem, "get_kb_overview", {"sample_size": 0}).text)["predicates"][1]["samples"] == []


def test_overview_budget_really_holds(mem):
    big = "x" * 3000
    mem.add_facts([f"p{i}('{big}{j}')" for i in range(40) for j in range(3)])
    view = mem.get_kb_overview(50)
    size = len(json.dumps(view, separators=(",", ":")).encode())
    assert size <= 64 * 1024 and view["truncated"] is True
    assert len(view["predicates"]) == 40  # breadth kept: samples went first
    mem.add_facts([f"{'q' * 1000}{i}(a)" for i in range(200)])  # names alone exceed the budget
    view = mem.get_kb_overview(2)
    assert len(json.dumps(view, separators=(",", ":")).encode()) <= 64 * 1024
    assert view["truncated"] is True and view["omitted_predicates"] > 0
    assert len(view["predicates"]) + view["omitted_predicates"] == 240


# --- references --------------------------------------------------------------------

def build_task_kb(m):
    m.remember_fact("task_status(f024, done)")
    m.remember_fact("task_status(f025, in_progress)")
    m.remember_fact("task_status(solo)")
    m.define_rule("active_work(X)", "task_status(X, in_progress)")
    m.define_rule("idle(X)", "task(X), \\+ task_status(X, in_progress)")
    m.define_rule("done_count(N)", "aggregate_all(count, task_status(_, done), N)")
    m.define_rule("either(X)", "task_status(X, done) ; task_status(X, blocked)")
    m.remember_fact("task(f024)")
    m.remember_fact("task(f025)")
    m.remember_fact("task(f026)")


def test_references_found_through_every_construct(mem):
    build_task_kb(mem)
    add_assumption(mem, "task_status(f024, done)", "sprint_planning")
    refs = mem.find_predicate_references("task_status", 2)
    assert refs["target"] == "task_status/2"
    assert [r["head"] for r in refs["rules"]] == ["active_work(X)", "idle(X)", "done_count(N)", "either(X)"]
    assert refs["direct_facts_count"] == 2
    assert refs["facts_referenced_in_assumptions"] == [
        {"assumption": "sprint_planning", "fact": "task_status(f024, done)", "memory": "default"}]
    assert mem.find_predicate_references("task_status")["direct_facts_count"] == 3
    assert mem.find_predicate_references("task_status", 1)["rules"] == []


def test_references_across_segments(mem):
    add_segment(mem, "audit")
    add_segment(mem, "reporting")
    mem.remember_fact("task_status(a, critical)", memory="audit")
    mem.define_rule("active_work(X)", "task_status(X, in_progress)")
    mem.define_rule("critical_tasks(X)", "audit:task_status(X, critical)", memory="audit")
    mem.define_rule("check_external(X)", "monitoring:task_status(X, blocked)", memory="reporting")
    mem.define_rule("from_default(X)", "default:task_status(X, done)", memory="reporting")
    everything = mem.find_predicate_references("task_status", 2, "__all__")
    assert [(r["head"], r["memory"]) for r in everything["rules"]] == [
        ("critical_tasks(X)", "audit"), ("active_work(X)", "default")]
    assert [(r["head"], r["qualifier"]) for r in everything["cross_memory_refs"]] == [
        ("check_external(X)", "monitoring"), ("from_default(X)", "default")]
    one = mem.find_predicate_references("task_status", 2)
    assert one["cross_memory_refs"] == [{"head": "from_default(X)", "body": "default:task_status(X, done)",
                                         "memory": "reporting", "qualifier": "default"}]
    assert mem.find_predicate_references("task_status", 2, include_cross_memory_refs=False)["cross_memory_refs"] == []
    with pytest.raises(NotFound, match="Memory not mounted: nowhere"):
        mem.find_predicate_references("task_status", 2, "nowhere")


# --- rename ----------------------------------------------------------------------------

QUERIES = ["active_work(X)", "idle(X)", "done_count(N)", "either(X)"]


def test_rename_rewrites_facts_heads_and_bodies_and_answers_stay_the_same(mem):
    build_task_kb(mem)
    add_assumption(mem, "task_status(f024, done)", "sprint_planning")
    before = {q: rows(mem, q) for q in QUERIES}
    report = mem.rename_predicate("task_status", "feature_status", 2)
    assert report["renamed_facts"] == 2
    assert report["affected_rule_ids"] == ["active_work(X)", "idle(X)", "done_count(N)", "either(X)"]
    assert {q: rows(mem, q) for q in QUERIES} == before
    assert rows(mem, "task_status(X, Y)") == []
    assert rows(mem, "task_status(X)") == [{"X": "solo"}]  # the other arity is untouched
    assert rows(mem, "feature_status(f024, S)") == [{"S": "done"}]
    # supports (the TMS justification) follow the fact
    facts = {i["fact"]: i["supports"] for i in mem.list_facts(functor="feature_status").items}
    assert facts["feature_status(f024, done)"] == ["asserted", "assumption:sprint_planning"]
    assert [r["rule"] for r in mem.list_rules().items][1] == "idle(X) :- task(X), \\+ feature_status(X, in_progress)"


def test_rename_of_a_rule_defined_predicate_renames_heads(mem):
    build_task_kb(mem)
    mem.define_rule("report(X)", "active_work(X)")
    before = rows(mem, "report(X)")
    report = mem.rename_predicate("active_work", "in_flight")
    assert report["renamed_rule_heads"] == ["in_flight(X)"] and report["affected_rule_ids"] == ["report(X)"]
    assert rows(mem, "report(X)") == before == rows(mem, "in_flight(X)")


def test_rename_never_touches_lookalike_names_or_atoms(mem):
    mem.remember_fact("status(a)")
    mem.remember_fact("task_status(b)")
    mem.remember_fact("label(status)")
    mem.define_rule("q(X)", "status(X) ; task_status(X) ; label(status), X = status")
    mem.rename_predicate("status", "state", 1)
    assert [r["rule"] for r in mem.list_rules().items] == [
        "q(X) :- state(X) ; task_status(X) ; label(status), X = status"]
    assert rows(mem, "q(X)") == [{"X": "a"}, {"X": "b"}, {"X": "status"}]


def _fingerprint(path: str) -> tuple:
    conn = apsw.Connection(path)
    dump = []
    for (table,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"):
        dump.append((table, conn.execute(f'SELECT * FROM "{table}" ORDER BY 1').fetchall()))
    conn.close()
    files = tuple(hashlib.sha256(Path(p).read_bytes()).hexdigest() if Path(p).exists() else None
                  for p in (path, path + "-wal"))
    return repr(dump), files


def test_dry_run_leaves_the_database_byte_identical(db_path):
    with Memory(db_path) as m:
        build_task_kb(m)
    before = _fingerprint(db_path)
    with Memory(db_path) as m:
        report = m.rename_predicate("task_status", "feature_status", 2, dry_run=True)
    assert report["dry_run"] is True and report["renamed_facts"] == 2 and report["rewritten_rule_bodies"] == 4
    assert _fingerprint(db_path) == before


@pytest.mark.parametrize("old, new, arity, error, text", [
    ("task_status", "task_status", 2, InvalidArguments, "old_functor and new_functor are identical: self-rename is a no-op"),
    ("task_status", "feature_status", None, InvalidArguments,
     "Ambiguous arity for task_status; detected arities: 1, 2. Specify arity parameter."),
    ("task_status", "task", 1, Conflict, "Cannot rename: task/1 already exists in memory 'default'"),
    ("task", "active_work", 1, Conflict, "Cannot rename: active_work/1 already exists in memory 'default'"),
    ("task", "undefined_thing", 1, None, None),
    ("=", "eq", 2, InvalidArguments, "Cannot rename ISO operator: =/2"),
    ("is", "eval", None, InvalidArguments, "Cannot rename ISO operator: is/2"),
    ("task", "true", 0, InvalidArguments, "Cannot rename ISO operator: true/0"),
    ("nothing_here", "x", None, NotFound, "Predicate not found: nothing_here"),
    ("task_status", "Bad Name", 2, InvalidArguments, "plain atom"),
])
def test_rename_refusals_change_nothing(mem, old, new, arity, error, text):
    build_task_kb(mem)
    mem.define_rule("uses(X)", "task(X), undefined_thing(X)")
    from conftest import snapshot_counts
    before = snapshot_counts(mem)
    if error is None:  # new name used in a body only: renaming would silently merge two predicates
        with pytest.raises(Conflict):
            mem.rename_predicate(old, new, arity)
    else:
        with pytest.raises(error) as info:
            mem.rename_predicate(old, new, arity)
        assert text in info.value.message
        out = call_tool(mem, "echo", {"message": "x"})  # still serving
        assert out.text == "x"
    assert snapshot_counts(mem) == before


def test_rename_in_a_read_only_segment_is_refused(mem):
    add_segment(mem, "archive", "ro")
    with pytest.raises(ReadOnly) as info:
        mem.rename_predicate("a", "b", 1, "archive")
    assert info.value.message == "Cannot rename in read-only memory: archive"


def test_rename_cross_segment_impact_and_propagation(mem):
    add_segment(mem, "audit")
    add_segment(mem, "archive")
    mem.remember_fact("task_status(f1, critical)")
    mem.define_rule("critical(X)", "default:task_status(X, critical)", memory="audit")
    with mem.store.write() as conn:
        seg = conn.execute("SELECT id FROM segments WHERE name = 'archive'").fetchone()[0]
        conn.execute("INSERT INTO rules (segment_id, head_functor, head_arity, text, created_at) "
                     "VALUES (?, 'old', 1, 'old(X) :- default:task_status(X, done)', 'now')", (seg,))
        conn.execute("UPDATE segments SET mode = 'ro' WHERE id = ?", (seg,))
    preview = mem.rename_predicate("task_status", "feature_status", 2, dry_run=True)
    assert preview["cross_memory_impact"] == {
        "rewritten": [],
        "warnings": [{"memory": "audit", "refs": 1, "reason": "propagate_cross_memory_refs=false"}],
        "skipped_readonly": [{"memory": "archive", "refs": 1, "reason": "read-only"}],
    }
    report = mem.rename_predicate("task_status", "feature_status", 2, propagate_cross_memory_refs=True)
    assert report["cross_memory_impact"]["rewritten"] == [{"memory": "audit", "rules_updated": 1}]
    assert [r["rule"] for r in mem.list_rules("audit").items] == ["critical(X) :- default:feature_status(X, critical)"]
    assert [r["rule"] for r in mem.list_rules("archive").items] == ["old(X) :- default:task_status(X, done)"]
    assert rows(mem, "critical(X)", "audit") == [{"X": "f1"}]


# --- bad input, every tool, every argument ---------------------------------------------

def _types(prop: dict) -> list:
    return prop["type"] if isinstance(prop["type"], list) else [prop["type"]]


def _wrong_value(prop: dict):
    return {"string": 123, "integer": "seven", "boolean": "yes", "number": "x", "array": "x", "object": "x"}[
        _types(prop)[0]]


def _cases():
    from memory.tools import REGISTRY
    for tool in REGISTRY.values():
        props = tool.input_schema["properties"]
        required = tool.input_schema["required"]
        valid = {name: {"string": "p(a)", "array": ["p"]}.get(props[name]["type"], 1) for name in required}
        for name in required:
            yield tool.name, {k: v for k, v in valid.items() if k != name}, f"missing {name}"
        for name, prop in props.items():
            if "null" not in _types(prop):
                yield tool.name, {**valid, name: None}, f"null {name}"
            yield tool.name, {**valid, name: _wrong_value(prop)}, f"wrong type {name}"
            if prop["type"] == "string" and prop.get("minLength"):  # echo may echo ""
                yield tool.name, {**valid, name: ""}, f"empty {name}"
        yield tool.name, {**valid, "unexpected": 1}, "extra argument"


@pytest.mark.parametrize("tool_name, arguments, case", list(_cases()))
def test_every_tool_rejects_bad_arguments_before_running(mem, tool_name, arguments, case):
    from conftest import snapshot_counts
    from memory.tools import ArgumentsRejected
    mem.remember_fact("p(a)")
    before = snapshot_counts(mem)
    with pytest.raises(ArgumentsRejected) as info:
        call_tool(mem, tool_name, arguments)
    assert info.value.code == "invalid_arguments"
    assert snapshot_counts(mem) == before


def test_a_rename_onto_a_name_only_a_rule_calls_says_so(mem):
    mem.remember_fact("foo(a, b)")
    mem.define_rule("r(X)", "zzz(X, _)")
    with pytest.raises(Conflict) as refused:
        mem.rename_predicate("foo", "zzz", 2, dry_run=True)
    assert "zzz/2 is called by a rule in memory 'default', though no fact or rule defines it" in str(refused.value)
    mem.remember_fact("zzz(c, d)")
    with pytest.raises(Conflict) as refused:
        mem.rename_predicate("foo", "zzz", 2, dry_run=True)
    assert str(refused.value) == "Cannot rename: zzz/2 already exists in memory 'default'"
