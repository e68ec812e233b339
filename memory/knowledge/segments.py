"""Memory segments as the knowledge tools see them: resolve a name, refuse writes to read-only ones."""

from __future__ import annotations

from dataclasses import dataclass

import apsw

from ..errors import InvalidArguments, NotFound, ReadOnly

DEFAULT = "default"


@dataclass(frozen=True)
class Segment:
    id: int
    name: str
    mode: str
    generation: int
    scope: str = "project"  # 'global': a mount record here; the data lives in the global database


def resolve(conn: apsw.Connection, name: str | None, *, write: bool = False) -> Segment:
    name = DEFAULT if name is None or name == "" else name
    if not isinstance(name, str):
        raise InvalidArguments("'memory' must be a string", argument="memory")
    row = conn.execute(
        "SELECT id, name, mode, generation, scope FROM segments WHERE name = ? AND mounted = 1", (name,)
    ).fetchone()
    if row is None:
        raise NotFound(f"Memory not mounted: {name}", memory=name, plain=True)
    segment = Segment(*row)
    if write and segment.mode == "ro":
        raise ReadOnly("Memory is read-only", memory=name, plain=True)
    return segment


def bump_generation(conn: apsw.Connection, segment: Segment) -> None:
    conn.execute("UPDATE segments SET generation = generation + 1 WHERE id = ?", (segment.id,))
