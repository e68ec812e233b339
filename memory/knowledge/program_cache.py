"""Each segment's program: built from its stored rules, analyzed, and kept while those rules stay the same."""

from __future__ import annotations

from ..datalog import Normalizer, Program, analyze
from ..store.repository import Transaction
from ..terms import parse_term
from .segments import Segment


def build_program(tx: Transaction, segment: Segment) -> Program:
    """A new program of the segment's stored rules, not analyzed yet: for a caller that adds clauses to it
    and then checks (analyzes) the whole."""
    program = Program()
    normalizer = Normalizer(program)
    for rule_id, text in tx.rules.texts(segment.id):
        normalizer.add_clause(parse_term(text), text, rule_id)
    return program


class ProgramCache:
    """segment id -> (generation, rule ids and texts, analyzed Program)."""

    def __init__(self) -> None:
        self._programs: dict[int, tuple[int, list[tuple[int, str]], Program]] = {}

    def get(self, tx: Transaction, segment: Segment) -> Program:
        """The segment's analyzed program (callers must not change it): the same object while its rules stay the
        same, whatever else changes (kept answers are tied to it)."""
        cached = self._programs.get(segment.id)
        if cached and cached[0] == segment.generation:
            return cached[2]
        texts = tx.rules.texts(segment.id)
        if cached and cached[1] == texts:
            self._programs[segment.id] = (segment.generation, texts, cached[2])
            return cached[2]
        program = build_program(tx, segment)
        analyze(program)
        self._programs[segment.id] = (segment.generation, texts, program)
        return program
