"""memory_recall reads a pattern's projections through the (predicate, fact) index: the memories it finds are
exactly those whose arguments equal the pattern's (null = any; true apart from "true", 1 equal to 1.0)."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings, strategies as st

from memory import Memory

EXAMPLES = itertools.count()
scalars = st.sampled_from(["a", "a, b", "it's", "true", "1", "", "b(c", True, False, 1, 1.0, 2, -3, 0.5])


def _same(pattern, value) -> bool:
    if pattern is None:
        return True
    if isinstance(pattern, bool) or isinstance(value, bool):
        return type(pattern) is type(value) and pattern == value
    if isinstance(pattern, str) or isinstance(value, str):
        return pattern == value and type(pattern) is type(value)
    return pattern == value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.lists(st.tuples(scalars, scalars), min_size=1, max_size=6),
       pattern=st.tuples(st.one_of(st.none(), scalars), st.one_of(st.none(), scalars)))
def test_recall_finds_exactly_the_matching_projections(store_location, stored, pattern):
    # One store for the test's examples, a predicate of its own for each (see test_point_lookup).
    holds = f"holds{next(EXAMPLES)}"
    with Memory(store_location) as m:
        for i, (x, y) in enumerate(stored):
            m.memory_remember(f"memory {i} of {holds}", projections=[
                {"predicate": holds, "arguments": [x, y], "statement": f"statement {i}"}])
        found = m.memory_recall(holds, list(pattern), limit=100)
        expected = sorted(f"memory {i}" for i, row in enumerate(stored)
                          if all(_same(p, v) for p, v in zip(pattern, row)))
        assert sorted(item["statement"].replace("statement", "memory") for item in found["memories"]) == expected
        assert found["total"] == len(expected)
