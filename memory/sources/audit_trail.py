"""The change log as a caller may read it: the `audit_events` view, filtered and paged, without the rows
that would reveal source memories outside the caller's namespaces.

Read-only. A row about a source memory (memory_remember, memory_forget) is shown only when every memory it
names is in a namespace the caller may read. A row naming a fact (`fact`, or update_fact's `old` and `new`)
is hidden while that fact is stored but invisible to the caller (it rests only on memories the caller may
not read), so the log does not show what the knowledge tools hide. Any other row is shown to every caller
holding memory_read, as the facts and rules it describes are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..clock import parse_instant
from ..errors import InvalidArguments
from ..store import Store
from .context import CallerContext
from .memories import SourceMemories
from .namespaces import readable_namespaces
from .visibility import visible_facts_clause

MAX_PAGE = 500


@dataclass(frozen=True)
class AuditFilter:
    actor: str | None = None
    operation: str | None = None
    since: str | None = None  # ISO-8601, inclusive
    until: str | None = None  # ISO-8601, exclusive

    def checked(self) -> "AuditFilter":
        """Bad instants are a clear InvalidArguments; an empty text means no filter."""
        return AuditFilter(self.actor or None, self.operation or None,
                           parse_instant("since", self.since) if self.since else None,
                           parse_instant("until", self.until) if self.until else None)


FACT_PATHS = ("$.fact", "$.old", "$.new")  # where a payload names a fact


def _visible(conn, context: CallerContext) -> tuple[str, list]:
    """SQL over `a` (a row of audit_events) keeping what the caller may see, and its parameters."""
    spaces = readable_namespaces(conn, context)
    listed = ", ".join("?" * len(spaces)) or "NULL"
    sql = (f"(a.operation <> 'memory_remember' OR json_extract(a.payload, '$.namespace') IN ({listed})) AND "
           f"(a.operation <> 'memory_forget' OR NOT EXISTS (SELECT 1 FROM json_each(a.payload, '$.ids') AS j "
           f"LEFT JOIN memory_texts AS m ON m.id = j.value "
           f"WHERE m.namespace IS NULL OR m.namespace NOT IN ({listed})))")
    params: list = [*spaces, *spaces]
    facts = visible_facts_clause(conn, context)
    if facts is not None:  # some fact rests on a source memory: hide rows naming one the caller cannot see
        hidden = (f"EXISTS (SELECT 1 FROM facts AS f JOIN segments AS g ON g.id = f.segment_id "
                  f"WHERE g.name = coalesce(a.memory, 'default') AND f.text = json_extract(a.payload, ?) "
                  f"AND NOT ({facts[0]}))")
        for path in FACT_PATHS:
            sql += f" AND NOT {hidden}"
            params += [path, *facts[1]]
    return sql, params


def audit_events(store: Store, context: CallerContext, where: AuditFilter = AuditFilter(), limit: int = 50,
                 offset: int = 0) -> dict[str, Any]:
    """One page of the visible change log, newest first: {items, total, limit, offset, actors, operations}
    (actors and operations: every value the filter may choose among)."""
    SourceMemories(store, context).require_read()
    if not (0 < limit <= MAX_PAGE) or offset < 0:
        raise InvalidArguments(f"limit must be 1..{MAX_PAGE} and offset at least 0", argument="limit")
    where = where.checked()
    with store.read() as conn:
        visible, params = _visible(conn, context)
        conditions, chosen = [visible], list(params)
        for column, op, value in (("a.actor", "=", where.actor), ("a.operation", "=", where.operation),
                                  ("a.at", ">=", where.since), ("a.at", "<", where.until)):
            if value is not None:
                conditions.append(f"{column} {op} ?")
                chosen.append(value)
        clause = " AND ".join(conditions)
        total = conn.execute(f"SELECT count(*) FROM audit_events AS a WHERE {clause}", chosen).fetchone()[0]
        rows = conn.execute(f"SELECT a.id, a.at, a.actor, a.operation, a.memory, a.summary, a.payload "
                            f"FROM audit_events AS a WHERE {clause} ORDER BY a.id DESC LIMIT ? OFFSET ?",
                            (*chosen, limit, offset)).fetchall()
        actors = [a for (a,) in conn.execute(
            f"SELECT DISTINCT a.actor FROM audit_events AS a WHERE {visible} ORDER BY a.actor", params)]
        operations = [o for (o,) in conn.execute(
            f"SELECT DISTINCT a.operation FROM audit_events AS a WHERE {visible} ORDER BY a.operation", params)]
    items = [{"id": i, "at": at, "actor": actor, "operation": op, "memory": seg, "summary": summary,
              "payload": payload} for i, at, actor, op, seg, summary, payload in rows]
    return {"items": items, "total": total, "limit": limit, "offset": offset, "actors": actors,
            "operations": operations}
