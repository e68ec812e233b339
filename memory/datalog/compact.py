"""Compact base relations: a big stored predicate's tuples kept as integer id columns with array indexes.

Why: a warm relation held as a dict of Python tuples, with a dict of lists per bound column, costs about
290 bytes a tuple (1,000,000 two-column edges: the tuples 56 MB, the dict 51 MB, each hash index 40-60 MB).
Here the same facts are the distinct terms once (a list, and a dict from term to id), one int32 id column per
argument, and per bound column a CSR index (a start per term id, row numbers sorted by that column): about
80 bytes a tuple, most of it the terms themselves, which the tuples shared anyway.

A `CompactRelation` reads as the engine's relations do (tuple -> provenance code 0: membership, `get`,
iteration in insertion order, `len`), and its `CompactIndexes` serve `Relations.index` (columns -> an object
whose `get(key, default)` gives the list of matching tuples, as a hash index's buckets do). Tuples are built
only where they are read: the few a bound lookup finds, or all of them for a reader that iterates.

The columns are frozen (`_Core`); the few changes a write makes go into a small delta on top: the row numbers
of frozen tuples gone (`dead`), and the tuples added since (`extra`, a dict in insertion order, with its own
hash indexes). After many changes the relation is frozen anew from what it holds (order kept). numpy builds
the columns and indexes; it is imported only when a relation this big is read, not by a server that never
evaluates one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, KeysView, Mapping
from itertools import chain, islice
from operator import itemgetter
from typing import Any, Callable, Iterable

# Relations this big (in tuples) are kept compact; smaller ones stay dicts. A dict answers a bound lookup about
# ten times faster (a path(0, Y) walk over a 100,000-edge chain: 0.37 s of CPU cold with dicts, 0.59 s compact,
# numpy's import and the compaction included) and costs at most about 60 MB below this size; above it, memory
# is what matters. DATALOG_MEMORY_COMPACT_TUPLES sets it (1: every stored relation compact, to test that path).
COMPACT_TUPLES = int(os.environ.get("DATALOG_MEMORY_COMPACT_TUPLES", "200000"))
# Changes kept in the delta at most before the relation is frozen anew: this many, or a quarter of its size.
DELTA_KEPT = 50_000
DECODE_SLICE = 1 << 16  # rows decoded into tuples at once when iterating

_NONE: tuple = ()


def _key_function(columns: tuple) -> Callable:
    """A tuple's key on some columns, as `relations.key_function` makes it: the value for one, a tuple for more."""
    if len(columns) == 1:
        return itemgetter(columns[0])
    return itemgetter(*columns)


