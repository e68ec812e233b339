"""Observations and what is reasoned from them: remember, forget, recall, reason, prove, verify, detect."""

from __future__ import annotations

from ..evidence.observations import Observations
from ..store.repository import Repository
from .bases import KnowledgeBases


class EvidenceService:
    def __init__(self, bases: KnowledgeBases, observations: Observations, repository: Repository) -> None:
        self.bases = bases
        self.observations = observations
        self.repository = repository

    def remember(self, members: list, event_ts: int | None = None, weight: float = 1.0, formation: str = "") -> dict:
        return self.observations.remember(members, event_ts, weight, formation)

    def remember_observations(self, observations: list[dict]) -> dict:
        """Many observations ({members, event_ts?, weight?, formation?}) in one transaction."""
        self.bases.require_for("remember_observations")
        return self.observations.remember_many(observations)

    def forget_observation(self, hedge_tags: list[str], reason: str | None = None) -> dict:
        return self.observations.forget(hedge_tags, reason)

    def recall(self, query: str = "", top_k: int | None = None, now: int | None = None) -> dict:
        from ..evidence.recall import recall  # the evidence code loads with its first use

        with self.repository.read() as tx:
            return recall(tx, query, top_k, now)

    def reason(self, query: str = "", top_k: int | None = None, memory: str | None = None,
               now: int | None = None) -> dict:
        from ..evidence.reasoning import reason

        return reason(self.bases.serving(memory), query, top_k, memory, now)

    def prove(self, query: str = "", goal_pred: str | None = None, top_k: int | None = None,
              memory: str | None = None, now: int | None = None) -> dict:
        from ..evidence.reasoning import prove

        return prove(self.bases.serving(memory), query, goal_pred, top_k, memory, now)

    def verify(self, answer: str, query: str = "", require_proof: bool = False, goal_pred: str | None = None,
               top_k: int | None = None, memory: str | None = None, now: int | None = None) -> dict:
        from ..evidence.verify import verify

        return verify(self.bases.serving(memory), answer, query, require_proof, goal_pred, top_k, memory, now)

    def detect(self, full_scan: bool = False, window: str | None = None, sensitivity: float | None = None,
               now: int | None = None) -> dict:
        from ..evidence.detect import detect

        with self.repository.read() as tx:
            return detect(tx, full_scan, window, sensitivity, now)
