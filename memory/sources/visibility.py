"""Which stored facts a caller may see: projections of memories in namespaces it cannot read are hidden.

A fact is visible when it has a support that is not a source memory, or a support
from a memory in a namespace the caller reads (and the caller holds memory_read)."""

from __future__ import annotations

from .context import READ, CallerContext
from .namespaces import readable_namespaces


def visible_facts_clause(conn, context: CallerContext) -> tuple[str, list] | None:
    """SQL over `f` (facts) and its parameters, or None when no fact rests on a source memory at all."""
    if conn.execute("SELECT 1 FROM supports WHERE kind = 'source' LIMIT 1").fetchone() is None:
        return None
    spaces = readable_namespaces(conn, context) if context.can(READ) else []
    listed = ", ".join("?" * len(spaces)) or "NULL"
    return (f"EXISTS (SELECT 1 FROM supports AS vs WHERE vs.fact_id = f.id AND (vs.kind <> 'source' OR vs.ref IN "
            f"(SELECT id FROM source_memories WHERE namespace IN ({listed}))))", spaces)
