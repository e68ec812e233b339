"""Orderings through numpy's plain sort (memory/datalog/columnar/sorting.py) are numpy's own stable argsort and
unique, on keys that fit beside their row numbers and on keys that do not; a key set's columns read back from
its keys are the columns it was given."""

import numpy as np
from hypothesis import given, settings, strategies as st

from memory.datalog.columnar import arrays
from memory.datalog.columnar.sorting import distinct, first_occurrences, stable_order

# Keys from a small range (many repeats), a wide one, and ones too wide to carry a row number (the fallback).
KEYS = st.one_of(
    st.lists(st.integers(0, 20), max_size=300),
    st.lists(st.integers(0, 2**40), max_size=300),
    st.lists(st.integers(2**62, 2**63 - 1), max_size=50),
    st.lists(st.integers(-5, 5), max_size=50),
)


@settings(max_examples=200, deadline=None)
@given(KEYS)
def test_stable_order_is_numpys_stable_argsort(values):
    keys = np.array(values, dtype=np.int64)
    kept = keys.copy()
    assert stable_order(keys).tolist() == np.argsort(keys, kind="stable").tolist()
    assert keys.tolist() == kept.tolist()  # the caller's keys are left as they were


@settings(max_examples=200, deadline=None)
@given(KEYS)
def test_first_occurrences_is_numpys_unique_with_first_indexes(values):
    keys = np.array(values, dtype=np.int64)
    found, rows = first_occurrences(keys)
    expected, first = np.unique(keys, return_index=True)
    assert found.tolist() == expected.tolist()
    assert rows.tolist() == first.tolist()


@settings(max_examples=200, deadline=None)
@given(KEYS)
def test_distinct_is_numpys_unique(values):
    keys = np.array(values, dtype=np.int64)
    assert distinct(keys).tolist() == np.unique(keys).tolist()


def test_int32_ids_sort_as_numpy_sorts_them():
    ids = np.array([3, 1, 3, 0, 1, 2], dtype=np.int32)
    assert stable_order(ids).tolist() == [3, 1, 4, 5, 0, 2]
    assert [a.tolist() for a in first_occurrences(ids)] == [[0, 1, 2, 3], [3, 1, 5, 0]]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.data())
def test_a_key_sets_columns_read_back_from_its_keys(width, data):
    radix = data.draw(st.integers(2, 60))
    rows = data.draw(st.lists(st.tuples(*[st.integers(0, radix - 1)] * width), max_size=40))
    columns = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(width)]
    for keyset in (arrays.DenseKeySet(radix, width), arrays.KeySet(arrays.key_bits(width))):
        keys = keyset.key(columns)
        back = keyset.columns(keys, width)
        assert [c.tolist() for c in back] == [c.tolist() for c in columns]
        assert all(c is not keys for c in back)
