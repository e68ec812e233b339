"""In-memory relations (tuple -> provenance code) with lazily built hash indexes."""

from __future__ import annotations

import threading
import weakref
from itertools import chain, islice
from operator import itemgetter
from typing import Callable, Iterable, Iterator

from . import compact
from .compact import CompactIndexes, CompactRelation

EMPTY: tuple = ()

# Provenance code of a tuple: (stamp << RULE_BITS) | rule index. Base facts are 0.
# A tuple's stamp is strictly greater than the stamps of the premises of its first
# derivation, which is what makes proofs finite and rebuildable.
RULE_BITS = 20
RULE_MASK = (1 << RULE_BITS) - 1


def key_function(columns: tuple) -> Callable:
    """Key of a tuple on some columns: the value itself for one column, a tuple for several."""
    if len(columns) == 1:
        return itemgetter(columns[0])
    if not columns:
        return lambda t: ()
    return itemgetter(*columns)


def build_index(tuples: Iterable[tuple], columns: tuple, budget=None) -> dict:
    """A hash index: key on `columns` (see `key_function`) -> the tuples with that key."""
    idx: dict = {}
    _file(idx, key_function(columns), tuples, budget)
    return idx


def index_key(values: tuple):
    """The key under which `build_index` files a tuple with these values in the key columns."""
    return values[0] if len(values) == 1 else values


