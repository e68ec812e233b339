"""Proof trees from provenance, and materialized conclusions in SQLite."""

import pytest

from memory import Memory
from memory.datalog import Pred
from memory.datalog.budget import Budget
from memory.errors import InvalidArguments

from engine_helpers import program, proof


def depth(node):
    return 1 + max((depth(c) for c in node.children), default=0)


def leaves(node):
    if not node.children:
        yield node
    for child in node.children:
        yield from leaves(child)


def test_reference_shape_for_a_two_premise_rule():
    p = program("risky(X) :- untested(X), in_production(X).")
    facts = {("untested", 1): [("deploy_v3",)], ("in_production", 1): [("deploy_v3",)]}
    tree = proof(p, "risky(deploy_v3)", facts).to_dict()
    assert tree == {
        "goal": "risky(deploy_v3)",
        "rule_applied": "risky(X) :- untested(X), in_production(X)",
        "children": [
            {"goal": "untested(deploy_v3)", "rule_applied": "fact", "children": []},
            {"goal": "in_production(deploy_v3)", "rule_applied": "fact", "children": []},
        ],
    }
    assert proof(p, "risky(deploy_v4)", facts) is None


@pytest.mark.parametrize("rules", [
    "path(X,Y) :- edge(X,Y). path(X,Z) :- path(X,Y), edge(Y,Z).",
    "path(X,Y) :- edge(X,Y). path(X,Z) :- edge(X,Y), path(Y,Z).",
    "path(X,Y) :- edge(X,Y). path(X,Z) :- path(X,Y), path(Y,Z).",
])
def test_proofs_end_in_facts_even_on_cycles(rules):
    p = program(rules)
    facts = {("edge", 2): [(1, 2), (2, 3), (3, 1), (3, 4)]}
    for goal in ["path(1,1)", "path(1,4)", "path(3,3)", "path(2,1)"]:
        tree = proof(p, goal, facts)
        assert tree is not None and tree.goal == goal.replace(",", ", ")
        for leaf in leaves(tree):
            assert leaf.kind == "fact" and leaf.pred == Pred.stored("edge", 2)


def test_max_depth_truncates():
    p = program("path(X,Y) :- edge(X,Y). path(X,Z) :- path(X,Y), edge(Y,Z).")
    facts = {("edge", 2): [(i, i + 1) for i in range(20)]}
    full = proof(p, "path(0, 20)", facts)
    assert depth(full) == 21
    cut = proof(p, "path(0, 20)", facts, max_depth=3)
    assert depth(cut) == 3
    assert "truncated" in str(cut.to_dict())


def test_proofs_show_builtins_negation_and_aggregates():
    p = program("""
        safe(X) :- host(X), \\+ exposed(X), load(X, L), L < 80.
        busy(X) :- host(X), aggregate_all(count, conn(X, _), N), N >= 2.
    """)
    facts = {("host", 1): [("h1",)], ("load", 2): [("h1", 40)], ("exposed", 1): [("h2",)],
             ("conn", 2): [("h1", "a"), ("h1", "b")]}
    tree = proof(p, "safe(h1)", facts).to_dict()
    kinds = [c["rule_applied"] for c in tree["children"]]
    assert sorted(kinds) == ["builtin", "fact", "fact", "negation"]
    assert {"goal": "\\+ exposed(h1)", "rule_applied": "negation", "children": []} in tree["children"]
    assert {"goal": "40 < 80", "rule_applied": "builtin", "children": []} in tree["children"]
    busy = proof(p, "busy(h1)", facts).to_dict()
    assert any(c["rule_applied"] == "aggregate" and "2" in c["goal"] for c in busy["children"])


def test_proof_of_a_long_chain_is_exact():
    p = program("path(X,Y) :- edge(X,Y). path(X,Z) :- path(X,Y), edge(Y,Z).")
    facts = {("edge", 2): [(i, i + 1) for i in range(600)]}
    tree = proof(p, "path(0, 500)", facts)
    assert depth(tree) == 501


def test_explain_through_the_memory_api(mem):
    mem.remember_fact("human(socrates)")
    mem.define_rule("mortal(X)", "human(X)")
    result = mem.explain_why("mortal(socrates)")
    assert result.proven and result.proof_tree["children"][0]["goal"] == "human(socrates)"
    assert not mem.explain_why("mortal(plato)").proven
    with pytest.raises(InvalidArguments):
        mem.explain_why("mortal(X)")


