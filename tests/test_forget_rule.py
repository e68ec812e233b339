"""forget_rule: a rule removed by its text, id or name, in one audited transaction; the conclusions that fell are
named; a conclusion another rule or a stored fact still gives stays; a refusal changes nothing."""

import pytest

from conftest import snapshot_counts
from memory.errors import InvalidArguments, NotFound
from memory.tools import call_tool


def audit_ops(m):
    with m.store.read() as conn:
        return [r[0] for r in conn.execute("SELECT operation FROM audit_log ORDER BY id")]


@pytest.fixture
def kb(mem):
    for fact in ("human(socrates)", "human(plato)", "god(zeus)", "mortal(heracles)"):
        mem.remember_fact(fact)
    mem.define_rule("mortal(X)", "human(X)", name="mortality")
    mem.define_rule("mortal(X)", "god(X), X == plato")  # never fires: plato stays mortal only through rule 1
    mem.define_rule("wise(X)", "mortal(X), human(X)")
    return mem


def holds(m, goal):
    return sorted(b["X"] for b in m.query_logic(goal).bindings)


@pytest.mark.parametrize("named_by", [{"rule": "mortal(X) :- human(X)"}, {"rule": "mortal( X ):-human(X)."},
                                      {"rule_id": 1}, {"name": "mortality"}])
def test_a_rule_is_named_by_its_text_id_or_name(kb, named_by):
    result = call_tool(kb, "forget_rule", named_by)
    assert result.structured["rule"] == "mortal(X) :- human(X)" and result.structured["rule_id"] == 1
    assert result.structured["withdrawn"] == ["mortal(plato)", "mortal(socrates)", "wise(plato)", "wise(socrates)"]
    assert result.structured["withdrawn_total"] == 4
    assert result.text == ("Forgot rule 1: mortal(X) :- human(X)\n"
                           "% no longer hold (4): mortal(plato), mortal(socrates), wise(plato), wise(socrates)")
    assert holds(kb, "mortal(X)") == ["heracles"]  # the stored fact stays
    assert holds(kb, "wise(X)") == []  # and what rested on the fallen conclusions falls with them
    assert [r["rule"] for r in kb.list_rules().items] == ["mortal(X) :- god(X), X == plato",
                                                          "wise(X) :- mortal(X), human(X)"]
    assert audit_ops(kb)[-1] == "forget_rule"


def test_a_conclusion_another_rule_still_gives_stays(mem):
    mem.remember_fact("edge(a, b)")
    mem.define_rule("reach(X)", "edge(X, _)")
    mem.define_rule("reach(X)", "edge(_, X)")
    result = mem.forget_rule(rule="reach(X) :- edge(_, X)")
    assert result.withdrawn.listed == ["reach(b)"] and holds(mem, "reach(X)") == ["a"]
    result = mem.forget_rule(rule="reach(X) :- edge(X, _)")
    assert result.withdrawn.listed == ["reach(a)"]


def test_nothing_withdrawn_is_said_in_the_text(kb):
    text = call_tool(kb, "forget_rule", {"rule": "mortal(X) :- god(X), X == plato"}).text
    assert text == "Forgot rule 2: mortal(X) :- god(X), X == plato\n% no conclusion stopped holding"


@pytest.mark.parametrize("arguments, error, words", [
    ({}, InvalidArguments, "exactly one of rule, rule_id or name"),
    ({"rule_id": 1, "name": "mortality"}, InvalidArguments, "(got rule_id, name)"),
    ({"rule_id": 99}, NotFound, "No rule id 99 in memory 'default' (list_rules shows"),
    ({"name": "nobody"}, NotFound, "No rule named nobody"),
    ({"rule": "mortal(X) :- god(X)"}, NotFound, "No rule mortal(X) :- god(X)"),
    ({"rule": "mortal(X)"}, InvalidArguments, "must be a rule Head :- Body"),
])
def test_a_refused_removal_changes_nothing(kb, arguments, error, words):
    before = snapshot_counts(kb)
    with pytest.raises(error) as info:
        call_tool(kb, "forget_rule", arguments)
    assert words in str(info.value)
    assert snapshot_counts(kb) == before and audit_ops(kb)[-1] == "define_rule"


def test_materialized_conclusions_of_a_forgotten_rule_are_no_longer_current(kb):
    kb.materialize()
    kb.forget_rule(name="mortality")
    with kb.store.read() as conn:
        current = {r[0] for r in conn.execute("SELECT text FROM current_derived")}
        stale = {r[0] for r in conn.execute("SELECT text FROM derived")}
    assert "mortal(socrates)" in stale  # still in the table, marked stale by the generation
    assert "mortal(socrates)" not in current
