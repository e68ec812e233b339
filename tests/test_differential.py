"""Laws checked on generated programs: our answers equal pyDatalog's, and demand-driven
evaluation of a bound goal equals full evaluation filtered to that goal."""

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from memory.errors import InvalidProgram

from engine_helpers import answers, program

pytest.importorskip("pyDatalog.pyDatalog")

from pydatalog_oracle import Oracle  # noqa: E402

ORACLE = Oracle(timeout_s=5.0)

VARS = ["X", "Y", "Z", "W"]
EDB = [("e0", 2), ("e1", 2)]
IDB = [("p0", 2), ("p1", 2), ("p2", 1)]
DOMAIN = [1, 2, 3, 4]
BASE_RULES = [  # every derived predicate has an exit rule, so pyDatalog knows them all
    ("p0", ["X", "Y"], [("e0", ["X", "Y"])]),
    ("p1", ["X", "Y"], [("e1", ["Y", "X"])]),
    ("p2", ["X"], [("e0", ["X", "Y"])]),
]

arg = st.one_of(st.sampled_from(VARS), st.sampled_from(VARS), st.sampled_from(DOMAIN))


@st.composite
def literal(draw, preds):
    name, arity = draw(st.sampled_from(preds))
    return (name, [draw(arg) for _ in range(arity)])


@st.composite
def rule(draw, negation=False):
    name, arity = draw(st.sampled_from(IDB))
    body = draw(st.lists(literal(EDB + IDB), min_size=1, max_size=3))
    body_vars = [a for _, args in body for a in args if isinstance(a, str)]
    assume(body_vars)
    head = [draw(st.sampled_from(body_vars)) for _ in range(arity)]
    negs = []
    if negation and draw(st.booleans()):
        neg_name, neg_arity = draw(st.sampled_from(EDB))
        negs = [(neg_name, [draw(st.sampled_from(body_vars)) for _ in range(neg_arity)])]
    return (name, head, body, negs)


# Keyed by (name, arity), as the engine's loader and the oracle read them (keyed by name alone, every
# predicate read as empty, and the laws compared empty models).
facts = st.fixed_dictionaries({
    (pred, arity): st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), min_size=1, max_size=8, unique=True)
    for pred, arity in EDB
})


def _text(name, args):
    return f"{name}({', '.join(str(a) for a in args)})"


def our_program(rules):
    clauses = []
    for name, head, body, *rest in rules:
        goals = [_text(n, a) for n, a in body] + [f"\\+ {_text(n, a)}" for n, a in (rest[0] if rest else [])]
        clauses.append(f"{_text(name, head)} :- {', '.join(goals)}.")
    return program("\n".join(clauses))


def pydatalog_answers(rules, edb):
    lines = [f"+ {_text(name, t)}" for (name, _), tuples in edb.items() for t in tuples]
    for name, head, body, *_ in rules:
        lines.append(f"{_text(name, head)} <= {' & '.join(_text(n, a) for n, a in body)}")
    queries = {(name, arity): _text(name, VARS[:arity]) for name, arity in IDB}
    result = ORACLE.ask("\n".join(lines), list(queries.values()))
    if result is None:
        return None
    return {pred: result[q] for pred, q in queries.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(rule(), min_size=1, max_size=4), facts)
def test_same_answers_as_pydatalog(extra_rules, edb):
    rules = BASE_RULES + extra_rules
    prog = our_program(rules)
    expected = pydatalog_answers(rules, edb)
    assume(expected is not None)  # pyDatalog ran out of time: no verdict on this example
    for name, arity in IDB:
        ours = set(answers(prog, _text(name, VARS[:arity]), edb, demand=False))
        assert ours == expected[(name, arity)], (name, rules)


# Stored facts of predicates that rules also define (a fact asserted by hand next to its rules).
idb_facts = st.fixed_dictionaries({
    (pred, arity): st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), max_size=3, unique=True)
    for pred, arity in IDB
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(rule(negation=True), min_size=1, max_size=5), facts, st.sampled_from(DOMAIN), st.sampled_from(DOMAIN),
       st.sampled_from(["bf", "fb", "bb"]), idb_facts)
