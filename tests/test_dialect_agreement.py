"""Where the dialect once disagreed with SWI-Prolog and clingo (issue 33), each case as it must answer now:
aggregate templates are expressions, safety follows the documented rule, negation binds repeated variables
once, ISO arithmetic, proofs in the user's words, body order, and `bag`."""

import pytest

from memory import Memory
from memory.datalog import Budget, Pred, solve_kept
from memory.datalog.maintenance import BaseChange
from memory.errors import EvaluationError, InvalidProgram
from memory.terms import parse_term

from engine_helpers import answers, loader, program, proof

N = {("n", 1): [(1,), (2,), (3,)]}


def walk(node):
    yield node
    for child in node.children:
        yield from walk(child)


# 1. aggregate templates are arithmetic expressions ------------------------------------------------------

@pytest.mark.parametrize("goal, value", [
    ("aggregate_all(sum(X*2), n(X), S)", 12),
    ("aggregate_all(max(-X), n(X), S)", -1),
    ("aggregate_all(min(X-5), n(X), S)", -4),
    ("aggregate_all(sum(X), n(X), S)", 6),
    ("aggregate_all(max(X*X - 4*X), n(X), S)", -3),
])
def test_aggregate_templates_are_evaluated_per_solution(goal, value):
    assert answers(program(""), goal, N) == [(value,)]


def test_aggregate_template_errors_stay_typed():
    with pytest.raises(EvaluationError, match="type error"):
        answers(program(""), "aggregate_all(sum(X*a), n(X), S)", N)
    with pytest.raises(EvaluationError, match="division by zero"):
        answers(program(""), "aggregate_all(max(1/(X-2)), n(X), S)", N)


def test_max_and_min_of_non_arithmetic_values_use_standard_order():
    """An extension: SWI-Prolog raises a type error here; we pick by the standard order of terms."""
    facts = {("q", 1): [("a",), ("b",)]}
    assert answers(program(""), "aggregate_all(max(X), q(X), M)", facts) == [("b",)]


RULES = "double(S) :- aggregate_all(sum(X*2), n(X), S).\nlow(M) :- aggregate_all(min(X-5), n(X), M)."


def test_rules_over_expression_templates_prove_and_are_maintained():
    prog = program(RULES)
    tree = proof(prog, "double(12)", N)
    assert tree is not None and not any(node.truncated for node in walk(tree))
    assert [c.goal for c in tree.children] == ["aggregate_all(sum(X * 2), n(X), 12)"]
    kept_answers, evaluation = solve_kept(prog, parse_term("double(S)"), loader(N), budget=Budget())
    assert kept_answers.rows == [(12,)]
    updated = evaluation.update({Pred.stored("n", 1): BaseChange(added=[(4,)])})
    assert updated.rows == [(20,)]
    evaluation.release()


def test_materialize_over_expression_templates(mem):
    for i in (1, 2, 3):
        mem.remember_fact(f"n({i})")
    mem.define_rule("double(S)", "aggregate_all(sum(X*2), n(X), S)")
    result = mem.materialize()
    assert result.tuples == 1 and result.proof_edges >= 1
    assert mem.query_logic("double(S)").bindings == [{"S": "12"}]


# 2. safe rules are accepted and evaluated ----------------------------------------------------------------

SAFE = {("n", 1): [(1,), (2,), (3,)], ("m", 1): [(2,)]}


def test_a_variable_bound_outside_may_be_used_in_a_negated_conjunction():
    prog = program("top(X) :- n(X), \\+ (n(Y), Y > X).")
    assert answers(prog, "top(X)", SAFE) == [(3,)]
    assert answers(prog, "top(3)", SAFE) == [()]
    assert answers(prog, "top(2)", SAFE) == []


def test_a_variable_bound_outside_may_be_used_in_an_aggregate_goal():
    prog = program("c(X, N) :- n(X), aggregate_all(count, (n(Y), \\+ m(X)), N).")
    assert answers(prog, "c(X, N)", SAFE) == [(1, 3), (2, 0), (3, 3)]
    assert answers(prog, "c(2, N)", SAFE) == [(0,)]


