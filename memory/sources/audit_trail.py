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
from ..store.repository import Repository
from ..access.context import CallerContext
from .memories import SourceMemories
from ..access.namespaces import readable_namespaces
from ..access.visibility import visibility

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


def audit_events(repository: Repository, context: CallerContext, where: AuditFilter = AuditFilter(), limit: int = 50,
                 offset: int = 0) -> dict[str, Any]:
    """One page of the visible change log, newest first: {items, total, limit, offset, actors, operations}
    (actors and operations: every value the filter may choose among)."""
    SourceMemories(repository, context).require_read()
    if not (0 < limit <= MAX_PAGE) or offset < 0:
        raise InvalidArguments(f"limit must be 1..{MAX_PAGE} and offset at least 0", argument="limit")
    where = where.checked()
    with repository.read() as tx:
        page = tx.audit.page(visibility(tx, context), tuple(readable_namespaces(tx.connection, context)), context.principal,
                             actor=where.actor, operation=where.operation, since=where.since, until=where.until,
                             limit=limit, offset=offset)
    return {**page, "limit": limit, "offset": offset}