def test_demand_equals_full_evaluation(extra_rules, edb, a, b, pattern, mixed):
    edb = {**edb, **mixed}
    rules = BASE_RULES + extra_rules
    try:
        prog = our_program(rules)
    except InvalidProgram:
        assume(False)
    for name, arity in IDB:
        if arity == 1:
            goal = _text(name, [a])
        else:
            goal = _text(name, [a if pattern[0] == "b" else "X", b if pattern[1] == "b" else "Y"])
        assert answers(prog, goal, edb, demand=True) == answers(prog, goal, edb, demand=False), (goal, rules)


@st.composite
def aggregate_rule(draw):
    """A rule whose body ends in aggregate_all(count, Goal, N): Goal shares variables with the body,
    holds constants, or both; the head may carry the count."""
    name, arity = draw(st.sampled_from(IDB))
    body = draw(st.lists(literal(EDB + IDB), min_size=1, max_size=2))
    body_vars = [a for _, args in body for a in args if isinstance(a, str)]
    assume(body_vars)
    goal = draw(literal(EDB + IDB))
    head = [draw(st.sampled_from(body_vars + ["N"])) for _ in range(arity)]
    counted = f"aggregate_all(count, {_text(*goal)}, N)"
    return f"{_text(name, head)} :- {', '.join(_text(n, a) for n, a in body)}, {counted}."


def _base_text():
    return "\n".join(f"{_text(name, head)} :- {', '.join(_text(n, a) for n, a in body)}."
                     for name, head, body in BASE_RULES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(st.one_of(rule().map(lambda r: our_rule_text(r)), aggregate_rule()), min_size=1, max_size=4), facts,
       st.sampled_from(DOMAIN), st.sampled_from(["ff", "bf", "fb", "bb", "count"]))
def test_demand_into_aggregates_equals_full_evaluation(extra_rules, edb, a, pattern):
    """Demand flows into aggregate goals (their constants and bound group variables) or, where that
    would make the program unstratified, falls back to computing the goal in full: either way the
    answers are those of full evaluation."""
    try:
        prog = program(_base_text() + "\n" + "\n".join(extra_rules))
    except InvalidProgram:
        assume(False)
    for name, arity in IDB:
        if pattern == "count":
            goal = f"aggregate_all(count, {_text(name, [a] + VARS[1:arity])}, N)"
        elif arity == 1:
            goal = _text(name, [a if pattern[0] == "b" else "X"])
        else:
            goal = _text(name, [a if pattern[0] == "b" else "X", a if pattern[1] == "b" else "Y"])
        assert answers(prog, goal, edb, demand=True) == answers(prog, goal, edb, demand=False), (goal, extra_rules)


def our_rule_text(rule):
    name, head, body, *_ = rule
    return f"{_text(name, head)} :- {', '.join(_text(n, a) for n, a in body)}."


@pytest.mark.parametrize("rules", [
    "p0(X, Y) :- e0(X, Y).",
    "p0(X, Y) :- e0(X, Y).\np0(X, Z) :- e0(X, Y), p0(Y, Z).",  # right-linear: the factored rewrite
    "p0(X, Y) :- e0(X, Y).\np0(X, Z) :- p0(X, Y), e0(Y, Z).",  # left-linear
])
@pytest.mark.parametrize("goal", ["p0(1, Y)", "p0(X, 3)", "p0(2, Y)"])
def test_stored_facts_of_a_defined_predicate_answer_a_bound_goal(rules, goal):
    """p0 has rules and facts of its own: a bound goal's answers include the facts (the factored rewrite
    once answered from its exit rules alone)."""
    edb = {("e0", 2): [(1, 2)], ("p0", 2): [(1, 3), (2, 3), (3, 4)]}
    prog = program(rules)
    assert answers(prog, goal, edb, demand=True) == answers(prog, goal, edb, demand=False)