def test_nested_negation_takes_its_bindings_from_every_enclosing_scope():
    prog = program("p(X) :- n(X), \\+ (n(Y), \\+ (n(Z), Z > Y, Z > X)).")
    # p(X): every n(Y) has some n(Z) above both X and Y: false for every X (Y = 3 has none)
    assert answers(prog, "p(X)", SAFE) == []
    prog = program("p(X) :- n(X), \\+ (n(Y), Y > X, \\+ (n(Z), Z > Y)).")
    # p(X): every Y above X has a Z above it; Y = 3 has none, so only X = 3 (nothing above it)
    assert answers(prog, "p(X)", SAFE) == [(3,)]
    assert answers(program("p(X) :- n(X), \\+ (n(Y), Y > X, \\+ (n(Z), Z >= Y))."), "p(X)", SAFE) == [(1,), (2,), (3,)]


RECURSIVE = "c(Z) :- t(Z).\nc(W) :- c(Z), \\+ (f(U), U < Z), W is Z + 1, W < 9.\n" \
    "m(W) :- t(W).\nm(W) :- m(Z), aggregate_all(count, (f(U), U =< Z), N), W is Z + N + 1, W < 9."


def test_a_recursive_rule_may_use_its_recursive_variables_in_a_negated_conjunction_or_aggregate():
    """Only the recursive literal binds Z: the goal is evaluated per row (an auxiliary relation guarded by c(Z)
    would depend on the c it negates)."""
    facts = {("t", 1): [(0,)], ("f", 1): [(3,)]}
    prog = program(RECURSIVE)
    assert answers(prog, "c(X)", facts) == [(0,), (1,), (2,), (3,), (4,)]
    assert answers(prog, "c(4)", facts) == [()] and answers(prog, "c(5)", facts) == []
    assert answers(prog, "m(X)", facts) == [(0,), (1,), (2,), (3,), (5,), (7,)]
    tree = proof(prog, "c(4)", facts)
    assert [c.goal for c in tree.children][1:] == ["\\+ (f(U), U < 3)", "4 is 3 + 1", "4 < 9"]
    assert [c.goal for c in proof(prog, "m(5)", facts).children][1] == "aggregate_all(count, (f(U), U =< 3), 1)"
    kept, evaluation = solve_kept(prog, parse_term("c(X)"), loader(facts), budget=Budget())
    from memory.datalog.relations import StoredRelation
    changed = evaluation.update({Pred.stored("f", 1): BaseChange(added=[(1,)], relation=StoredRelation({(1,), (3,)}))})
    assert changed.rows == [(0,), (1,), (2,)]
    evaluation.release()


def test_the_same_rules_as_queries():
    assert answers(program(""), "n(X), \\+ (n(Y), Y > X)", SAFE) == [(3,)]
    assert answers(program(""), "n(X), aggregate_all(count, (n(Y), Y < X), N)", SAFE) == [(1, 0), (2, 1), (3, 2)]


# 3. negation with a repeated local variable --------------------------------------------------------------

REPEATED = {("e", 2): [("b", "c")], ("f", 1): [("b",)]}


def test_a_negated_literal_repeating_a_local_variable_has_a_full_proof():
    prog = program("d(Y) :- f(Y), \\+ e(X, X).")
    assert answers(prog, "d(Y)", REPEATED) == [("b",)]
    tree = proof(prog, "d(b)", REPEATED)
    assert not tree.truncated and [c.goal for c in tree.children] == ["f(b)", "\\+ e(X, X)"]
    blocked = {**REPEATED, ("e", 2): [("b", "c"), ("c", "c")]}
    assert answers(prog, "d(Y)", blocked) == []


def test_materialize_records_the_proof_edges_of_a_repeated_variable_negation(db_path):
    import apsw
    with Memory(db_path) as m:
        m.remember_fact("e(b, c)")
        m.remember_fact("f(b)")
        m.define_rule("d(Y)", "f(Y), \\+ e(X, X)")
        tree = m.explain_why("d(b)").proof_tree
        assert tree["children"] and not tree.get("truncated")
        assert m.materialize().tuples == 1
    conn = apsw.Connection(db_path)
    edges = conn.execute("SELECT kind, premise FROM proof_edges ORDER BY position").fetchall()
    assert edges == [("fact", "f(b)"), ("negation", "\\+ e(X, X)")]