class _Core:
    """The frozen tuples: distinct terms (found by their hashes in a probe table), one id column per argument, and CSR indexes built on
    first use (shared by every version of the relation made from it: they never change)."""

    __slots__ = ("terms", "hashes", "table", "mask", "columns", "views", "n", "arity", "csr", "partners", "probe")

    def __init__(self, runs: Iterable[list], arity: int) -> None:
        """Frozen from runs of tuples of `arity` values (`arity` >= 1), read one run at a time: only the run being
        read is ever Python tuples (so a relation read from the store in runs never is wholly tuples at once,
        and what it frees is reused by the next run instead of staying behind as a fragmented heap)."""
        import numpy as np

        # One pass in C over every value, mapping it to the first term equal to it (a dict of each term to itself:
        # no int object is made per value or per term, which would leave the heap full of holes once freed), and
        # taking that term's address: equal values, one address. Addresses become dense ids in numpy after.
        canonical: dict = {}
        parts = []
        n = 0
        for run in runs:
            values = chain.from_iterable(run)
            parts.append(np.fromiter(map(id, map(canonical.setdefault, values, chain.from_iterable(run))),
                                     dtype=np.int64, count=len(run) * arity))
            n += len(run)
        if n * arity >= 1 << 31:
            raise OverflowError("too many values for int32 ids")
        terms = list(canonical)  # (keeps each term alive: the addresses stay theirs)
        del canonical  # a term's id is found by its hash from now on (`id_of`): no dict of half a million kept
        addresses = np.fromiter(map(id, terms), dtype=np.int64, count=len(terms))
        by_address = np.argsort(addresses)
        addresses = addresses[by_address]
        flat = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        del parts
        ids = by_address[np.searchsorted(addresses, flat)].astype(np.int32).reshape(n, arity)
        del addresses, by_address, flat
        columns = [np.ascontiguousarray(ids[:, j]) for j in range(arity)]
        del ids
        if n:  # the same tuple twice (a computed relation's tuple equal to a stored one): keep the first
            keep = _first_occurrences(columns, len(terms))
            if keep is not None:
                columns = [c[keep] for c in columns]
                n = len(keep)
        self.terms = terms
        # Each term's hash, and an open-addressing table of ids (linear probing, at most half full) from which a
        # term's id is found: a dict from term to id would cost about 30 MB more for half a million terms (its
        # int values included); this costs 8 bytes a term and 4 a slot.
        hashes = np.fromiter(map(hash, terms), dtype=np.int64, count=len(terms))
        size = 1 << max(3, (2 * len(terms)).bit_length())
        self.mask = size - 1
        self.table = _probe_table(hashes, size).data
        self.hashes = hashes.data
        self.columns = columns
        self.views = [c.data for c in columns]  # indexing a memoryview gives a Python int, fast
        self.n = n
        self.arity = arity
        self.csr: dict = {}  # column -> (starts, rows) memoryviews, see `index`
        self.partners: dict = {}  # for a pair, column -> the other column's ids in that index's order
        # The column with the most distinct terms: a whole tuple is looked up through its index.
        distinct = [int(np.count_nonzero(np.bincount(c, minlength=1))) for c in columns]
        self.probe = max(range(arity), key=distinct.__getitem__)

    def index(self, column: int) -> tuple:
        """(starts, rows) for one column: the rows whose term there has id i are rows[starts[i]:starts[i + 1]],
        in row order."""
        found = self.csr.get(column)
        if found is None:
            import numpy as np

            from .columnar.sorting import stable_order

            ids = self.columns[column]
            starts = np.zeros(len(self.terms) + 1, dtype=np.int32)
            np.cumsum(np.bincount(ids, minlength=len(self.terms)), out=starts[1:])
            order = stable_order(ids).astype(np.int32)
            if self.arity == 2:  # the other column's ids in the same order: a lookup reads them without the rows
                self.partners[column] = self.columns[1 - column][order].data
            found = self.csr[column] = (starts.data, order.data)
        return found

    def id_of(self, term: Any) -> int | None:
        """The term's id, or None when no tuple holds it (equality as a dict's keys: same hash, then ==)."""
        h = hash(term)
        table, hashes, mask = self.table, self.hashes, self.mask
        slot = h & mask
        while True:
            i = table[slot]
            if i < 0:
                return None
            if hashes[i] == h:
                found = self.terms[i]
                if found is term or found == term:
                    return i
            slot = (slot + 1) & mask

    def rows_of(self, column: int, term) -> Any:
        """The row numbers (a memoryview slice) whose term in `column` is `term`."""
        i = self.id_of(term)
        return _NONE if i is None else self.rows_with(column, i)

    def rows_with(self, column: int, i: int) -> Any:
        """The row numbers whose term in `column` has the id `i`."""
        starts, rows = self.index(column)
        return rows[starts[i]:starts[i + 1]]

    def row_of(self, t: tuple) -> int | None:
        """The row number holding the tuple `t`, or None."""
        if len(t) != self.arity:
            return None
        if self.arity == 2:  # the common case, without the general loops
            a, b = self.id_of(t[0]), self.id_of(t[1])
            if a is None or b is None:
                return None
            first, second = self.views
            if self.probe == 0:
                for r in self.rows_with(0, a):
                    if second[r] == b:
                        return r
            else:
                for r in self.rows_with(1, b):
                    if first[r] == a:
                        return r
            return None
        wanted = []
        for term in t:
            i = self.id_of(term)
            if i is None:
                return None
            wanted.append(i)
        views = self.views
        for r in self.rows_with(self.probe, wanted[self.probe]):
            if all(views[j][r] == i for j, i in enumerate(wanted)):
                return r
        return None

    def decode(self, r: int) -> tuple:
        terms = self.terms
        return tuple([terms[v[r]] for v in self.views])

    def decode_rows(self, rows: Iterable[int]) -> list:
        """The tuples of some rows, in that order."""
        terms, views = self.terms, self.views
        if self.arity == 1:
            (a,) = views
            return [(terms[a[r]],) for r in rows]
        if self.arity == 2:
            a, b = views
            return [(terms[a[r]], terms[b[r]]) for r in rows]
        if self.arity == 3:
            a, b, c = views
            return [(terms[a[r]], terms[b[r]], terms[c[r]]) for r in rows]
        return [tuple([terms[v[r]] for v in views]) for r in rows]

    def slice(self, start: int, stop: int) -> list:
        """The tuples of rows [start, stop), decoded a column at a time."""
        terms = self.terms
        get = terms.__getitem__
        return list(zip(*[list(map(get, c[start:stop].tolist())) for c in self.columns]))


