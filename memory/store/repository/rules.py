"""Rules: clauses stored as canonical text `Head :- Body`, with an optional name and a confidence."""

from __future__ import annotations

from ...clock import utc_now
from .records import RuleRow

_COLUMNS = "id, text, head_functor, head_arity, created_at, name, confidence"


class Rules:
    def __init__(self, conn) -> None:
        self._conn = conn

    def texts(self, segment_id: int) -> list[tuple[int, str]]:
        """(id, text) of a segment's rules in definition order: what a program is built from."""
        return self._conn.execute("SELECT id, text FROM rules WHERE segment_id = ? ORDER BY id",
                                  (segment_id,)).fetchall()

    def all(self, segment_id: int) -> list[RuleRow]:
        return [RuleRow(*r) for r in self._conn.execute(
            f"SELECT {_COLUMNS} FROM rules WHERE segment_id = ? ORDER BY id", (segment_id,))]

    def page(self, segment_id: int, limit: int, offset: int) -> list[RuleRow]:
        return [RuleRow(*r) for r in self._conn.execute(
            f"SELECT {_COLUMNS} FROM rules WHERE segment_id = ? ORDER BY id LIMIT ? OFFSET ?",
            (segment_id, limit, offset))]

    def count(self, segment_id: int) -> int:
        return self._conn.execute("SELECT count(*) FROM rules WHERE segment_id = ?", (segment_id,)).fetchone()[0]

    def by_text(self, segment_id: int, text: str) -> RuleRow | None:
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM rules WHERE segment_id = ? AND text = ?",
                                 (segment_id, text)).fetchone()
        return None if row is None else RuleRow(*row)

    def text_named(self, segment_id: int, name: str, other_than: str) -> str | None:
        """The text of another rule of the segment that already has this name."""
        row = self._conn.execute("SELECT text FROM rules WHERE segment_id = ? AND name = ? AND text <> ?",
                                 (segment_id, name, other_than)).fetchone()
        return None if row is None else row[0]

    def names(self, segment_id: int) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT name FROM rules WHERE segment_id = ? AND name IS NOT NULL",
                                                 (segment_id,))}

    def head_counts(self, segment_id: int) -> dict[tuple[str, int], int]:
        """(head functor, arity) -> number of rules."""
        return {(n, a): c for n, a, c in self._conn.execute(
            "SELECT head_functor, head_arity, count(*) FROM rules WHERE segment_id = ? "
            "GROUP BY head_functor, head_arity", (segment_id,))}

    def head_arities(self, segment_id: int, functor: str) -> list[int]:
        """The arities of the rules whose head is `functor`, ascending."""
        return [r[0] for r in self._conn.execute(
            "SELECT DISTINCT head_arity FROM rules WHERE segment_id = ? AND head_functor = ? ORDER BY head_arity",
            (segment_id, functor))]

    def texts_with_head(self, segment_id: int, functor: str, arity: int, limit: int) -> list[str]:
        return [r[0] for r in self._conn.execute(
            "SELECT text FROM rules WHERE segment_id = ? AND head_functor = ? AND head_arity = ? ORDER BY id LIMIT ?",
            (segment_id, functor, arity, limit))]

    def add(self, segment_id: int, functor: str, arity: int, text: str, name: str | None,
            confidence: float) -> int:
        """Store a checked rule (its text must be new in the segment); returns its id."""
        return self._conn.execute(
            "INSERT INTO rules (segment_id, head_functor, head_arity, text, created_at, name, confidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (segment_id, functor, arity, text, utc_now(self._conn.clock), name, confidence)).fetchall()[0][0]

    def set_options(self, rule_id: int, name: str | None, confidence: float) -> None:
        self._conn.execute("UPDATE rules SET name = ?, confidence = ? WHERE id = ?", (name, confidence, rule_id))

    def rewrite(self, rule_id: int, text: str, head_functor: str) -> None:
        self._conn.execute("UPDATE rules SET text = ?, head_functor = ? WHERE id = ?", (text, head_functor, rule_id))

    def duplicate_of(self, segment_id: int, text: str, rule_id: int) -> int | None:
        """Another rule of the segment with this text."""
        row = self._conn.execute("SELECT id FROM rules WHERE segment_id = ? AND text = ? AND id != ?",
                                 (segment_id, text, rule_id)).fetchone()
        return None if row is None else row[0]

    def delete(self, rule_id: int) -> None:
        self._conn.execute("DELETE FROM rules WHERE id = ?", (rule_id,))

    def delete_all(self, segment_id: int) -> None:
        self._conn.execute("DELETE FROM rules WHERE segment_id = ?", (segment_id,))
