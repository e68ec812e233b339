"""Supports: why a fact is believed. A fact row lives while one of its supports does."""

from __future__ import annotations


from ._visibility import seen
from .records import SupportRow, Visibility


def release(conn, fact_id: int, visibility: Visibility | None = None) -> list[str]:
    """After supports were removed: delete the fact row when none is left at all. Returns the supports the
    caller still sees (empty: to the caller, the fact is gone)."""
    if conn.execute("SELECT 1 FROM supports WHERE fact_id = ? LIMIT 1", (fact_id,)).fetchone() is None:
        conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
        return []
    return visible_supports(conn, fact_id, visibility)


def visible_supports(conn, fact_id: int, visibility: Visibility | None = None) -> list[str]:
    condition, params = seen(visibility)
    rows = conn.execute(f"SELECT s.kind, s.ref FROM supports AS s WHERE s.fact_id = ? AND {condition} ORDER BY s.id",
                        (fact_id, *params)).fetchall()
    return [kind if not ref else f"{kind}:{ref}" for kind, ref in rows]


class Supports:
    def __init__(self, conn) -> None:
        self._conn = conn

    def of(self, fact_id: int, visibility: Visibility | None = None) -> list[str]:
        """The supports of a fact the caller may see, as `kind` or `kind:ref`, oldest first."""
        return visible_supports(self._conn, fact_id, visibility)

    def rows(self, fact_id: int, visibility: Visibility | None = None) -> list[SupportRow]:
        condition, params = seen(visibility)
        return [SupportRow(*r) for r in self._conn.execute(
            f"SELECT s.id, s.kind, s.ref FROM supports AS s WHERE s.fact_id = ? AND {condition}", (fact_id, *params))]

    def count(self, fact_id: int) -> int:
        """All supports of a fact, seen or not."""
        return self._conn.execute("SELECT count(*) FROM supports WHERE fact_id = ?", (fact_id,)).fetchone()[0]

    def remove(self, fact_id: int, kind: str) -> bool:
        """Remove a fact's supports of one kind (the fact row stays: `release` it). True if any went."""
        self._conn.execute("DELETE FROM supports WHERE fact_id = ? AND kind = ?", (fact_id, kind))
        return self._conn.changes() > 0

    def withdraw(self, segment_id: int, kind: str, ref: str,
                 visibility: Visibility | None = None) -> tuple[list[str], list[str]]:
        """Remove every (kind, ref) support in a segment; facts left with no support go.

        Returns (facts gone for the caller, facts it still sees believed through another support)."""
        affected = self._conn.execute(
            "SELECT f.id, f.text FROM facts AS f JOIN supports AS s ON s.fact_id = f.id "
            "WHERE f.segment_id = ? AND s.kind = ? AND s.ref = ? ORDER BY f.id", (segment_id, kind, ref)).fetchall()
        self._conn.execute("DELETE FROM supports WHERE kind = ? AND ref = ? AND fact_id IN "
                           "(SELECT id FROM facts WHERE segment_id = ?)", (kind, ref, segment_id))
        removed: list[str] = []
        kept: list[str] = []
        for fact_id, text in affected:
            (kept if release(self._conn, fact_id, visibility) else removed).append(text)
        return removed, kept

    def exists(self, segment_id: int, kind: str, ref: str) -> bool:
        return self._conn.execute(
            "SELECT 1 FROM supports AS s JOIN facts AS f ON f.id = s.fact_id WHERE f.segment_id = ? "
            "AND s.kind = ? AND s.ref = ? LIMIT 1", (segment_id, kind, ref)).fetchone() is not None

    def any_of_kind(self, kind: str) -> bool:
        """Whether any support of this kind exists anywhere in the store."""
        return self._conn.execute("SELECT 1 FROM supports WHERE kind = ? LIMIT 1", (kind,)).fetchone() is not None

    def refs(self, segment_id: int, kind: str) -> list[str]:
        """The refs of a kind (assumption names, ...) in a segment, each once, in the order they first came."""
        return [r[0] for r in self._conn.execute(
            "SELECT s.ref FROM supports AS s JOIN facts AS f ON f.id = s.fact_id "
            "WHERE f.segment_id = ? AND s.kind = ? GROUP BY s.ref ORDER BY min(s.id)", (segment_id, kind))]

    def facts_with(self, segment_id: int, kind: str, ref: str | None = None, functor: str | None = None,
                   arity: int | None = None) -> list[tuple[str, str]]:
        """(fact text, ref) for every support of a kind in a segment (optionally one ref, one predicate), by
        predicate, text and ref. No visibility is applied: it is asked for assumptions, and only source
        projections can be hidden."""
        where, params = ["f.segment_id = ?", "s.kind = ?"], [segment_id, kind]
        for column, value in (("s.ref", ref), ("f.functor", functor), ("f.arity", arity)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        return self._conn.execute(
            f"SELECT f.text, s.ref FROM facts AS f JOIN supports AS s ON s.fact_id = f.id WHERE {' AND '.join(where)} "
            "ORDER BY f.functor, f.arity, f.text, s.ref", params).fetchall()

    def move(self, support_ids: list[int], fact_id: int) -> None:
        """Re-attach supports to another fact (a rename that must leave supports it may not see behind)."""
        self._conn.execute(f"UPDATE supports SET fact_id = ? WHERE {self._conn.sql.in_list('id')}",
                           (fact_id, self._conn.sql.listed(support_ids)))

    def follow_rename(self, support_ids: list[int], old_text: str, new_text: str, functor: str) -> None:
        """The projections of the source memories behind these supports follow a fact's rename, so recall finds
        the new name."""
        self._conn.execute(
            "UPDATE memory_projections SET predicate = ?, fact = ? WHERE fact = ? AND memory_id IN "
            f"(SELECT ref FROM supports WHERE kind = 'source' AND {self._conn.sql.in_list('id')})",
            (functor, new_text, old_text, self._conn.sql.listed(support_ids)))
