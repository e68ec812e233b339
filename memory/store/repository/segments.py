"""Segments: the named memories facts and rules belong to, with their mounts and generations."""

from __future__ import annotations

from ...clock import utc_now
from .records import Segment, SegmentRecord

DEFAULT = "default"


class Segments:
    def __init__(self, conn) -> None:
        self._conn = conn

    def mounted(self, name: str) -> Segment | None:
        """The mounted segment of this name."""
        row = self._conn.execute(
            "SELECT id, name, mode, generation, scope FROM segments WHERE name = ? AND mounted = 1", (name,)
        ).fetchone()
        return None if row is None else Segment(*row)

    def all_mounted(self) -> list[Segment]:
        """Every mounted segment, by name."""
        return [Segment(*row) for row in self._conn.execute(
            "SELECT id, name, mode, generation, scope FROM segments WHERE mounted = 1 ORDER BY name")]

    def record(self, name: str) -> SegmentRecord | None:
        """The row of this name, mounted or not."""
        row = self._conn.execute("SELECT id, name, scope, mode, mounted FROM segments WHERE name = ?",
                                 (name,)).fetchone()
        return None if row is None else SegmentRecord(row[0], row[1], row[2], row[3], bool(row[4]))

    def records(self) -> list[SegmentRecord]:
        """Every row, the default segment first, then by name."""
        return [SegmentRecord(i, n, s, m, bool(u)) for i, n, s, m, u in self._conn.execute(
            "SELECT id, name, scope, mode, mounted FROM segments ORDER BY name = 'default' DESC, name")]

    def exists_besides_default(self, name: str) -> bool:
        return self._conn.execute("SELECT 1 FROM segments WHERE name = ? AND name != ?",
                                  (name, DEFAULT)).fetchone() is not None

    def names_besides_default(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM segments WHERE name != ? ORDER BY name",
                                                 (DEFAULT,))]

    def create(self, name: str, scope: str, mode: str, mounted: bool) -> int:
        """A new segment row (its name must be free); returns its id."""
        return self._conn.execute(
            "INSERT INTO segments (name, scope, mode, mounted, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
            (name, scope, mode, int(mounted), utc_now(self._conn.clock))).fetchall()[0][0]

    def mount(self, segment_id: int, mode: str) -> None:
        self._conn.execute("UPDATE segments SET mounted = 1, mode = ? WHERE id = ?", (mode, segment_id))

    def unmount(self, segment_id: int) -> None:
        self._conn.execute("UPDATE segments SET mounted = 0 WHERE id = ?", (segment_id,))

    def delete(self, segment_id: int) -> None:
        """Only for a global segment's mount record: a project segment's facts and rules would go with it."""
        self._conn.execute("DELETE FROM segments WHERE id = ?", (segment_id,))

    def bump_generation(self, segment_id: int) -> None:
        """Every change to a segment's facts or rules (or to what some caller sees of them) bumps it."""
        self._conn.execute("UPDATE segments SET generation = generation + 1 WHERE id = ?", (segment_id,))
