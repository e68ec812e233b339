"""Row-level writes shared by every tool that adds or removes belief: a fact row and its supports.

`seen` is the caller's support filter (SQL over a supports row `s`, and its parameters;
see memory/sources/visibility.py): what these functions report is computed over the
supports the caller may see, and they never remove one it may not."""

from __future__ import annotations

from ..store import utc_now
from ..terms import Compound, Term, format_term, indicator
from ..terms.codec import encode_args
from .segments import Segment

EVERYTHING = ("1", [])  # the filter of a caller that sees every support


def visible_supports(conn, fact_id: int, seen: tuple[str, list] = EVERYTHING) -> list[str]:
    """The supports of a fact the caller may see, as `kind` or `kind:ref`, oldest first."""
    rows = conn.execute(f"SELECT s.kind, s.ref FROM supports AS s WHERE s.fact_id = ? AND {seen[0]} ORDER BY s.id",
                        (fact_id, *seen[1])).fetchall()
    return [kind if not ref else f"{kind}:{ref}" for kind, ref in rows]


def visible_fact(conn, segment: Segment, text: str, seen: tuple[str, list] = EVERYTHING) -> int | None:
    """The id of the fact with this canonical text if the caller may see it."""
    row = conn.execute(f"SELECT f.id FROM facts AS f WHERE f.segment_id = ? AND f.text = ? AND EXISTS "
                       f"(SELECT 1 FROM supports AS s WHERE s.fact_id = f.id AND {seen[0]})",
                       (segment.id, text, *seen[1])).fetchone()
    return row[0] if row else None


def support_fact(conn, segment: Segment, term: Term, kind: str, ref: str, actor: str,
                 seen: tuple[str, list] = EVERYTHING) -> tuple[int, bool, bool]:
    """Make sure the fact row exists and carries the support (kind, ref).

    Returns (fact id, whether the fact is new to the caller, whether the support was new). A fact row that
    only hidden supports held is shared, but reported as new: to the caller it did not exist."""
    text = format_term(term)
    now = utc_now(conn.clock)
    row = conn.execute("SELECT id FROM facts WHERE segment_id = ? AND text = ?", (segment.id, text)).fetchone()
    if row is None:
        functor, arity = indicator(term)
        conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (segment.id, functor, arity, text, encode_args(term.args if type(term) is Compound else ()), now))
        fact_id, created = conn.last_insert_rowid(), True
    else:
        fact_id = row[0]
        created = not visible_supports(conn, fact_id, seen)
    conn.execute("INSERT OR IGNORE INTO supports (fact_id, kind, ref, actor, created_at) VALUES (?, ?, ?, ?, ?)",
                 (fact_id, kind, ref, actor, now))
    return fact_id, created, conn.changes() > 0


def release(conn, fact_id: int, seen: tuple[str, list] = EVERYTHING) -> list[str]:
    """After supports were removed: delete the fact row when none is left at all. Returns the supports the
    caller still sees (empty: to the caller, the fact is gone)."""
    if conn.execute("SELECT 1 FROM supports WHERE fact_id = ? LIMIT 1", (fact_id,)).fetchone() is None:
        conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
        return []
    return visible_supports(conn, fact_id, seen)


def withdraw_support(conn, segment: Segment, kind: str, ref: str,
                     seen: tuple[str, list] = EVERYTHING) -> tuple[list[str], list[str]]:
    """Remove every (kind, ref) support in a segment; facts left with no support go.

    Returns (facts gone for the caller, facts it still sees believed through another support)."""
    affected = conn.execute(
        "SELECT f.id, f.text FROM facts AS f JOIN supports AS s ON s.fact_id = f.id "
        "WHERE f.segment_id = ? AND s.kind = ? AND s.ref = ? ORDER BY f.id", (segment.id, kind, ref)).fetchall()
    conn.execute("DELETE FROM supports WHERE kind = ? AND ref = ? AND fact_id IN "
                 "(SELECT id FROM facts WHERE segment_id = ?)", (kind, ref, segment.id))
    removed, kept = [], []
    for fact_id, text in affected:
        (kept if release(conn, fact_id, seen) else removed).append(text)
    return removed, kept
