"""Row-level writes shared by every tool that adds belief: a fact row and one support for it."""

from __future__ import annotations

from ..store import utc_now
from ..terms import Compound, Term, format_term, indicator
from ..terms.codec import encode_args
from .segments import Segment


def support_fact(conn, segment: Segment, term: Term, kind: str, ref: str, actor: str) -> tuple[int, bool, bool]:
    """Make sure the fact row exists and carries the support (kind, ref).

    Returns (fact id, whether the fact row was new, whether the support was new)."""
    text = format_term(term)
    now = utc_now()
    row = conn.execute("SELECT id FROM facts WHERE segment_id = ? AND text = ?", (segment.id, text)).fetchone()
    if row is None:
        functor, arity = indicator(term)
        conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (segment.id, functor, arity, text, encode_args(term.args if type(term) is Compound else ()), now))
        fact_id, created = conn.last_insert_rowid(), True
    else:
        fact_id, created = row[0], False
    conn.execute("INSERT OR IGNORE INTO supports (fact_id, kind, ref, actor, created_at) VALUES (?, ?, ?, ?, ?)",
                 (fact_id, kind, ref, actor, now))
    return fact_id, created, conn.changes() > 0


def withdraw_support(conn, segment: Segment, kind: str, ref: str) -> tuple[list[str], list[str]]:
    """Remove every (kind, ref) support in a segment; facts left with no support go.

    Returns (facts removed, facts kept through another support)."""
    affected = conn.execute(
        "SELECT f.id, f.text FROM facts AS f JOIN supports AS s ON s.fact_id = f.id "
        "WHERE f.segment_id = ? AND s.kind = ? AND s.ref = ? ORDER BY f.id", (segment.id, kind, ref)).fetchall()
    conn.execute("DELETE FROM supports WHERE kind = ? AND ref = ? AND fact_id IN "
                 "(SELECT id FROM facts WHERE segment_id = ?)", (kind, ref, segment.id))
    removed, kept = [], []
    for fact_id, text in affected:
        if conn.execute("SELECT 1 FROM supports WHERE fact_id = ? LIMIT 1", (fact_id,)).fetchone():
            kept.append(text)
        else:
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            removed.append(text)
    return removed, kept