def test_a_proof_is_recorded_for_a_conclusion_not_stored_yet(mem):
    """record_proof writes the conclusion's row with a new id (found by a bug on PostgreSQL, whose identity column
    refused the explicit NULL id SQLite turned into the next one), then reuses it."""
    mem.remember_fact("edge(a, b)")
    mem.remember_fact("edge(b, c)")
    mem.define_rule("path(X, Y)", "edge(X, Y)")
    mem.define_rule("path(X, Z)", "edge(X, Y), path(Y, Z)")
    first = mem.explain_why("path(a, c)", record_proof=True)
    assert first.proven and first.recorded
    with mem.store.read() as conn:
        rows = conn.execute("SELECT id, text FROM derived WHERE text = 'path(a, c)'").fetchall()
    assert len(rows) == 1 and rows[0][0] > 0
    assert mem.explain_why("path(a, c)", record_proof=True).recorded


def test_materialize_writes_current_rows_and_hides_stale_ones(db_path):
    import apsw
    with Memory(db_path) as m:
        m.remember_fact("edge(a,b)")
        m.remember_fact("edge(b,c)")
        m.define_rule("path(X,Y)", "edge(X,Y)")
        m.define_rule("path(X,Z)", "path(X,Y), edge(Y,Z)")
        result = m.materialize()
        assert result.tuples == 3
    conn = apsw.Connection(db_path)
    rows = conn.execute("SELECT text, rule_id FROM current_derived ORDER BY text").fetchall()
    assert rows == [("path(a, b)", 1), ("path(a, c)", 2), ("path(b, c)", 1)]
    assert conn.execute("SELECT current FROM materialization_status WHERE segment = 'default'").fetchone()[0] == 1
    with Memory(db_path) as m:
        m.remember_fact("edge(c,d)")
    assert conn.execute("SELECT count(*) FROM current_derived").fetchone()[0] == 0
    assert conn.execute("SELECT current FROM materialization_status WHERE segment = 'default'").fetchone()[0] == 0
    with Memory(db_path) as m:
        assert m.materialize().tuples == 6
    assert conn.execute("SELECT count(*) FROM current_derived").fetchone()[0] == 6


def test_query_budget_is_configurable_and_the_memory_stays_usable():
    from memory.errors import BudgetExceeded
    m = Memory(":memory:", budget=Budget(max_tuples=50))
    for i in range(30):
        m.remember_fact(f"edge({i},{i + 1})")
    m.define_rule("path(X,Y)", "edge(X,Y)")
    m.define_rule("path(X,Z)", "path(X,Y), edge(Y,Z)")
    with pytest.raises(BudgetExceeded):
        m.query_logic("path(X, Y)")
    assert m.query_logic("path(29, Y)").total == 1


def test_detailed_tree_marks_the_supports_of_each_leaf(mem):
    mem.remember_fact("human(socrates)")
    mem.define_rule("mortal(X)", "human(X)")
    with mem.store.write() as conn:
        fact_id = conn.execute("SELECT id FROM facts").fetchone()[0]
        conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) "
                     "VALUES (?, 'assumption', 'greek', 't', 'now')", (fact_id,))
    detailed = mem.explain_why("mortal(socrates)").detailed_tree
    assert detailed["kind"] == "rule" and detailed["rule_id"] == 1
    leaf = detailed["children"][0]
    assert leaf["kind"] == "fact" and leaf["supports"] == ["asserted", "assumption:greek"]


def test_materialize_and_reason_read_the_facts_a_rule_only_negates_or_aggregates(mem):
    """A stored predicate that a rule reads only through `\\+` or aggregate_all is loaded like any other: the
    whole-model evaluations (materialize, reason) agree with a query."""
    for fact in ["node(a)", "node(b)", "blocked(a)", "weight(a, 2)", "weight(b, 3)"]:
        mem.remember_fact(fact)
    mem.define_rule("ok(X)", "node(X), \\+ blocked(X)")
    mem.define_rule("total(S)", "aggregate_all(sum(W), weight(_, W), S)")
    queried = {b["X"] for b in mem.query_logic("ok(X)").bindings}
    assert queried == {"b"}
    assert mem.materialize().tuples == 2  # ok(b) and total(5)
    derived = {d["fact"] for d in mem.reason("")["derived"]}
    assert derived == {"ok(b)", "total(5)"}


def test_reason_binds_head_variables_that_builtins_and_aggregates_compute(mem):
    """The head of a reasoned conclusion takes the values `is`, `=` and aggregates bind, not only those of
    relational premises."""
    for fact in ["weight(a, 2)", "weight(b, 3)"]:
        mem.remember_fact(fact)
    mem.define_rule("total(S)", "aggregate_all(sum(W), weight(_, W), S)")
    mem.define_rule("double(X, Y)", "weight(X, W), Y is W * 2")
    mem.define_rule("tagged(X, T)", "weight(X, _), T = tag(X)")
    derived = {d["fact"] for d in mem.reason("")["derived"]}
    assert derived == {"total(5)", "double(a, 4)", "double(b, 6)", "tagged(a, tag(a))", "tagged(b, tag(b))"}
    proved = {p["fact"] for p in mem.prove("")["proofs"]}
    assert proved == derived