def _probe_table(hashes: Any, size: int) -> Any:
    """An open-addressing table (`size` int32 slots, a power of two, -1 empty) holding each id i at the first
    free slot from hashes[i] & (size - 1) on, as `_Core.id_of` probes it: filled in rounds, in numpy, each round
    placing one waiting id per free slot and moving the others on by one (so every slot an id passed over was
    taken before it moved on, which is what lets a probe stop at the first empty slot)."""
    import numpy as np

    from .columnar.sorting import first_occurrences

    mask = size - 1
    table = np.full(size, -1, dtype=np.int32)
    waiting = np.arange(len(hashes), dtype=np.int32)
    slots = hashes & mask
    while len(waiting):
        free = np.flatnonzero(table[slots] < 0)
        taken, first = first_occurrences(slots[free])
        table[taken] = waiting[free[first]]
        moved = np.ones(len(waiting), dtype=bool)
        moved[free[first]] = False
        waiting, slots = waiting[moved], (slots[moved] + 1) & mask
    return table


def _first_occurrences(columns: list, radix: int):
    """The rows to keep so that no tuple repeats (the first of each), or None when none repeats."""
    import numpy as np

    from .columnar.sorting import first_occurrences

    if radix ** len(columns) < 1 << 62:
        key = columns[0].astype(np.int64)
        for c in columns[1:]:
            key *= radix
            key += c
        _, first = first_occurrences(key)
    else:
        _, first = np.unique(np.stack(columns, axis=1), axis=0, return_index=True)
    if len(first) == len(columns[0]):
        return None
    first.sort()
    return first


