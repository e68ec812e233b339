"""Memory vectors (migration 0015): one sentence embedding per kept memory, by the model that made it."""

from __future__ import annotations

from typing import Iterable


class Vectors:
    def __init__(self, conn) -> None:
        self._conn = conn

    def missing(self, model: str, limit: int, after: int = 0) -> list[tuple[int, str]]:
        """(seq, text) of the newest memories newer than seq `after` whose text is kept and that have no vector
        by `model`."""
        return self._conn.execute(
            "SELECT m.seq, s.text FROM source_memories AS m JOIN sources AS s ON s.id = m.source_id "
            "WHERE m.seq > ? AND s.text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM memory_vectors AS v "
            "WHERE v.seq = m.seq AND v.model = ?) ORDER BY m.seq DESC LIMIT ?", (after, model, limit)).fetchall()

    def put(self, model: str, rows: Iterable[tuple[int, bytes]]) -> None:
        """Store (seq, vector) rows, replacing a vector another model made. A memory erased since its text
        was read is skipped: it has no text to stand for."""
        for seq, vector in rows:
            self._conn.execute(
                "INSERT INTO memory_vectors (seq, model, vector) SELECT m.seq, ?, ? FROM source_memories AS m "
                "JOIN sources AS s ON s.id = m.source_id WHERE m.seq = ? AND s.text IS NOT NULL "
                "ON CONFLICT (seq) DO UPDATE SET model = excluded.model, vector = excluded.vector",
                (model, vector, seq))

    def shape(self, model: str) -> tuple[int, int]:
        """(how many, the newest seq) of `model`'s vectors: a new one always has a larger seq than every
        other, and a deleted one lowers the count, so equal shapes hold the same vectors."""
        count, newest = self._conn.execute(
            "SELECT count(*), coalesce(max(seq), 0) FROM memory_vectors WHERE model = ?", (model,)).fetchone()
        return count, newest

    def newest(self) -> int:
        """The newest memory's seq (0: none yet)."""
        return self._conn.execute("SELECT coalesce(max(seq), 0) FROM source_memories").fetchone()[0]

    def after(self, model: str, seq: int) -> list[tuple[int, bytes]]:
        """`model`'s vectors of memories newer than `seq`, oldest first."""
        return [(s, bytes(v)) for s, v in self._conn.execute(
            "SELECT seq, vector FROM memory_vectors WHERE model = ? AND seq > ? ORDER BY seq", (model, seq))]

    def erase(self, seq: int) -> None:
        self._conn.execute("DELETE FROM memory_vectors WHERE seq = ?", (seq,))
