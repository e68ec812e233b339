"""Truth maintenance: assumptions, what rests on them, and retracting them."""

from __future__ import annotations

from ..knowledge import beliefs
from .bases import KnowledgeBases


class BeliefService:
    def __init__(self, bases: KnowledgeBases) -> None:
        self.bases = bases

    def assume_fact(self, fact: str, assumption: str, memory: str | None = None) -> dict:
        return beliefs.assume_fact(self.bases.serving(memory, write=True), fact, assumption, memory)

    def get_belief_status(self, fact: str, memory: str | None = None) -> dict:
        return beliefs.belief_status(self.bases.serving(memory), fact, memory)

    def get_justification(self, assumption: str, memory: str | None = None) -> dict:
        return beliefs.justification(self.bases.serving(memory), assumption, memory)

    def list_assumptions(self, memory: str | None = None) -> dict:
        return beliefs.assumptions(self.bases.serving(memory), memory)

    def retract_assumption(self, assumption: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumption(self.bases.serving(memory, write=True), assumption, memory)

    def retract_assumptions(self, pattern: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumptions(self.bases.serving(memory, write=True), pattern, memory)
