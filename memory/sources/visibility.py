"""Which stored supports and facts a caller may see: the one filter every fact and support read goes through.

A support is visible unless it is a source memory's projection (kind 'source') from a
namespace the caller cannot read (or the caller lacks memory_read). A fact is visible
when it has a visible support. Everything the knowledge tools report (facts, counts,
supports, 'kept', 'removed', created) is computed over visible supports only, and
writes never remove a support the caller cannot see, so a call behaves as if the
hidden projections did not exist and leaves them as they were."""

from __future__ import annotations

from ..knowledge.rows import EVERYTHING
from .context import READ, CallerContext
from .namespaces import readable_namespaces

__all__ = ["EVERYTHING", "visible_facts_clause", "visible_supports_clause"]


def visible_supports_clause(conn, context: CallerContext) -> tuple[str, list] | None:
    """SQL over a supports row `s` and its parameters, or None when no support rests on a source memory."""
    if conn.execute("SELECT 1 FROM supports WHERE kind = 'source' LIMIT 1").fetchone() is None:
        return None
    spaces = readable_namespaces(conn, context) if context.can(READ) else []
    listed = ", ".join("?" * len(spaces)) or "NULL"
    return (f"(s.kind <> 'source' OR s.ref IN (SELECT id FROM source_memories WHERE namespace IN ({listed})))",
            spaces)


def visible_facts_clause(conn, context: CallerContext) -> tuple[str, list] | None:
    """SQL over `f` (facts) and its parameters, or None when every fact is visible."""
    supports = visible_supports_clause(conn, context)
    if supports is None:
        return None
    return f"EXISTS (SELECT 1 FROM supports AS s WHERE s.fact_id = f.id AND {supports[0]})", supports[1]
