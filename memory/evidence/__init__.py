"""Evidence memory: time-stamped hyperedge observations, recall, reasoning with confidence, proofs,
the answer gate and pattern detection."""

from .detect import detect
from .observations import ObservationRelations, Observations
from .reasoning import prove, reason
from .recall import recall
from .verify import verify

__all__ = ["ObservationRelations", "Observations", "detect", "prove", "reason", "recall", "verify"]
