"""Named snapshots of a segment: its Prolog text, with counts."""

from __future__ import annotations

from ...clock import utc_now
from .records import SnapshotRow


class Snapshots:
    def __init__(self, conn) -> None:
        self._conn = conn

    def exists(self, segment_id: int, name: str) -> bool:
        return self._conn.execute("SELECT 1 FROM snapshots WHERE segment_id = ? AND name = ?",
                                  (segment_id, name)).fetchone() is not None

    def save(self, segment_id: int, name: str, facts: int, rules: int, assumptions: int, content: str) -> None:
        """Store (or replace) a snapshot."""
        self._conn.execute(
            "INSERT INTO snapshots (segment_id, name, created_at, facts, rules, assumptions, content) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (segment_id, name) DO UPDATE SET created_at = excluded.created_at, "
            "facts = excluded.facts, rules = excluded.rules, assumptions = excluded.assumptions, "
            "content = excluded.content",
            (segment_id, name, utc_now(self._conn.clock), facts, rules, assumptions, content))

    def content(self, segment_id: int, name: str) -> str | None:
        row = self._conn.execute("SELECT content FROM snapshots WHERE segment_id = ? AND name = ?",
                                 (segment_id, name)).fetchone()
        return None if row is None else row[0]

    def of(self, segment_id: int) -> list[SnapshotRow]:
        """A segment's snapshots, oldest first."""
        return [SnapshotRow(*r) for r in self._conn.execute(
            "SELECT name, created_at, facts, rules, assumptions FROM snapshots WHERE segment_id = ? ORDER BY id",
            (segment_id,))]

    def latest(self) -> tuple[str, str, str] | None:
        """(name, segment name, created_at) of the newest snapshot of any segment."""
        return self._conn.execute("SELECT s.name, g.name, s.created_at FROM snapshots AS s JOIN segments AS g "
                                  "ON g.id = s.segment_id ORDER BY s.id DESC LIMIT 1").fetchone()