class StoredRelation:
    """Base tuples kept from one evaluation to the next, with the hash indexes evaluations built over them.

    An evaluation given one reads it in place (no copy) and files the indexes it builds here, so the next
    evaluation finds them built; it never changes it (a predicate that rules also derive into gets its own
    copy). The owner changes it with `grown` and `changed` as facts come and go: in place, or in a copy while an
    evaluation is reading it. Each change is logged, so a model kept between calls that read it catches up
    through `changes_to`.

    A relation of at least `compact.COMPACT_TUPLES` tuples is kept compact (`CompactRelation`: id columns with
    array indexes, about a quarter of the dict's memory), a smaller one as a dict; either reads the same."""

    __slots__ = ("tuples", "indexes", "users", "log", "logged_before", "logged", "successor")

    def __init__(self, tuples: Iterable[tuple] = EMPTY) -> None:
        self.tuples: dict | CompactRelation
        self.indexes: dict | CompactIndexes  # columns -> index, as `Relations.index` builds them
        if type(tuples) is not list:
            tuples = list(tuples)
        if len(tuples) >= compact.COMPACT_TUPLES and tuples and tuples[0]:
            self.tuples = CompactRelation.of([tuples], len(tuples[0]))
            self.indexes = CompactIndexes(self.tuples)
        else:
            self.tuples = dict.fromkeys(tuples, 0)
            self.indexes = {}
        self.users = 0  # evaluations reading it now (in this process): it is not changed under them
        # The changes made in place, in order, as (tuples lost, tuples gained); the first `logged_before` are
        # forgotten (`logged` tuples are remembered now). `successor`: the copy that took its place, with the
        # change that made it.
        self.log: list = []
        self.logged_before = 0
        self.logged = 0
        self.successor: tuple | None = None

    @classmethod
    def read(cls, runs: Iterable[list]) -> "StoredRelation":
        """A relation of the tuples in `runs` (lists of tuples, as the store reads them a run at a time): a big
        one is compacted a run at a time, so it is never wholly Python tuples (see `compact`)."""
        held: list = []
        size = 0
        rest = iter(runs)
        for run in rest:
            held.append(run)
            size += len(run)
            if size >= compact.COMPACT_TUPLES:
                break
        else:
            return cls(list(chain.from_iterable(held)))
        arity = len(held[0][0]) if held[0] else len(next(r for r in held if r)[0])
        if not arity:
            return cls(list(chain(chain.from_iterable(held), chain.from_iterable(rest))))

        def each() -> Iterator[list]:
            while held:
                yield held.pop(0)  # (dropped as soon as read)
            yield from rest
        relation = cls()
        relation.tuples = CompactRelation.of(each(), arity)
        relation.indexes = CompactIndexes(relation.tuples)
        return relation

    def __len__(self) -> int:
        return len(self.tuples)

    @property
    def position(self) -> int:
        """How many changes it has logged so far (see `changes_to`)."""
        return self.logged_before + len(self.log)

    def grown(self, new: Iterable[tuple]) -> "StoredRelation":
        """This relation with the tuples `new` added, its indexes kept current (see `changed`)."""
        return self.changed((), new)

    def changed(self, gone: Iterable[tuple], new: Iterable[tuple]) -> "StoredRelation":
        """This relation without the tuples `gone` and with the tuples `new`, its indexes kept current: itself,
        or a copy when an evaluation is reading it now (a bucket that changes is then a new list, so the one
        read stays as it was), or a compact copy when a dict grows to `compact.COMPACT_TUPLES` tuples."""
        new = dict.fromkeys(new)
        gone = frozenset(t for t in gone if t in self.tuples and t not in new)
        fresh = [t for t in new if t not in self.tuples]
        if not gone and not fresh:
            return self
        if type(self.tuples) is dict and len(self.tuples) - len(gone) + len(fresh) >= compact.COMPACT_TUPLES:
            # Grown big: a compact copy takes its place (a model holding the dict catches up through it).
            compacted = StoredRelation([t for t in self.tuples if t not in gone] + fresh)
            self.successor = (compacted, gone, fresh)
            return compacted
        with _PINS:  # an evaluation pins it (Relations.load) before or after this, never during
            if not self.users:
                self._change(gone, fresh)
                self.log.append((gone, fresh))
                self.logged += len(gone) + len(fresh)
                if self.logged > max(LOGGED_KEPT, len(self.tuples) // 2):  # a model this far behind starts over
                    self.logged_before += len(self.log)
                    self.log, self.logged = [], 0
                return self
        copy = StoredRelation()
        if type(self.tuples) is CompactRelation:
            copy.tuples = self.tuples.fork()  # the frozen columns and their indexes shared
            copy.indexes = CompactIndexes(copy.tuples)
        else:
            copy.tuples = self.tuples.copy()  # (dict() of a dict with deleted slots takes CPython's slow path)
            # (a list first: an evaluation reading this one may file a new index meanwhile)
            copy.indexes = {columns: idx.copy() for columns, idx in list(self.indexes.items())}
        copy._change(gone, fresh)
        self.successor = (copy, gone, fresh)
        return copy

    def changes_to(self, later: "StoredRelation", position: int) -> tuple[list, set] | None:
        """The tuples gained and lost from this relation, as it was at `position`, to `later` (gained ones are in
        `later`, lost ones are not); None when that cannot be told (`later` did not come from it, or the changes
        are forgotten)."""
        gained: list = []
        lost: set = set()
        step = self
        while True:
            if position < step.logged_before:
                return None
            for gone, fresh in step.log[position - step.logged_before:]:
                lost |= gone
                gained += fresh
            if step is later:  # a tuple that came and went again, or went and came back, is no change
                return [t for t in gained if t in later.tuples], {t for t in lost if t not in later.tuples}
            if step.successor is None:
                return None
            step, gone, fresh = step.successor
            lost |= gone
            gained += fresh
            position = 0

    def _change(self, gone: frozenset, fresh: list) -> None:
        if type(self.tuples) is CompactRelation:
            self.tuples.change(gone, fresh)  # its indexes read the relation itself
            return
        tuples, indexes = self.tuples, self.indexes
        assert type(tuples) is dict and type(indexes) is dict
        for t in gone:
            del tuples[t]
        tuples.update(dict.fromkeys(fresh, 0))
        for columns, idx in indexes.items():
            refile(idx, columns, gone, fresh)


# Reentrant: a finalizer that unpins (`_unpin`) can run inside a change made under it, when a collection starts there.
_PINS = threading.RLock()
LOGGED_KEPT = 100_000  # tuples of changes made in place remembered at least (see `StoredRelation.changes_to`)


def _unpin(pinned: list) -> None:
    with _PINS:
        for stored in pinned:
            stored.users -= 1
        pinned.clear()


class Relations:
    """An evaluation's relations: pred -> dict (tuple -> provenance code), with their hash indexes.

    The columnar evaluator (`columnar`) may hold tuples of a relation, or of a round's new tuples, as integer
    columns it has not turned into Python tuples yet ("deferred"): `raw` is the dicts as they are, without those;
    `rel` and `settled` turn a relation's deferred tuples into tuples first, so every reader outside the engine
    sees whole relations, and `size` and `count` count them without turning them into anything."""

    def __init__(self) -> None:
        self.raw: dict = {}
        self.indexes: dict = {}
        self.shared: set = set()  # predicates whose relation and indexes are a StoredRelation's: read only
        self.sources: dict = {}  # those predicates' StoredRelations
        # The columnar evaluator's state (columnar.arrays.ColumnarState): its mirrors while evaluating, and after it
        # the columns of the tuples it deferred.
        self.columnar = None
        # The StoredRelations read in place: their owner does not grow them while anything can still read them
        # through these relations (until `release` or `let_go`, or until this object is gone).
        self._pinned: list = []
        self._unpin = weakref.finalize(self, _unpin, self._pinned)

    def let_go(self) -> None:
        """Stop pinning the stored relations read in place (a model kept between uses: their owner may grow them
        in place meanwhile); `hold` pins them again before the model is read or changed. The columnar mirrors
        go too (the columns of deferred tuples stay: they are the relations' own)."""
        if self.columnar is not None:
            self.columnar = self.columnar.finish()
        _unpin(self._pinned)

    def hold(self) -> None:
        with _PINS:
            if not self._pinned:
                for stored in self.sources.values():
                    stored.users += 1
                    self._pinned.append(stored)

    def replace(self, pred, stored: "StoredRelation") -> None:
        """Read `stored` in place of the predicate's stored relation (a held model whose input was read again)."""
        with _PINS:
            old = self.sources.get(pred)
            if old is not None and old in self._pinned:
                old.users -= 1
                self._pinned.remove(old)
            stored.users += 1
            self._pinned.append(stored)
        self.sources[pred] = stored
        self.shared.add(pred)
        self.raw[pred] = stored.tuples
        self.indexes[pred] = stored.indexes

    def remove(self, pred, gone) -> None:
        """Drop tuples from a relation of this evaluation's own, and from its indexes."""
        relation = self.writable(pred)
        if self.columnar is not None:
            self.columnar.settle(pred)
            self.columnar.forget(pred)  # its mirror follows a relation that only grows
        for t in gone:
            relation.pop(t, None)
        for columns, idx in self.indexes.get(pred, {}).items():
            refile(idx, columns, gone, ())

    @property
    def rel(self) -> dict:
        """Every relation, whole (deferred tuples turned into tuples)."""
        if self.columnar is not None:
            self.columnar.settle()
        return self.raw

    @rel.setter
    def rel(self, value: dict) -> None:
        self.raw = value

    def settle(self, pred=None, budget=None) -> None:
        """Turn the deferred tuples of a pred's relation (of every relation, without `pred`) into tuples now,
        within `budget` (a reader that comes later then finds them whole)."""
        if self.columnar is not None:
            self.columnar.settle(pred, budget)

    def settled(self, pred) -> dict:
        """The pred's relation, whole."""
        if self.columnar is not None:
            self.columnar.settle(pred)
        return self.get(pred)

    def find(self, pred) -> dict | None:
        """The pred's relation, whole, or None when there is none."""
        if self.columnar is not None:
            self.columnar.settle(pred)
        return self.raw.get(pred)

    def size(self, pred) -> int:
        """How many tuples the pred's relation holds, deferred ones included."""
        relation = self.raw.get(pred)
        size = 0 if relation is None else len(relation)
        return size + self.columnar.deferred(pred) if self.columnar is not None else size

    def count(self, tuples: dict) -> int:
        """How many tuples a relation or a round's new tuples hold, deferred ones included."""
        return len(tuples) + self.columnar.unsettled(tuples) if self.columnar is not None else len(tuples)

    def settle_set(self, tuples: dict) -> dict:
        """A round's set or delta with the tuples it holds as columns put into it (for a reader of the dict)."""
        if self.columnar is not None:
            self.columnar.settle_into(tuples)
        return tuples

    def get(self, pred) -> dict:
        """The pred's dict as it is (without deferred tuples: for the engine, which settles what it reads)."""
        relation = self.raw.get(pred)
        if relation is None:
            relation = self.raw[pred] = {}
        return relation

    def writable(self, pred) -> dict:
        """The relation of a predicate that this evaluation adds to: its own copy of a shared one."""
        if pred in self.shared:
            self.shared.discard(pred)
            self.raw[pred] = self.raw[pred].copy()
            self.indexes[pred] = {}
            stored = self.sources.pop(pred)
            with _PINS:  # no longer read in place
                if stored in self._pinned:
                    stored.users -= 1
                    self._pinned.remove(stored)
        return self.get(pred)

    def load(self, pred, tuples) -> None:
        """Base tuples (provenance code 0); tuples already present keep their code. A StoredRelation is used in
        place, indexes and all."""
        if type(tuples) is StoredRelation:
            if pred not in self.raw:
                with _PINS:
                    tuples.users += 1
                    self._pinned.append(tuples)
                self.raw[pred] = tuples.tuples
                self.indexes[pred] = tuples.indexes
                self.shared.add(pred)
                self.sources[pred] = tuples
                return
            tuples = tuples.tuples.keys()
        relation = self.writable(pred)
        if relation:
            for t in tuples:
                relation.setdefault(t, 0)
        else:
            relation.update(dict.fromkeys(tuples, 0))

    def index(self, pred, columns: tuple) -> dict:
        if self.columnar is not None:
            self.columnar.settle(pred)
        per_pred = self.indexes.get(pred)
        if per_pred is None:
            per_pred = self.indexes[pred] = {}
        idx = per_pred.get(columns)
        if idx is None:
            idx = per_pred[columns] = build_index(self.get(pred), columns)
        return idx

    def release(self) -> None:
        """Empty every relation and index of this evaluation's own gradually (see `release`); shared ones stay
        with their owner."""
        own = [pred for pred in self.raw if pred not in self.shared]
        rel, indexes = {p: self.raw[p] for p in own}, {p: self.indexes[p] for p in own if p in self.indexes}
        self.raw.clear()
        self.indexes.clear()
        self.shared.clear()
        self.sources.clear()
        self.columnar = None
        self._unpin()
        release(indexes, rel)

    def add(self, pred, new: dict, budget=None) -> None:
        """Merge newly derived tuples (already known to be new) and keep the indexes current. Tuples the columnar
        evaluator holds as columns stay columns (deferred)."""
        if self.columnar is not None:
            if self.columnar.defer(pred, new):
                return
            self.columnar.settle(pred, budget)  # a dict keeps its tuples in the order they came
        if not new:
            return
        relation = self.writable(pred)
        if len(new) <= RELEASE_SLICE or not relation:  # into an empty dict, update is a copy of its table
            relation.update(new)
        else:  # one big update would hold the interpreter lock throughout
            items = iter(new.items())
            while chunk := list(islice(items, RELEASE_SLICE)):
                relation.update(chunk)
                if budget is not None:
                    budget.check()
        for columns, idx in self.indexes.get(pred, {}).items():
            _file(idx, key_function(columns), new, budget)


def _file(idx: dict, key: Callable, tuples: Iterable[tuple], budget=None) -> None:
    """Add tuples to a hash index under their keys (checking the budget now and then: many
    tuples take a while)."""
    for n, t in enumerate(tuples):
        k = key(t)
        bucket = idx.get(k)
        if bucket is None:
            idx[k] = [t]
        else:
            bucket.append(t)
        if budget is not None and not n & 0x7FFF:
            budget.check()


def refile(idx: dict, columns: tuple, gone, fresh) -> dict:
    """An index on `columns` without the tuples `gone` and with the tuples `fresh`; every bucket that changes is
    replaced by a new list (never changed in place: a copied index may share its lists with the original)."""
    key = key_function(columns)
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
    return idx


RELEASE_SLICE = 16384


def release(*containers) -> None:
    """Empty containers (and the dicts and sets inside them), freeing their contents a slice at a time.

    Dropping a container of millions of tuples frees them all in one C call that holds the
    interpreter lock throughout, and so stalls every other thread (the server's protocol loop).
    Here the contents move to lists first (cheap: nothing is freed), the containers are cleared,
    and the lists are cut from the end a slice at a time, letting other threads in between.
    Only for containers nothing else still needs."""
    pending = [c for c in containers if c]
    doomed: list = []
    while pending:
        container = pending.pop()
        if type(container) is dict:
            keys, values = list(container), list(container.values())
            container.clear()
            doomed += (keys, values)
            if type(values[0]) in (dict, set):  # nested containers (relations of a model, indexes)
                pending += [v for v in values if v and type(v) in (dict, set)]
        elif type(container) is set:
            items = list(container)
            container.clear()
            doomed.append(items)
        elif type(container) is list:
            doomed.append(container)
    for items in doomed:
        while items:
            del items[-RELEASE_SLICE:]
