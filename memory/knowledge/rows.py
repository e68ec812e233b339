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
