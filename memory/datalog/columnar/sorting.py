"""Orderings of integer id columns through numpy's plain sort.

Why: numpy sorts an int64 array in place with vectorized code, about ten times faster than it finds a
permutation (`argsort(kind="stable")`) or the first occurrence of each key (`unique(return_index=True)`), which
sort indirectly: measured on 2,000,000 keys, 14 ms against 142 and 266. So where the keys and the row numbers
fit in 63 bits together, a row's number rides in the low bits of its key and one plain sort gives both the
order and, within equal keys, the rows in their original order.
"""

from __future__ import annotations

import numpy as np

I64 = np.int64


def _row_bits(keys: np.ndarray) -> int | None:
    """The bits a row number takes beside these keys (non-negative) in one int64, or None when they do not fit."""
    n = len(keys)
    if not n:
        return None
    row_bits = max(n - 1, 1).bit_length()
    top = int(keys.max())
    if int(keys.min()) < 0 or top.bit_length() + row_bits > 63:
        return None
    return row_bits


def _packed(keys: np.ndarray, row_bits: int) -> np.ndarray:
    """Each key with its row number in the low bits, sorted."""
    packed = keys.astype(I64) << row_bits  # a new array: the caller's keys stay as they are
    packed |= np.arange(len(keys), dtype=I64)
    packed.sort()
    return packed


def stable_order(keys: np.ndarray) -> np.ndarray:
    """The permutation that sorts `keys` stably (equal keys keep their order): `np.argsort(keys, kind="stable")`."""
    row_bits = _row_bits(keys)
    if row_bits is None:
        return np.argsort(keys, kind="stable")
    packed = _packed(keys, row_bits)
    packed &= (1 << row_bits) - 1
    return packed


def first_occurrences(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys sorted, the row of each one's first occurrence): `np.unique(keys, return_index=True)`."""
    row_bits = _row_bits(keys)
    if row_bits is None:
        return np.unique(keys, return_index=True)
    packed = _packed(keys, row_bits)
    sorted_keys = packed >> row_bits
    first = np.empty(len(packed), dtype=bool)
    first[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=first[1:])
    rows = packed[first]
    rows &= (1 << row_bits) - 1
    return sorted_keys[first], rows


def distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct keys, sorted: `np.unique(keys)` (which numpy 2.3 and later computes by hashing, far slower for
    int64 keys than this sort)."""
    if not len(keys):
        return keys.copy()
    ordered = np.sort(keys)
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
