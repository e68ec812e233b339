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
