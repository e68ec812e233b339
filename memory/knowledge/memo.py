"""Answers kept: a query asked again while nothing it read has changed is answered from its last answers.

An entry records, for every stored predicate the evaluation read, where that predicate stood in the change
feed (`PredicateState`, plus the segment generation for predicates computed relations join); it is used only
while every one of them still stands there and the program is the same object (rebuilt only when the rules
change). Anything else evaluates again, over the warm relations."""

from __future__ import annotations

from dataclasses import dataclass

from ..datalog import AllAnswers
from ..store.repository import Transaction
from .lru import SizedLRU

# Answer tuples kept at most (all entries together); the least recently used go first.
MEMO_TUPLES = 1_000_000

Inputs = dict  # (segment id, functor, arity, visibility) -> (PredicateState, generation or None); None -> None


@dataclass
class _Entry:
    program: object
    inputs: Inputs
    answers: AllAnswers


class AnswerMemo:
    def __init__(self, capacity: int = MEMO_TUPLES) -> None:
        self.capacity = capacity
        self._entries = SizedLRU(capacity, lambda entry: len(entry.answers.rows))

    def get(self, key: tuple, program: object, tx: Transaction, generation: int) -> AllAnswers | None:
        """The kept answers for `key` if the program is the same and every input still stands where it did
        (read in `tx`); `generation`: the queried segment's, for inputs that computed relations join."""
        entry = self._entries.get(key)
        if entry is None or entry.program is not program:
            return None
        for (segment_id, functor, arity, _), (state, joined) in entry.inputs.items():
            if (joined is not None and joined != generation) or tx.facts.state(segment_id, functor, arity) != state:
                return None
        return entry.answers

    def put(self, key: tuple, program: object, inputs: Inputs, answers: AllAnswers) -> bool:
        """Keep answers whose every input was recorded (an input this cannot follow, such as another mounted
        segment, marks the inputs with a None key: those answers are not kept); whether they were kept."""
        if None in inputs or len(answers.rows) > self.capacity // 4:
            return False
        self._entries.put(key, _Entry(program, inputs, answers))
        return True
