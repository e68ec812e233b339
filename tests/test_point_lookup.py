"""A call of a stored predicate with its first arguments bound is answered from the store's text index: the
same answers as evaluating it over the whole relation, for every kind of term an argument can be."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings, strategies as st

from memory import Memory
from memory.terms import Compound, Float, String, Var, format_term, make_list

atoms = st.one_of(st.sampled_from(["a", "b", "[]", "{}", "-", ",", "|", "hello world", "it's", "", "é", "a\nb", "\\",
                                   "%", "a(", "a, b", ")"]),
                  st.text(alphabet="ab(), '\\", max_size=4))
numbers = st.one_of(st.integers(-5, 5), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=False, allow_infinity=False, width=32).map(Float))
strings = st.text(alphabet="ab(), '\"\\", max_size=4).map(String)
ground = st.recursive(
    st.one_of(atoms, numbers, strings),
    lambda inner: st.one_of(
        st.builds(lambda name, args: Compound(name, tuple(args)), atoms, st.lists(inner, min_size=1, max_size=2)),
        st.lists(inner, max_size=3).map(make_list),
        st.builds(lambda op, a, b: Compound(op, (a, b)), st.sampled_from([",", "-", "=", ":", ";", "|"]), inner, inner),
        st.builds(lambda op, a: Compound(op, (a,)), st.sampled_from(["-", "\\+"]), inner)),
    max_leaves=4)
functors = st.sampled_from(["p", "q r", "-", "a, b", "mod"])
EXAMPLES = itertools.count()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(functor=functors, rows=st.lists(st.tuples(ground, ground), min_size=1, max_size=6),
       longer=st.lists(st.tuples(ground, ground, ground), max_size=2), pick=st.integers(0, 5),
       second=st.one_of(st.none(), ground), own_first=st.booleans())
@example(functor="p", rows=[(Compound("a", (Float(0.0),)), Compound("a", (Float(-0.0),)))], longer=[], pick=1,
         second=None, own_first=False)  # -0.0 is not 0.0 here either (the lookup compares their texts)
def test_a_bound_call_answers_as_the_whole_relation_does(store_location, functor, rows, longer, pick, second,
                                                         own_first):
    # One store for the test's examples (a new database per example would dominate on PostgreSQL): each example
    # has a predicate of its own, so what earlier examples stored is never among its answers.
    functor = f"{functor}{next(EXAMPLES)}"
    with Memory(store_location) as m:
        m.add_facts([format_term(Compound(functor, row)) for row in rows + longer])
        m.add_facts(["other(1)"])
        first = rows[pick % len(rows)][0] if own_first else (rows[0][1] if pick % 2 else Float(0.5))
        goal = format_term(Compound(functor, (first, Var("Y") if second is None else second)))
        by_lookup = m.query_logic(goal)
        by_evaluation = m.query_logic(f"{goal}, 1 == 1")  # a conjunction: evaluated over the whole relation
        assert by_lookup.bindings == by_evaluation.bindings
        assert by_lookup.total == by_evaluation.total
        if own_first and second is None:
            assert by_lookup.total >= 1


def test_a_lookup_sees_only_what_the_caller_may(store_file):
    from memory.access import CallerContext
    from memory.access.context import KNOWN_CAPABILITIES
    path = store_file
    owner = CallerContext(principal="owner", project_remote="https://example.org/a", capabilities=KNOWN_CAPABILITIES)
    other = CallerContext(principal="other", project_remote="https://example.org/b", capabilities=KNOWN_CAPABILITIES)
    with Memory(path, context=owner) as m:
        m.memory_remember("Carol earns a lot", projections=[
            {"predicate": "salary", "arguments": ["carol", 250000], "statement": "Carol earns a lot"}])
        assert m.query_logic("salary(carol, X)").total == 1
    with Memory(path, context=other) as m:
        m.remember_fact("salary(dave, 10)")
        assert m.query_logic("salary(carol, X)").total == 0
        assert m.query_logic("salary(carol, 250000)").total == 0
        assert m.query_logic("salary(dave, X)").bindings == [{"X": "10"}]


def test_a_predicate_rules_define_is_evaluated_not_looked_up(store_location):
    with Memory(store_location) as m:
        m.add_facts(["p(a, b)", "e(a, c)"])
        m.define_rule("p(X, Y)", "e(X, Y)")
        assert [b["Y"] for b in m.query_logic("p(a, Y)").bindings] == ["b", "c"]
