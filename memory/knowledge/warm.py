"""Warm relations: each predicate's visible facts kept in memory from one call to the next.

A long-running process (an evaluation worker, a server evaluating in process) reads a predicate once; before
each use it asks the store's change feed (migrations 0008 and 0010) where the predicate stands. Unchanged: the
copy is used as it is, indexes and all. Only new rows since: those rows are read and added in place. Other
changes (a fact forgotten or renamed, a support moved): the feed names the facts they touched, and the copy
drops what they held and takes what the caller may see of them now (plus any new rows), in place, or in a new
copy while an evaluation is reading it. Only a predicate that
lost every fact, or a copy older than the feed reaches back, is read again. A write to one predicate leaves
every other copy alone, whichever process made it.

Relations computed from other tables (observations, for the default segment) have no feed of their own: they
are kept per segment generation, as before."""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass
from itertools import chain
from typing import Callable, Iterable

from ..datalog.budget import trim_heap
from ..datalog.compact import CompactRelation
from ..datalog.relations import StoredRelation
from ..store.repository import PredicateState, Transaction, Visibility
from .lru import SizedLRU
from .segments import Segment

# Tuples kept warm at most (all predicates together); the least recently used copies go first. A tuple of
# two small values with its dict slot and two indexes takes about 200 bytes.
WARM_TUPLES = 4_000_000


@dataclass(frozen=True)
class Input:
    """Where a stored predicate stood when an evaluation read it (see `memo`)."""

    state: PredicateState
    generation: int | None  # the segment's, for predicates computed relations join
    relation: StoredRelation | None = None  # what the evaluation read; None for an answer from the indexes
    position: int = 0  # how many changes that relation had logged then (`StoredRelation.changes_to`)


@dataclass
class _Copy:
    relation: StoredRelation
    state: PredicateState
    generation: int | None  # the segment generation it was read at, for predicates joined by computed relations
    number: int  # the change feed's number when it was last found current (`Facts.changes_since`)


class WarmRelations:
    def __init__(self, capacity: int = WARM_TUPLES) -> None:
        # (segment id, functor, arity, visibility) -> _Copy
        self._copies: SizedLRU[_Copy] = SizedLRU(capacity, lambda copy: len(copy.relation))

    def relation(self, tx: Transaction, segment: Segment, functor: str, arity: int, visibility: Visibility | None,
                 computed: Callable[[], list] | None = None, inputs: dict | None = None) -> StoredRelation:
        """The predicate's visible facts as of `tx`, from the warm copy when it is current. `computed`: the
        tuples other tables add to this predicate (kept per segment generation). `inputs`, when given, records
        where the predicate stood (see `memo`)."""
        key = (segment.id, functor, arity, visibility)
        state = tx.facts.state(segment.id, functor, arity)
        number = tx.facts.change_number()
        generation = segment.generation if computed is not None else None
        copy = self._copies.get(key)
        relation = None
        if copy is not None and copy.generation == generation and copy.state.vacated == state.vacated:
            relation = copy.relation
            if copy.state.reshaped != state.reshaped:  # more than new rows: the facts the feed names
                # (not into a copy holding computed tuples too: a fact gone may equal one of those)
                changed = None if computed is not None else tx.facts.changes_since(segment.id, functor, arity,
                                                                                    copy.number, visibility)
                relation = None if changed is None else relation.changed(changed[0], changed[1])
            if relation is not None and copy.state.newest < state.newest:
                relation = relation.grown(tx.facts.tuples(segment.id, functor, arity, visibility,
                                                          after=copy.state.newest))
        if relation is None:
            runs = tx.facts.tuple_runs(segment.id, functor, arity, visibility)
            if computed is not None:
                runs = chain(runs, [computed()])
            relation = _read_apart(runs)
        self._copies.put(key, _Copy(relation, state, generation, number))
        if inputs is not None:
            inputs[key] = Input(state, generation, relation, relation.position)
        return relation


def _read_apart(runs: Iterable[list]) -> StoredRelation:
    """`StoredRelation.read(runs)` in a thread of its own, and the C heap's free pages given back after a big one.

    Why a thread: reading a million rows leaves the C heap in holes (the terms kept, scattered among the freed
    rows). With glibc's allocator (the workers run with PYTHONMALLOC=malloc) every later allocation of the thread
    that read them searched those holes: a warm `path(a, X)` at 1M edges took 9-10 ms instead of 5. A new thread
    allocates from an arena of its own, so the holes stay there, away from the evaluating thread's heap."""
    result: list = []

    def read() -> None:
        try:
            result.append(StoredRelation.read(runs))
        except BaseException as exc:  # raised again in the caller's thread
            result.append(exc)
    thread = threading.Thread(target=contextvars.copy_context().run, args=(read,), name="relation-reader")
    thread.start()
    thread.join()
    found = result[0]
    if isinstance(found, BaseException):
        raise found
    if type(found.tuples) is CompactRelation:  # the runs read are freed: give their pages back
        trim_heap()
    return found

