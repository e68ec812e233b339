"""The columnar evaluator itself (numpy): terms interned to integers, relations mirrored as integer columns,
each join a vectorized gather over an index, and deduplication against the head relation on integer keys, with
no Python work per joined row; Python tuples are built only for the tuples that are new.

The mirrors are kept in step with the engine's dict relations by position: relations only grow, by appending
(dict insertion order), so a mirror catches up by reading the tail it has not seen (a removal forgets the
mirror).

What a columnar firing derives stays columns (`_Pending`, keyed by the dict the engine gave it to fill): merged
into its relation, it is appended to the mirror as deferred rows that the dict does not hold yet, and the next
round is seeded from those columns. Python tuples are built only when something else reads them: the tuple path
(for the relations, deltas and round sets it reads), `Relations.rel` and `settled` (models' readers: answers,
proofs, maintenance), each relation once and whole (`settle`). Counting needs none (`Relations.size`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from ...terms import Var
from ..planner import order_body
from ..program import Rule, literal_vars
from ..compact import CompactRelation
from ..relations import Relations, _file, key_function
from . import Unsupported
from .sorting import distinct, stable_order

CHUNK_ROWS = 1 << 20  # joined rows built at once: bounds the arrays of one step between budget checks
SINK_SLICE = 1 << 16  # new tuples built and filed between budget checks (about 30 ms)
KEY_BITS = 63  # a key packs the ids of its columns into one non-negative int64

I64 = np.int64


class Interner:
    """Terms <-> dense integer ids, for one evaluation. Equality is the relations' own (dict keys), so two terms
    the engine keeps apart (1 and 1.0) get different ids."""

    def __init__(self) -> None:
        self.ids: dict = {}
        self.terms = np.empty(1024, dtype=object)

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, values: list) -> np.ndarray:
        """The ids of a list of terms, interning the new ones."""
        ids = self.ids
        missing = set(values).difference(ids)
        if missing:
            start = len(ids)
            fresh = list(missing)
            ids.update(zip(fresh, range(start, start + len(fresh))))
            end = start + len(fresh)
            if end > len(self.terms):
                grown = np.empty(max(end, 2 * len(self.terms)), dtype=object)
                grown[:start] = self.terms[:start]
                self.terms = grown
            self.terms[start:end] = np.fromiter(fresh, dtype=object, count=len(fresh))  # never read as sequences
        return np.fromiter(map(ids.__getitem__, values), dtype=I64, count=len(values))

    def one(self, term) -> int:
        return int(self.column([term])[0])

    def decode(self, ids: np.ndarray) -> list:
        return self.terms[ids].tolist()


def pack(columns: list, bits: int) -> np.ndarray:
    """One int64 key per row from its columns' ids (each below 2**bits)."""
    key = columns[0].astype(I64, copy=True) if len(columns) > 1 else columns[0]
    for i, column in enumerate(columns[1:], 1):
        key |= column << (bits * i)
    return key


def key_bits(width: int) -> int:
    return KEY_BITS // max(width, 1)


