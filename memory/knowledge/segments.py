"""Memory segments as the knowledge tools see them: resolve a name, refuse writes to read-only ones."""

from __future__ import annotations

from ..errors import InvalidArguments, NotFound, ReadOnly
from ..store.repository import Segment, Transaction

DEFAULT = "default"

__all__ = ["DEFAULT", "Segment", "bump_generation", "resolve"]


def resolve(tx: Transaction, name: str | None, *, write: bool = False) -> Segment:
    name = DEFAULT if name is None or name == "" else name
    if not isinstance(name, str):
        raise InvalidArguments("'memory' must be a string", argument="memory")
    segment = tx.segments.mounted(name)
    if segment is None:
        raise NotFound(f"Memory not mounted: {name}", memory=name, plain=True)
    if write and segment.mode == "ro":
        raise ReadOnly("Memory is read-only", memory=name, plain=True)
    return segment


def bump_generation(tx: Transaction, segment: Segment) -> None:
    tx.segments.bump_generation(segment.id)
