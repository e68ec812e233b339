"""Evidence memory: time-stamped hyperedge observations, recall, reasoning with confidence, proofs,
the answer gate and pattern detection.

The names below load on first use (PEP 562): the knowledge base needs only the observations module, and a
one-shot query or the server's start-up need none of recall, reasoning, verification or detection. The
functions named like their modules (`detect`, `recall`, `verify`) are imported from those modules
(`from memory.evidence.recall import recall`): once a module is loaded, the package's attribute of that
name is the module."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .observations import ObservationRelations, Observations
    from .reasoning import prove, reason

__all__ = ["ObservationRelations", "Observations", "prove", "reason"]

_LAZY = {"ObservationRelations": ".observations", "Observations": ".observations", "prove": ".reasoning",
         "reason": ".reasoning"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # later lookups find it without coming back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