class KeySet:
    """A set of tuples as int64 keys in a few sorted levels (sizes halving, as in a log-structured merge): adding
    a round's keys costs their sort plus amortized merges, a membership test one binary search per level. Keys
    pack each column's id into `bits` bits."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.levels: list[np.ndarray] = []

    def fits(self, ids: int) -> bool:
        return ids <= 1 << self.bits

    def key(self, columns: list) -> np.ndarray:
        return pack(columns, self.bits)

    def columns(self, keys: np.ndarray, width: int) -> list:
        """The id columns these keys pack (`key`'s inverse)."""
        mask = (1 << self.bits) - 1
        return [(keys >> (self.bits * i)) & mask if i else keys & mask for i in range(width)]

    def contains(self, keys: np.ndarray) -> np.ndarray:
        found = np.zeros(len(keys), dtype=bool)
        for level in self.levels:
            at = np.searchsorted(level, keys)
            at[at == len(level)] = 0
            found |= level[at] == keys
        return found

    def add(self, keys: np.ndarray) -> None:
        """Add keys none of which are in the set (sorted)."""
        if not len(keys):
            return
        levels = self.levels
        levels.append(keys)
        while len(levels) > 1 and len(levels[-2]) <= 2 * len(levels[-1]):
            top = levels.pop()
            merged = np.concatenate((levels.pop(), top))
            merged.sort(kind="stable")  # two sorted runs: a merge
            levels.append(merged)


class DenseKeySet:
    """A set of tuples as a table of flags, one per possible tuple over the ids below `radix`: membership and
    insertion are one gather or scatter. For id spaces whose tuples number at most DENSE_FLAGS."""

    def __init__(self, radix: int, width: int) -> None:
        self.radix = radix
        self.width = width
        self.flags = np.zeros(radix ** width, dtype=bool)  # calloc'd: pages never touched cost nothing

    def fits(self, ids: int) -> bool:
        return ids <= self.radix

    def key(self, columns: list) -> np.ndarray:
        key = columns[-1].copy()
        for column in reversed(columns[:-1]):
            key *= self.radix
            key += column
        return key

    def columns(self, keys: np.ndarray, width: int) -> list:
        """The id columns these keys stand for (`key`'s inverse: the first column is the least significant)."""
        out = []
        rest = keys
        for _ in range(width - 1):
            rest, column = np.divmod(rest, self.radix)
            out.append(column)
        out.append(rest if rest is not keys else keys.copy())
        return out

    def contains(self, keys: np.ndarray) -> np.ndarray:
        return self.flags[keys]

    def add(self, keys: np.ndarray) -> None:
        self.flags[keys] = True


DENSE_FLAGS = 1 << 25  # the largest flag table a dense key set takes (32 MB)
DENSE_INDEX_SLACK = 1 << 16  # a one-column index is a table of offsets over ids up to 4 per row plus this


def new_keyset(ids: int, width: int):
    """The key set for tuples of `width` ids below `ids` (room left for the ids later catch-ups add)."""
    radix = ids + ids // 4 + 64
    if radix ** width <= DENSE_FLAGS:
        return DenseKeySet(radix, width)
    if ids > 1 << key_bits(width):
        raise Unsupported("too many distinct terms to pack a key")
    return KeySet(key_bits(width))


@dataclass
class _Pending:
    """The tuples columnar firings derived into the dict `into` (which holds none of them until `settled`), in
    the order they found them."""

    into: dict
    pred: object
    columns: list = field(default_factory=list)  # per chunk: list of id columns
    keys: list = field(default_factory=list)  # per chunk: their keys in `keyset` (sorted for a KeySet)
    codes: list = field(default_factory=list)  # per chunk: the provenance code of its tuples
    count: int = 0
    keyset: object = None
    settled: bool = False  # its tuples were put into `into` (for a reader on the tuple path)
    merged: KeySet = field(default_factory=lambda: KeySet(0))  # the keys of chunks [0, in_merged), merged levels
    in_merged: int = 0

    def add(self, columns: list, keys: np.ndarray, code: int) -> None:
        """A chunk of new tuples (none seen yet; `keys` sorted when the key set is a KeySet)."""
        self.columns.append(columns)
        self.keys.append(keys)
        self.codes.append(code)
        self.count += len(keys)

    def seen(self, keys: np.ndarray) -> np.ndarray:
        """Which of these keys an earlier chunk holds. The chunks' keys are merged into sorted levels only when
        asked (a single firing into a round's set, or a copy, never asks)."""
        for chunk in self.keys[self.in_merged:]:
            self.merged.add(chunk if type(self.keyset) is KeySet else np.sort(chunk))
        self.in_merged = len(self.keys)
        return self.merged.contains(keys)

    def rekey(self, keyset) -> None:
        """Keys in another key set (the head's was rebuilt for more ids)."""
        self.keys = [np.sort(keyset.key(columns)) for columns in self.columns]
        self.keyset = keyset
        self.merged, self.in_merged = KeySet(0), 0

    def joined(self) -> list:
        """Its columns, the chunks joined."""
        if len(self.columns) == 1:
            return self.columns[0]
        return [np.concatenate(parts) for parts in zip(*self.columns)]


class Mirror:
    """A relation's integer columns in the dict's order, with the sorted indexes and key set built over them."""

    def __init__(self, relation: dict, arity: int) -> None:
        self.relation = relation
        self.arity = arity
        self.n = 0
        self.settled = 0  # rows [0, settled) are the dict's tuples in order; the rest are deferred
        self.runs: list = []  # the deferred rows' provenance: (rows, code), in order
        self.capacity = 0
        self.buffers = [np.empty(0, dtype=I64) for _ in range(arity)]
        self.indexes: dict = {}  # positions -> (rows covered, bits, sorted keys, row numbers)
        self.keyset: KeySet | DenseKeySet | None = None
        self.tail: tuple = (None, 0, 0)  # (the dict found to be rows [start, stop), start, stop) at the last catch-up

    def columns(self, start: int = 0, end: int | None = None) -> list:
        end = self.n if end is None else end
        return [b[start:end] for b in self.buffers]

    def append(self, columns: list, keys: np.ndarray | None = None, keyset=None) -> None:
        """Rows added at the end of the relation; `keys`, when given, are their keys in `keyset`."""
        m = len(columns[0]) if columns else 0
        if not m:
            return
        need = self.n + m
        if need > self.capacity:
            capacity = max(need, 2 * self.capacity, 1024)
            for i, b in enumerate(self.buffers):
                grown = np.empty(capacity, dtype=I64)
                grown[:self.n] = b[:self.n]
                self.buffers[i] = grown
            self.capacity = capacity
        for b, c in zip(self.buffers, columns):
            b[self.n:need] = c
        self.n = need
        if self.keyset is None:
            return
        if keys is not None and keyset is self.keyset:  # keys it made: their ids fit it
            self.keyset.add(keys)
            return
        if not self.keyset.fits(max(int(c.max()) for c in columns) + 1):
            self.keyset = None  # ids beyond its reach: built anew when next needed
            return
        keys = self.keyset.key(columns)
        self.keyset.add(np.sort(keys) if type(self.keyset) is KeySet else keys)

    def append_dict_rows(self, columns: list) -> None:
        """Rows the dict holds (appended to it in this order)."""
        self.append(columns)
        self.settled = self.n

    def deferred_rows(self) -> int:
        return self.n - self.settled

    def ensure_keyset(self, ids: int):
        """The key set of the relation's tuples, able to hold tuples of ids below `ids`."""
        if self.keyset is None or not self.keyset.fits(ids):
            self.keyset = new_keyset(ids, self.arity)
            if self.n:
                self.keyset.add(np.sort(self.keyset.key(self.columns())))
        return self.keyset

    def index(self, positions: tuple, bits: int, ids: int) -> tuple:
        """An index of the rows on `positions`, rebuilt when the relation has grown: ("dense", starts, row
        numbers) for one column over an id space not much larger than the relation (a row's matches are
        rows[starts[id]:starts[id + 1]], found by a gather), else ("sorted", sorted keys, row numbers) (found by
        binary search). `ids` is the interner's size: every id in the relation is below it."""
        entry = self.indexes.get(positions)
        if entry is not None and entry[0] == self.n and entry[1] == bits:
            return entry[2]
        if len(positions) == 1 and ids <= 4 * self.n + DENSE_INDEX_SLACK:
            column = self.buffers[positions[0]][:self.n]
            starts = np.zeros(ids + 1, dtype=I64)
            np.cumsum(np.bincount(column, minlength=ids), out=starts[1:])
            found = ("dense", starts, stable_order(column))
        else:
            keys = pack([self.buffers[p][:self.n] for p in positions], bits)
            order = stable_order(keys)
            found = ("sorted", keys[order], order)
        self.indexes[positions] = (self.n, bits, found)
        return found


def is_tail(relation: dict, part: dict) -> bool:
    """Whether `part`'s tuples are the last of `relation`'s, in order (compared in C; merging a dict into another
    inserts its very key objects, so the comparison finds them identical without comparing tuples)."""
    return list(islice(reversed(relation), len(part))) == list(reversed(part))


class ColumnarState:
    """One evaluation's interner and mirrors (hung on its `Relations`), and the tuples its firings deferred."""

    def __init__(self, rels: Relations) -> None:
        self.rels = rels
        self.interner = Interner()
        self.mirrors: dict = {}
        self.pending: dict = {}  # id(into) -> _Pending of the columnar firings into that dict
        self.generations: dict = {}  # pred -> its last _Pendings (older ones are no delta any more: forgotten)
        self.small_firings = 0  # firings below THRESHOLD run columnar because their inputs were deferred
        self.finished = False

    # --- what the engine's dicts hold as columns -------------------------------------------------------------

    def pending_of(self, into) -> _Pending | None:
        found = self.pending.get(id(into))
        return found if found is not None and found.into is into else None

    def pending_for(self, into: dict, pred, keyset) -> _Pending:
        """The columns of `into` (a dict holding no tuples), made when a firing first derives into it."""
        found = self.pending_of(into)
        if found is None:
            found = self.pending[id(into)] = _Pending(into, pred, keyset=keyset)
            generations = self.generations.setdefault(pred, [])
            generations.append(found)
            if len(generations) > GENERATIONS:  # a round's set, then the next round's delta, then forgotten
                old = generations.pop(0)
                if self.pending.get(id(old.into)) is old:
                    del self.pending[id(old.into)]
        elif found.keyset is not keyset:
            found.rekey(keyset)
        return found

    def unsettled(self, tuples: dict) -> int:
        """How many tuples `tuples` (a round's set or delta, or a relation) holds as columns only."""
        found = self.pending_of(tuples)
        if found is not None:
            return 0 if found.settled else found.count
        for mirror in self.mirrors.values():
            if mirror.relation is tuples:
                return mirror.deferred_rows()
        return 0

    def deferred(self, pred) -> int:
        mirror = self.mirrors.get(pred)
        return 0 if mirror is None or mirror.relation is not self.rels.raw.get(pred) else mirror.deferred_rows()

    def defer(self, pred, new: dict) -> bool:
        """Merge a round's set that holds only columns into the pred's relation as deferred rows (the set stays
        the next round's delta); False when it holds tuples (the caller merges them)."""
        found = self.pending_of(new)
        if found is None or found.settled or new:
            return False
        mirror = self.mirror(pred)
        for columns, keys, code in zip(found.columns, found.keys, found.codes):
            mirror.append(columns, keys, found.keyset)
            mirror.runs.append((len(keys), code))
        return True

    def settle_into(self, into: dict) -> None:
        """Put the tuples a dict holds as columns into it (a reader on the tuple path is about to read it)."""
        found = self.pending_of(into)
        if found is None or found.settled:
            return
        found.settled = True
        if found.count:
            _fill(into, found.joined(), [(len(k), c) for k, c in zip(found.keys, found.codes)], self.interner)

    def settle(self, pred=None, budget=None) -> None:
        """Turn the deferred rows of a pred's relation (of every relation, without `pred`) into tuples of its dict,
        in order, and file them in its indexes."""
        mirrors = list(self.mirrors.items()) if pred is None else [(pred, self.mirrors.get(pred))]
        for key, mirror in mirrors:
            if mirror is None or mirror.settled == mirror.n or mirror.relation is not self.rels.raw.get(key):
                continue
            columns = mirror.columns(mirror.settled)
            indexes = self.rels.indexes.get(key)
            start = len(mirror.relation)
            _fill(mirror.relation, columns, mirror.runs, self.interner, budget)
            if indexes:
                added = list(islice(mirror.relation, start, None))
                for columns_key, idx in indexes.items():
                    _file(idx, key_function(columns_key), added, budget)
            mirror.settled = mirror.n
            mirror.runs = []

    def finish(self) -> "ColumnarState | None":
        """After the evaluation: only the columns of deferred rows stay (and the terms they name); None when
        nothing is deferred. A later evaluation over these relations settles them and starts anew."""
        deferred = {pred: m for pred, m in self.mirrors.items()
                    if m.deferred_rows() and m.relation is self.rels.raw.get(pred)}
        if not deferred:
            return None
        for mirror in deferred.values():
            mirror.indexes = {}
            mirror.keyset = None
            mirror.tail = (None, 0, 0)
        self.mirrors = deferred
        self.pending, self.generations = {}, {}
        self.interner.ids = None  # decoding needs only the terms; nothing interns into a finished state
        self.finished = True
        return self

    # --- mirrors -------------------------------------------------------------------------------------------

    def mirror(self, pred) -> Mirror:
        """The pred's mirror, caught up with its relation."""
        relation = self.rels.get(pred)
        mirror = self.mirrors.get(pred)
        if mirror is None or mirror.relation is not relation:
            mirror = self.mirrors[pred] = Mirror(relation, pred.arity)
        missing = len(relation) - mirror.settled
        if missing > 0 and not mirror.n and type(relation) is CompactRelation:
            # A stored relation kept as id columns: its terms interned once each, its columns mapped, no tuple built.
            mirror.append_dict_rows(relation.id_columns(self.interner.column))
            mirror.tail = (None, 0, 0)
        elif missing > 0:
            if mirror.settled != mirror.n:
                raise AssertionError("a relation with deferred rows grew as a dict")  # Relations.add settles first
            for found in reversed(self.generations.get(pred, ())):
                # The tail is what a columnar firing produced, settled for the tuple path and merged: reuse its ids.
                if (found.settled and found.count == missing == len(found.into) and found.into is not relation
                        and found.keyset is not None and is_tail(relation, found.into)):
                    for columns, keys in zip(found.columns, found.keys):
                        mirror.append(columns, keys, found.keyset)
                    mirror.tail = (found.into, mirror.settled, mirror.n)
                    mirror.settled = mirror.n
                    break
            else:
                tail = list(islice(relation, mirror.n, None))
                mirror.append_dict_rows(self.intern(tail, mirror.arity))
                mirror.tail = (None, 0, 0)
        return mirror

    def intern(self, tuples: list, arity: int) -> list:
        if not tuples:
            return [np.empty(0, dtype=I64) for _ in range(arity)]
        return [self.interner.column(list(values)) for values in zip(*tuples)]

    def seed_columns(self, pred, seeds) -> list:
        """The delta's id columns: its own when it holds columns, a slice of the mirror when the delta is the
        relation or its tail (as the engine's rounds make it: a round's new tuples are merged into the relation,
        then seed the next), else interned."""
        found = self.pending_of(seeds)
        if found is not None and not found.settled and not seeds:
            return found.joined() if found.count else self.intern([], pred.arity)
        mirror = self.mirror(pred)
        size = len(seeds)
        if seeds is mirror.relation:
            return mirror.columns()
        if mirror.tail[0] is seeds and mirror.tail[2] - mirror.tail[1] == size:  # its rows, as the mirror caught up
            return mirror.columns(mirror.tail[1], mirror.tail[2])
        if type(seeds) is dict and 0 < size <= mirror.settled and mirror.settled == mirror.n \
                and is_tail(mirror.relation, seeds):
            return mirror.columns(mirror.n - size)
        return self.intern(list(seeds), pred.arity)

    def forget(self, pred) -> None:
        """Tuples left the pred's relation: its mirror no longer matches it by position."""
        self.mirrors.pop(pred, None)
        for found in self.generations.pop(pred, ()):
            if self.pending.get(id(found.into)) is found:
                del self.pending[id(found.into)]


GENERATIONS = 3  # _Pendings kept per pred: the set a round fills, the delta it reads, and one spare


def _fill(into: dict, columns: list, runs: list, interner: Interner, budget=None) -> None:
    """Tuples decoded from id columns into `into`, with the provenance codes of `runs` ((rows, code) in order), a
    slice at a time (one C call over a million would hold the interpreter lock for a third of a second)."""
    codes = np.repeat(np.array([c for _, c in runs], dtype=I64), [n for n, _ in runs]) if len(runs) > 1 else None
    total = len(columns[0])
    for start in range(0, total, SINK_SLICE):
        stop = min(start + SINK_SLICE, total)
        tuples = zip(*[interner.decode(c[start:stop]) for c in columns])
        if codes is None:
            into.update(dict.fromkeys(tuples, runs[0][1]))
        else:
            into.update(zip(tuples, codes[start:stop].tolist()))
        if budget is not None:
            budget.check()


@dataclass
class _Step:
    pred: object
    keys: list  # (position, ('var', Var) | ('const', term))
    fresh: list  # (position, Var) bound here (the first occurrence of each)
    equal: list  # (position, position) within the literal that must hold the same id (a repeated fresh var)
    keep: set  # variables still needed after this step

    @property
    def positions(self) -> tuple:
        return tuple(p for p, _ in self.keys)


class ColumnarRule:
    """One rule, optionally seeded at a body position, evaluated over integer columns."""

    def __init__(self, rule: Rule, rels: Relations, seed: int | None, budget) -> None:
        self.rule = rule
        self.seed = seed
        self.budget = budget
        self.state = state_of(rels)
        bound = set() if seed is None else literal_vars(rule.body[seed])
        order = order_body(rule, bound, rels.size, skip=seed)
        if seed is not None:
            order = [seed] + order
        self.order = order
        self.steps: list[_Step] = []
        known: set = set()
        head_vars = literal_vars(rule.head)
        for k, i in enumerate(order):
            lit = rule.body[i]
            later = set(head_vars)
            for j in order[k + 1:]:
                later |= literal_vars(rule.body[j])
            keys, fresh, equal, first_at = [], [], [], {}
            for position, a in enumerate(lit.args):
                if type(a) is Var:
                    if a.anonymous:
                        continue
                    if a in known:
                        keys.append((position, ("var", a)))
                    elif a in first_at:
                        equal.append((first_at[a], position))
                    else:
                        first_at[a] = position
                        fresh.append((position, a))
                else:
                    keys.append((position, ("const", a)))
            known |= {v for _, v in fresh}
            self.steps.append(_Step(lit.pred, keys, fresh, equal, later))
        self.widths = [len(s.keys) for s in self.steps if len(s.keys) > 1]  # packed index keys
        self.consts: dict | None = None

    def fire(self, delta=None, known: tuple = (), into: dict | None = None, code: int = 0) -> int:
        """`CompiledRule.fire`'s contract: the new head tuples (in none of `known`, not in `into` yet) go into
        `into` with provenance `code`; the number added is returned. Raises Unsupported before deriving
        anything when ids are too many to pack."""
        into = {} if into is None else into
        state = self.state
        head = self.rule.head.pred
        head_mirror = state.mirror(head)
        if len(known) != 1 or known[0] is not head_mirror.relation:
            raise Unsupported("known relations other than the head's")
        body = [state.mirror(step.pred) for step in self.steps]
        seed_columns = state.seed_columns(self.steps[0].pred, delta) if self.seed is not None else None
        interner = state.interner
        if self.consts is None:  # ids never change: the constants' are looked up once
            self.consts = {a: interner.one(a) for step in self.steps for _, (kind, a) in step.keys if kind == "const"}
            self.consts.update((a, interner.one(a)) for a in self.rule.head.args if type(a) is not Var)
        if len(interner) >= 1 << key_bits(max(self.widths, default=1)):
            raise Unsupported("too many distinct terms to pack an index key")
        self.body = body
        self.keyset = head_mirror.ensure_keyset(len(interner))
        self.into = into
        self.code = code
        found = state.pending_of(into)
        if into or (found is not None and found.settled):  # `into` holds tuples: compare tuples with them
            self.pending = None
        else:  # `into` is columns only: what this firing derives stays columns
            self.pending = state.pending_for(into, head, self.keyset)
        self.added = 0
        self.produced = 0
        self.room = self.budget.max_tuples - self.budget.derived
        try:
            if seed_columns is not None:
                self._first(seed_columns)
            else:
                self._join(0, {}, 1)
        finally:
            self.into = self.body = self.keyset = self.pending = None  # type: ignore[assignment]
        return self.added

    def _first(self, columns: list) -> None:
        """The seed literal over the delta's columns: constants and repeated variables filter it."""
        step = self.steps[0]
        mask = None
        for position, (_kind, value) in step.keys:
            test = columns[position] == self.consts[value]
            mask = test if mask is None else mask & test
        for a, b in step.equal:
            test = columns[a] == columns[b]
            mask = test if mask is None else mask & test
        env = {v: (columns[p] if mask is None else columns[p][mask]) for p, v in step.fresh if v in step.keep}
        rows = len(columns[0]) if mask is None else int(mask.sum())
        if rows:
            self._join(1, env, rows)

    def _probe(self, k: int, env: dict, rows: int):
        """Step k's matches for each row: (first position in the index's row numbers, count, row numbers), or
        row numbers None when every row of the relation matches."""
        step = self.steps[k]
        mirror = self.body[k]
        if not step.keys:
            return None, np.full(rows, mirror.n, dtype=I64), None
        bits = key_bits(len(step.keys))
        kind, table, order = mirror.index(step.positions, bits, len(self.state.interner))
        parts = [env[value] if kind_ == "var" else np.full(rows, self.consts[value], dtype=I64)
                 for _, (kind_, value) in step.keys]
        if kind == "dense":
            top = len(table) - 1  # ids interned after the index was built occur nowhere in it
            at = np.minimum(parts[0], top)
            lo = table[at]
            return lo, table[np.minimum(at + 1, top)] - lo, order
        probe = pack(parts, bits)
        lo = np.searchsorted(table, probe, "left")
        return lo, np.searchsorted(table, probe, "right") - lo, order

    def _join(self, k: int, env: dict, rows: int) -> None:
        if k == len(self.steps):
            self._sink(env, rows)
            return
        step = self.steps[k]
        lo, counts, order = self._probe(k, env, rows)
        introduces = [(p, v) for p, v in step.fresh if v in step.keep]
        if not introduces and not step.equal:
            # Only existence matters: a semi-join keeps the rows that have a match.
            has = counts > 0
            if not has.all():
                env = {v: c[has] for v, c in env.items() if v in step.keep}
                rows = int(has.sum())
            else:
                env = {v: c for v, c in env.items() if v in step.keep}
            if rows:
                self._join(k + 1, env, rows)
            return
        if order is not None and rows and int(counts.max()) <= 1:
            # At most one match a row (a chain's next edge, a tree's parent): the matching rows and their one match,
            # no expansion by counts.
            has = counts > 0
            if k:
                self.produced += int(np.count_nonzero(has))
                self.budget.rows(self.produced)
            else:
                self.budget.check()
            self._join_matches(k, env, has, order[lo[has]])
            return
        ends = np.cumsum(counts)
        start_row = 0
        while start_row < rows:
            # Rows whose matches fit in one chunk (at least one row, however many matches it has).
            base = int(ends[start_row - 1]) if start_row else 0
            if int(ends[-1]) - base <= CHUNK_ROWS:
                stop = rows
            else:
                stop = max(int(np.searchsorted(ends, base + CHUNK_ROWS, "right")), start_row + 1)
            chunk_counts = counts[start_row:stop]
            size = int(ends[stop - 1]) - base
            if k:  # as on the tuple path: the first literal's matches are tuples, not join rows
                self.produced += size
                self.budget.rows(self.produced)
            else:
                self.budget.check()
            if size:
                left = np.repeat(np.arange(start_row, stop, dtype=I64), chunk_counts)
                offsets = np.arange(size, dtype=I64) - np.repeat(
                    np.cumsum(chunk_counts) - chunk_counts, chunk_counts)
                if order is None:  # no bound argument: every row of the relation matches
                    right = offsets
                else:
                    right = order[np.repeat(lo[start_row:stop], chunk_counts) + offsets]
                self._join_matches(k, env, left, right)
            start_row = stop

    def _join_matches(self, k: int, env: dict, left, right) -> None:
        """Step k's joined rows: row `left[i]` of `env` (row numbers or a mask) with the step's row `right[i]`;
        repeated variables filter them, the step's fresh variables are read, and the next step takes them."""
        step = self.steps[k]
        columns = self.body[k].buffers
        out = {v: c[left] for v, c in env.items() if v in step.keep}
        keep = None
        for a, b in step.equal:
            test = columns[a][right] == columns[b][right]
            keep = test if keep is None else keep & test
        if keep is not None:
            right = right[keep]
            out = {v: c[keep] for v, c in out.items()}
        for p, v in step.fresh:
            if v in step.keep:
                out[v] = columns[p][right]
        if len(right):
            self._join(k + 1, out, len(right))

    def _sink(self, env: dict, rows: int) -> None:
        """One chunk's head tuples: keep those in neither the head relation nor `into`."""
        columns = [env[a] if type(a) is Var else np.full(rows, self.consts[a], dtype=I64) for a in self.rule.head.args]
        keys = self.keyset.key(columns)
        # Most candidates are known: drop them before sorting; the new tuples' columns are read back from their
        # distinct keys (a plain sort, no permutation to gather by).
        keys = distinct(keys[~self.keyset.contains(keys)])
        pending = self.pending
        if pending is not None and pending.count and len(keys):
            keys = keys[~pending.seen(keys)]  # a few merged levels, not every earlier chunk
        if not len(keys):
            self.budget.check()
            return
        columns = self.keyset.columns(keys, len(columns))
        if pending is not None:
            if len(keys) > self.room - self.added:
                self._over()  # the tuple budget ends inside this chunk, as on the tuple path: none of it is kept
            pending.add(columns, keys, self.code)
            self.added += len(keys)
            self.budget.found = self.added
            self.budget.check()
            return
        decode = self.state.interner.decode
        into, code, budget = self.into, self.code, self.budget
        for start in range(0, len(keys), SINK_SLICE):
            # Tuples are built and filed a slice at a time, with a budget check after each: one C call over a
            # million would hold the interpreter lock (and a cancellation) for a third of a second.
            tuples = zip(*[decode(c[start:start + SINK_SLICE]) for c in columns])
            # `into` holds tuples another path put there: compare tuples
            found = dict.fromkeys([t for t in tuples if t not in into], code)
            if len(found) > self.room - self.added:
                self._over()
            into.update(found)
            self.added += len(found)
            budget.found = self.added
            budget.check()

    def _over(self):
        budget = self.budget
        raise budget.exceeded("tuples", f"evaluation derived more than {budget.max_tuples} tuples",
                              budget.derived + self.room + 1)


def state_of(rels: Relations) -> ColumnarState:
    """The evaluation's columnar state; a finished evaluation's deferred rows are settled first (a maintained
    model's new rounds start from whole relations)."""
    state = rels.columnar
    if state is None or state.finished:
        if state is not None:
            state.settle()
        state = rels.columnar = ColumnarState(rels)
    return state


def copy_into(rels: Relations, source, head, into: dict, code: int) -> int:
    """`into` (empty, for a head with no tuples) gets every tuple of `source`'s relation as columns: a copy of
    the mirror's columns, no tuple built (a view's, or an aggregate's goal over a deferred relation)."""
    state = state_of(rels)
    columns = state.mirror(source).columns()
    keyset = state.mirror(head).ensure_keyset(len(state.interner))
    keys = keyset.key(columns)
    if type(keyset) is KeySet:
        keys = np.sort(keys)  # a KeySet's chunks are sorted (a dense one takes them in any order)
    found = state.pending_for(into, head, keyset)
    found.add(columns, keys, code)
    return len(keys)


def sorted_rows(rels: Relations, pred) -> "ColumnRows | None":
    """The tuples of a relation held only as deferred columns, in the standard order of terms, built straight from
    the columns (each distinct term ranked once, the rows ordered by one integer sort), so answers to a bulk goal
    are neither settled into the relation's dict nor sorted as Python tuples; the relation stays deferred, and the
    rows stay columns until read (`ColumnRows`). None when the relation is not wholly deferred columns (the
    caller settles and sorts)."""
    state = rels.columnar
    if state is None or not pred.arity:
        return None
    mirror = state.mirrors.get(pred)
    relation = rels.raw.get(pred)
    if mirror is None or mirror.relation is not relation or relation or mirror.settled or not mirror.n:
        return None
    interner = state.interner
    count = max(int(c.max()) for c in mirror.columns()) + 1  # the ids its rows use (a finished state keeps no count)
    terms = interner.terms[:count].tolist()
    kinds = set(map(type, terms))
    if kinds == {int} or kinds == {str}:  # Python's order is the standard order within each of these
        ranked = sorted(range(count), key=terms.__getitem__)
    else:
        from ..builtins import order_key

        keys = [order_key(t) for t in terms]
        ranked = sorted(range(count), key=keys.__getitem__)
    by_rank = np.array(ranked, dtype=I64)  # rank -> id
    rank = np.empty(count, dtype=I64)
    rank[by_rank] = np.arange(count, dtype=I64)
    columns = [rank[c] for c in mirror.columns()]
    width = len(columns)
    if count ** width < 1 << 62:
        # One key per row packing its ranks; rows are distinct, so are keys: sort the keys themselves (no
        # permutation to gather by) and unpack each column's ranks from them.
        key = columns[0].copy()
        for column in columns[1:]:
            key *= count
            key += column
        key.sort()
        ordered = []
        for i in range(width):
            ranks = key // count ** (width - 1 - i) if i < width - 1 else key.copy()
            if i:
                ranks %= count
            ordered.append(by_rank[ranks])
    else:
        order = np.lexsort(columns[::-1])
        ordered = [c[order] for c in mirror.columns()]
    return ColumnRows(ordered, interner.terms)


class ColumnRows(Sequence):
    """Answer rows kept as sorted id columns and turned into tuples only where they are read: a page of a bulk
    goal's answers decodes its own rows, not the 500,500 of a closure (nor frees them after); reading every row
    decodes a slice at a time."""

    __slots__ = ("_columns", "_terms")

    def __init__(self, columns: list, terms: np.ndarray) -> None:
        self._columns = columns
        self._terms = terms  # the interner's terms when the rows were made (ids never change meaning)

    def __len__(self) -> int:
        return len(self._columns[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(zip(*[self._terms[c[index]].tolist() for c in self._columns]))
        return tuple(self._terms[c[index]] for c in self._columns)

    def __iter__(self) -> Iterator[tuple]:
        for start in range(0, len(self), SINK_SLICE):
            yield from self[start:start + SINK_SLICE]
