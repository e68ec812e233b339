"""Answers kept: a query asked again is answered from its last answers while nothing it read has changed, and
brought up to date from its kept evaluation when something has.

An entry records, for every stored predicate the evaluation read, where that predicate stood in the change
feed (`warm.Input`: its `PredicateState`, the segment generation for predicates computed relations join, and
the relation read); its answers stand while every one of them still stands there and the program is the same
object (rebuilt only when the rules change). Otherwise the entry's evaluation, when it has one, is taken out
(so that one caller at a time changes it), told what changed, and put back with its new answers
(`KnowledgeBase.query_terms`); an entry without one is evaluated again, over the warm relations."""

from __future__ import annotations

from dataclasses import dataclass

from ..datalog import AllAnswers, Evaluation
from ..store.repository import Transaction
from .lru import SizedLRU

# Tuples kept at most (answers and evaluations' own relations, all entries together); the least recently used
# go first.
MEMO_TUPLES = 1_000_000

Inputs = dict  # (segment id, functor, arity, visibility) -> warm.Input; None -> None (an input nobody follows)


@dataclass
class Entry:
    program: object
    inputs: Inputs
    answers: AllAnswers
    evaluation: Evaluation | None = None

    def size(self) -> int:
        return self.evaluation.size() if self.evaluation is not None else len(self.answers.rows)


class AnswerMemo:
    def __init__(self, capacity: int = MEMO_TUPLES) -> None:
        self.capacity = capacity
        self._entries: SizedLRU[Entry] = SizedLRU(capacity, Entry.size)

    def get(self, key: tuple, program: object, tx: Transaction, generation: int) -> AllAnswers | None:
        """The kept answers for `key` if the program is the same and every input still stands where it did
        (read in `tx`); `generation`: the queried segment's, for inputs that computed relations join."""
        entry = self._entries.get(key)
        if entry is None or entry.program is not program:
            return None
        for (segment_id, functor, arity, _), mark in entry.inputs.items():
            if (mark.generation is not None and mark.generation != generation) \
                    or tx.facts.state(segment_id, functor, arity) != mark.state:
                return None
        return entry.answers

    def take(self, key: tuple, program: object) -> Entry | None:
        """The entry for `key` with an evaluation of the same program, taken out to be brought up to date (put
        it back with `put`); None when there is none."""
        entry = self._entries.pop(key)
        if entry is None or entry.evaluation is None:
            return None
        if entry.program is not program:
            entry.evaluation.release()
            return None
        return entry

    def put(self, key: tuple, program: object, inputs: Inputs, answers: AllAnswers,
            evaluation: Evaluation | None = None) -> bool:
        """Keep answers (and the evaluation that gave them) whose every input was recorded: an input this cannot
        follow, such as another mounted segment, marks the inputs with a None key, and those answers are not
        kept. An evaluation not kept (too big, or its answers not kept) is released. Whether the answers were
        kept (if not, they are the caller's to release)."""
        limit = self.capacity // 4
        if evaluation is not None and (None in inputs or len(answers.rows) > limit or evaluation.size() > limit):
            evaluation.release()
            evaluation = None
        if None in inputs or len(answers.rows) > limit:
            return False
        self._entries.put(key, Entry(program, inputs, answers, evaluation))
        return True
