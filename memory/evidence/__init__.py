"""Evidence memory: time-stamped hyperedge observations, recall, reasoning with confidence, proofs,
the answer gate and pattern detection.

The names below load on first use (PEP 562): the knowledge base needs only the observations module, and a
one-shot query or the server's start-up need none of recall, reasoning, verification or detection. The
functions named like their modules (`detect`, `recall`, `verify`) are imported from those modules
(`from memory.evidence.recall import recall`): once a module is loaded, the package's attribute of that
name is the module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .observations import ObservationRelations, Observations
    from .reasoning import prove, reason

__all__ = ["ObservationRelations", "Observations", "prove", "reason"]

_LAZY = {"ObservationRelations": ".observations", "Observations": ".observations", "prove": ".reasoning",
         "reason": ".reasoning"}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
