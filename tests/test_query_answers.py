"""What a query answers with, and arithmetic of any length the argument limit allows."""

import sys

import pytest

from memory import Memory
from memory.errors import EvaluationError


@pytest.fixture
def kb():
    m = Memory(":memory:", actor="tester")
    for fact in ("p(a, b)", "p(b, c)", "q(a)", "q(d)"):
        m.remember_fact(fact)
    yield m
    m.close()


@pytest.mark.parametrize("goal, expected", [
    # variables only inside an aggregate's goal are local to it, as in Prolog: N alone is answered
    ("aggregate_all(count, p(X, Y), N)", [{"N": "2"}]),
    ("aggregate_all(bag(Y), p(X, Y), L)", [{"L": "[b, c]"}]),
    # variables only inside a negation are local to it
    ("q(X), \\+ p(X, Z)", [{"X": "d"}]),
    # a variable bound outside is answered even where it also occurs inside
    ("p(X, Y), aggregate_all(count, p(Y, Z), N)", [{"X": "a", "Y": "b", "N": "1"}, {"X": "b", "Y": "c", "N": "0"}]),
])
def test_locals_of_negations_and_aggregates_are_not_answered(kb, goal, expected):
    assert kb.query_logic(goal).bindings == expected


def test_long_arithmetic_does_not_recurse(kb):
    kb.query_logic("X is 1 + 1")  # warm: imports and compilation happen before the limit is lowered
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default: an 8,000-term sum would need 8,000 frames
    try:
        _check_long_sums(kb)
    finally:
        sys.setrecursionlimit(limit)


def _check_long_sums(kb):
    goal = "X is " + "1+" * 8000 + "1"
    assert kb.query_logic(goal).bindings == [{"X": "8001"}]
    deep = "X is " + "(" * 900 + "2" + "*1)" * 900
    assert kb.query_logic(deep).bindings == [{"X": "2"}]


@pytest.mark.parametrize("goal", ["X is " + "1+" * 8000 + "foo", "X is 1 << 100000000", "X is " + "2*" * 5000 + "0/0"])
def test_long_arithmetic_failures_are_typed(kb, goal):
    with pytest.raises(EvaluationError):
        kb.query_logic(goal)


CHAIN = 400  # the full closure has 80,200 tuples; the closure from node 0 has 400


@pytest.fixture
def chain():
    from memory.datalog import Budget

    # A tuple budget the closure from one node fits in and the whole closure does not: a bound
    # aggregate that evaluated the whole closure would fail with budget_exceeded.
    m = Memory(":memory:", actor="tester", budget=Budget(timeout_s=30, max_tuples=20_000))
    m.add_facts([f"edge({i}, {i + 1})" for i in range(CHAIN)])
    m.define_rule(head="path(X, Y)", body="edge(X, Y)")
    m.define_rule(head="path(X, Z)", body="path(X, Y), edge(Y, Z)")
    yield m
    m.close()


@pytest.mark.parametrize("rule, goal, expected", [
    # a constant in the aggregate's goal: demand starts at 0
    (("reach(N)", "aggregate_all(count, path(0, Y), N)"), "reach(N)", [{"N": str(CHAIN)}]),
    # a group variable bound before the aggregate: demand starts at each X with edge(X, 5)
    (("from(X, N)", "edge(X, 5), aggregate_all(count, path(X, Y), N)"), "from(X, N)", [{"X": "4", "N": str(CHAIN - 4)}]),
    # the aggregate in the query itself, with a rule-free caller above it
    (None, "aggregate_all(count, path(7, Y), N)", [{"N": str(CHAIN - 7)}]),
    (None, "aggregate_all(max(Y), path(0, Y), M)", [{"M": str(CHAIN)}]),
])
def test_an_aggregate_over_a_bound_goal_computes_only_what_it_demands(chain, rule, goal, expected):
    if rule:
        chain.define_rule(head=rule[0], body=rule[1])
    assert chain.query_logic(goal).bindings == expected


def test_an_aggregate_whose_demand_would_close_a_cycle_is_computed_in_full(chain):
    """far/2's aggregate would be demanded by seen/1, which far/2 feeds: the magic set of the
    aggregate's goal would depend on the aggregate's own result (unstratified), so the rewrite falls
    back to computing that goal in full, and the answer is still right."""
    chain.define_rule(head="seen(X)", body="edge(0, X)")
    chain.define_rule(head="seen(Y)", body="seen(X), edge(X, Y), X < 3, far(X, N), N > 0")
    chain.define_rule(head="far(X, N)", body="seen(X), aggregate_all(count, edge(X, Z), N)")
    assert chain.query_logic("seen(X)").bindings == [{"X": "1"}, {"X": "2"}, {"X": "3"}]