class CompactRelation(Mapping):
    """A base relation (tuple -> provenance code 0) as frozen id columns plus a small delta (see the module).

    Read by the engine like the dict it replaces; changed only by its StoredRelation (`change`), in place, or
    in a `fork` (sharing the frozen columns) while an evaluation reads this one. `copy` is a plain dict: the
    relation an evaluation adds to is its own."""

    __slots__ = ("core", "dead", "extra", "extra_indexes", "__weakref__")

    def __init__(self, core: _Core) -> None:
        self.core = core
        self.dead: set = set()  # rows of `core` no longer in the relation
        self.extra: dict = {}  # tuples added since `core` was frozen -> 0, in order
        self.extra_indexes: dict = {}  # columns -> hash index of `extra` (as relations.build_index makes them)

    @classmethod
    def of(cls, runs: Iterable[list], arity: int) -> "CompactRelation":
        """Runs of tuples (lists, each tuple of `arity` >= 1 values; a repeated tuple counts once) as a compact
        relation, read a run at a time."""
        return cls(_Core(runs, arity))

    def fork(self) -> "CompactRelation":
        """A copy to change while this one is read: the frozen columns shared, the delta copied (hash index
        buckets are replaced, never changed in place, so copying the index dicts suffices)."""
        other = CompactRelation(self.core)
        other.dead = set(self.dead)
        other.extra = dict(self.extra)
        other.extra_indexes = {columns: idx.copy() for columns, idx in list(self.extra_indexes.items())}
        return other

    def copy(self) -> dict:
        """The tuples as a new plain dict (tuple -> 0), for an evaluation that adds to the relation."""
        return dict.fromkeys(self, 0)

    # --- reading ---------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.core.n - len(self.dead) + len(self.extra)

    def __contains__(self, t: object) -> bool:
        if t in self.extra:
            return True
        if type(t) is not tuple:
            return False
        r = self.core.row_of(t)
        return r is not None and r not in self.dead

    def __getitem__(self, t: tuple) -> int:
        if t in self:
            return 0
        raise KeyError(t)

    def get(self, t: Any, default: Any = None) -> Any:
        return 0 if t in self else default

    def keys(self) -> KeysView:
        return KeysView(self)

    def __iter__(self) -> Iterator[tuple]:
        core, dead = self.core, self.dead
        for start in range(0, core.n, DECODE_SLICE):
            stop = min(start + DECODE_SLICE, core.n)
            if not dead:
                yield from core.slice(start, stop)
            else:
                yield from core.decode_rows(r for r in range(start, stop) if r not in dead)
        yield from list(self.extra)

    def _runs(self) -> Iterator[list]:
        """Its tuples in order, a slice at a time (to freeze anew)."""
        it = iter(self)
        while run := list(islice(it, DECODE_SLICE)):
            yield run

    def __reversed__(self) -> Iterator[tuple]:
        core, dead = self.core, self.dead
        yield from reversed(list(self.extra))
        for r in range(core.n - 1, -1, -1):
            if r not in dead:
                yield core.decode(r)

    def has(self, columns: tuple, key: Any) -> bool:
        """Whether a tuple has the values `key` in `columns` (as `lookup` finds them, without building any)."""
        if self.extra and key in self._extra_index(columns):
            return True
        rows = self._rows(columns, key)
        dead = self.dead
        return any(r not in dead for r in rows) if dead else len(rows) > 0

    def lookup(self, columns: tuple, key: Any) -> list:
        """The tuples whose values in `columns` are `key` (the value for one column, a tuple for more), in the
        relation's order."""
        rows = self._rows(columns, key)
        dead = self.dead
        found = self.core.decode_rows([r for r in rows if r not in dead] if dead else rows) if len(rows) else []
        if self.extra:
            found += self._extra_index(columns).get(key, _NONE)
        return found

    def _rows(self, columns: tuple, key: Any) -> Any:
        """The frozen rows (dead ones included) with the values `key` in `columns`."""
        core = self.core
        if len(columns) == 1:
            rows = core.rows_of(columns[0], key)
        else:
            # Through the most selective column's index, then the other columns compared as ids.
            ids = []
            for term in key:
                i = core.id_of(term)
                if i is None:
                    rows = _NONE
                    break
                ids.append(i)
            else:
                best = min(range(len(columns)), key=lambda k: self._bucket_size(columns[k], ids[k]))
                views = core.views
                rows = [r for r in core.rows_with(columns[best], ids[best])
                        if all(views[j][r] == i for j, i in zip(columns, ids))]
        return rows

    def _bucket_size(self, column: int, i: int) -> int:
        starts, _ = self.core.index(column)
        return starts[i + 1] - starts[i]

    def _extra_index(self, columns: tuple) -> dict:
        idx = self.extra_indexes.get(columns)
        if idx is None:
            idx = {}
            key = _key_function(columns)
            for t in self.extra:
                idx.setdefault(key(t), []).append(t)
            self.extra_indexes[columns] = idx
        return idx

    def id_columns(self, intern: Callable[[list], Any]) -> list:
        """The relation's columns (numpy int64 arrays, in its order) as ids of an evaluation's interner
        (`intern`: terms -> their ids there), without building a tuple for the frozen rows."""
        import numpy as np

        core = self.core
        mapping = intern(core.terms) if core.terms else np.empty(0, dtype=np.int64)
        columns = [mapping[c] for c in core.columns]
        if self.dead:
            alive = np.ones(core.n, dtype=bool)
            alive[np.fromiter(self.dead, dtype=np.int64, count=len(self.dead))] = False
            columns = [c[alive] for c in columns]
        if self.extra:
            added = [intern(list(values)) for values in zip(*self.extra)]
            columns = [np.concatenate((c, a)) for c, a in zip(columns, added)]
        return columns

    # --- changing (its StoredRelation only) ------------------------------------------------------------------

    def change(self, gone: Iterable[tuple], fresh: list) -> None:
        """Without the tuples `gone` (each in it) and with `fresh` (none in it), added at the end."""
        extra, dead, core = self.extra, self.dead, self.core
        gone_extra = []
        for t in gone:
            if t in extra:
                del extra[t]
                gone_extra.append(t)
            else:
                r = core.row_of(t)
                if r is not None:
                    dead.add(r)
        extra.update(dict.fromkeys(fresh, 0))
        if len(dead) + len(extra) > max(DELTA_KEPT, core.n // 4):  # freeze anew, in the same order
            self.core = _Core(self._runs(), core.arity)
            self.dead, self.extra, self.extra_indexes = set(), {}, {}
            return
        if gone_extra or fresh:
            gone_set = frozenset(gone_extra)
            for columns, idx in self.extra_indexes.items():
                _refile(idx, columns, gone_set, fresh)


def _refile(idx: dict, columns: tuple, gone: frozenset, fresh: list) -> None:
    """The hash index without `gone` and with `fresh`, each bucket that changes a new list (as
    `relations.refile` does: a forked index shares its lists with the original)."""
    key = _key_function(columns)
    touched: dict = {}
    for t in gone:
        touched.setdefault(key(t), [])
    for t in fresh:
        touched.setdefault(key(t), []).append(t)
    for k, added in touched.items():
        bucket = [t for t in idx.get(k, ()) if t not in gone] + added
        if bucket:
            idx[k] = bucket
        else:
            idx.pop(k, None)


class CompactIndex:
    """One bound-columns index of a compact relation, read as a hash index is: `get(key, default)` gives the
    list of tuples with that key; `key in index` says whether there is one."""

    __slots__ = ("relation", "columns")

    def __init__(self, relation: CompactRelation, columns: tuple) -> None:
        self.relation = relation
        self.columns = columns

    def get(self, key: Any, default: Any = None) -> Any:
        relation = self.relation
        if len(self.columns) == 1 and relation.core.arity == 2:
            # The engine's commonest lookup (one bound column of a pair), in one frame: it runs once per row a
            # rule joins, so each call saved is a measurable share of a bound closure.
            core = relation.core
            table, mask, terms = core.table, core.mask, core.terms
            slot = hash(key) & mask
            column = self.columns[0]
            tuples: list = []
            while True:
                i = table[slot]
                if i < 0:
                    break
                term = terms[i]
                if term is key or term == key:
                    found = core.csr.get(column)
                    starts, rows = found if found is not None else core.index(column)
                    start, stop = starts[i], starts[i + 1]
                    dead = relation.dead
                    partners = core.partners[column][start:stop]
                    if dead:
                        partners = [o for r, o in zip(rows[start:stop], partners) if r not in dead]
                    if column == 0:
                        tuples = [(term, terms[o]) for o in partners]
                    else:
                        tuples = [(terms[o], term) for o in partners]
                    break
                slot = (slot + 1) & mask
            if relation.extra:
                tuples += relation._extra_index(self.columns).get(key, _NONE)
            return tuples if tuples else default
        found = relation.lookup(self.columns, key)
        return found if found else default

    def __getitem__(self, key: Any) -> list:
        found = self.relation.lookup(self.columns, key)
        if not found:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return self.relation.has(self.columns, key)


class CompactIndexes:
    """A compact relation's indexes, per tuple of bound columns, as `Relations.indexes[pred]` holds them: every
    one is there (made on first use; the arrays behind it are built once per frozen core)."""

    __slots__ = ("relation", "made")

    def __init__(self, relation: CompactRelation) -> None:
        self.relation = relation
        self.made: dict = {}

    def get(self, columns: tuple, default: Any = None) -> Any:
        if not columns:
            return default
        found = self.made.get(columns)
        if found is None:
            found = self.made[columns] = CompactIndex(self.relation, columns)
        return found

    def __getitem__(self, columns: tuple) -> CompactIndex:
        found = self.get(columns)
        if found is None:
            raise KeyError(columns)
        return found

    def __setitem__(self, columns: tuple, index: Any) -> None:
        """An index built elsewhere over this relation's tuples is not kept: this one serves the same lookups."""

    def __contains__(self, columns: object) -> bool:
        return type(columns) is tuple and bool(columns)

    def items(self) -> Iterator[tuple]:
        return iter(self.made.items())

    def setdefault(self, columns: tuple, default: Any = None) -> Any:
        return self.get(columns, default)


