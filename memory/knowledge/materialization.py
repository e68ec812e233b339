"""Materialization: every derived conclusion written with its rule, stamp and premises."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..errors import Conflict

from .proof_edges import model_conclusions, write_conclusions
from .segments import resolve

from .core import KnowledgeCore

MATERIALIZE_ATTEMPTS = 3


@dataclass
class Materialization:
    memory: str
    generation: int
    tuples: int
    seconds: float
    proof_edges: int = 0


class Materializer(KnowledgeCore):
    """Writing the whole model."""

    def materialize(self, memory: str | None = None) -> Materialization:
        """Write every derived conclusion with its rule and stamp, and the premises of its derivation
        (proof_edges), under the current generation.

        The model and the premises are computed outside any transaction and written in one short one, so
        other writers (in this process or another) wait only for the write; if the memory changed meanwhile,
        the evaluation is redone (a few times at most) so what is written matches the generation it names."""
        started = time.perf_counter()
        budget = self.new_budget()
        for _ in range(MATERIALIZE_ATTEMPTS):
            with self.repository.read() as tx:
                segment = resolve(tx, memory)
                program = self.program(tx, segment)
            model = self.evaluate_all(program, self.detached_loader(segment), budget)
            conclusions = model_conclusions(program, model, budget, self._computed_preds(segment))
            with self.repository.write() as tx:
                if resolve(tx, memory).generation != segment.generation:
                    continue
                tx.derived.clear(segment.id)
                edges = write_conclusions(tx, segment, conclusions, budget)
                seconds = time.perf_counter() - started
                tx.derived.record_materialization(segment.id, segment.generation, len(conclusions), seconds)
                tx.audit.record(self.actor, "materialize", segment.name,
                                {"generation": segment.generation, "tuples": len(conclusions), "proof_edges": edges})
            return Materialization(segment.name, segment.generation, len(conclusions), seconds, edges)
        raise Conflict(f"memory '{segment.name}' kept changing while it was materialized; try again",
                       memory=segment.name)