# 4. ISO arithmetic ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, value", [
    ("round(2.5)", 3), ("round(-2.5)", -3), ("round(0.5)", 1), ("round(-0.5)", -1), ("round(2.4)", 2),
    ("round(0.49999999999999994)", 0), ("integer(2.5)", 3), ("integer(-2.5)", -3), ("round(7)", 7),
    ("(-1)^(-7)", -1), ("(-1)^(-8)", 1), ("1^(-2)", 1), ("(-1)**(-7)", -1), ("2^3", 8), ("0^0", 1),
])
def test_iso_rounding_and_integer_powers(expr, value):
    (result,), = answers(program(""), f"X is {expr}", {})
    assert type(result) is int and result == value


def test_other_negative_integer_powers_are_floats_or_errors_as_in_swi_prolog():
    (half,), = answers(program(""), "X is 2^(-1)", {})
    assert half.value == 0.5
    with pytest.raises(EvaluationError, match="division by zero"):
        answers(program(""), "X is 0^(-1)", {})


# 5. proofs name the user's literals -----------------------------------------------------------------------

def test_proof_leaves_never_show_auxiliary_predicates():
    facts = {("p", 1): [("a",), ("b",)], ("q", 1): [("a",)], ("r", 2): [("a", 1), ("b", 2)]}
    prog = program("ok(X) :- p(X), \\+ (q(X), r(X, _)).\n"
                   "cnt(X, N) :- p(X), aggregate_all(count, (r(X, Y), Y > 0), N).")
    tree = proof(prog, "ok(b)", facts)
    assert [c.goal for c in tree.children] == ["p(b)", "\\+ (q(b), r(b, _))"]
    tree = proof(prog, "cnt(a, 1)", facts)
    assert [c.goal for c in tree.children] == ["p(a)", "aggregate_all(count, (r(a, Y), Y > 0), 1)"]
    for t in (proof(prog, "ok(b)", facts), tree):
        assert not any("$" in node.goal for node in walk(t))


# 6. body order --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "z(Y) :- \\+ r(X), p(X, Y).",
    "z(X, N) :- aggregate_all(count, p(X, Y), N), r(X).",
    "z(Y) :- q(Y), \\+ (r(X), s(X, Y)), p(X, Y).",
])
def test_a_variable_bound_only_after_a_negation_or_aggregate_is_refused(text):
    with pytest.raises(InvalidProgram, match="order-dependent rule: variable X") as info:
        program(text)
    assert "rule:" in info.value.message


@pytest.mark.parametrize("goal", ["\\+ r(X), p(X, Y)", "aggregate_all(count, p(X, Y), N), r(X)"])
def test_order_dependent_queries_are_refused(goal):
    with pytest.raises(InvalidProgram, match="order-dependent"):
        answers(program(""), goal, {})


def test_the_same_literals_in_prolog_order_are_answered():
    facts = {("p", 2): [(1, "a"), (2, "b"), (3, "c")], ("r", 1): [(1,)]}
    assert answers(program(""), "p(X, Y), \\+ r(X)", facts) == [(2, "b"), (3, "c")]
    assert answers(program(""), "r(X), aggregate_all(count, p(X, Y), N)", facts) == [(1, 1)]
    # a variable inside only the aggregate is local to it, as in Prolog
    assert answers(program(""), "aggregate_all(count, p(X, Y), N), r(Z)", facts) == [(3, 1)]


# 7. bag -----------------------------------------------------------------------------------------------------

def test_bag_lists_every_value_in_standard_order():
    facts = {("p", 2): [("a", 2), ("b", 1), ("c", 2)]}
    (bag,), = answers(program(""), "aggregate_all(bag(Y), p(_, Y), L)", facts)
    assert bag == parse_term("[1, 2, 2]")
    (bag,), = answers(program(""), "aggregate_all(set(Y), p(_, Y), L)", facts)
    assert bag == parse_term("[1, 2]")
