"""Observations in time order, for browsing: the `observations` view, filtered by a member entity and paged.
Read-only; retracted observations are included and say so."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArguments, PermissionDenied
from ..access.context import READ, CallerContext
from ..store.repository import Repository

MAX_PAGE = 500


def observation_timeline(repository: Repository, context: CallerContext, entity: str | None = None,
                         tag: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """Newest first: {items, total, limit, offset}, only observations with `entity` among their members and the
    citation tag `tag` (HEDGE-<n>) when given; each item has hedge_tag, event_time, event_ts, formation, label,
    weight, members, principal, recorded_at, retracted_at."""
    if not context.can(READ):
        raise PermissionDenied(f"Reading observations needs the capability {READ}", required_capability=READ)
    if not (0 < limit <= MAX_PAGE) or offset < 0:
        raise InvalidArguments(f"limit must be 1..{MAX_PAGE} and offset at least 0", argument="limit")
    edge_id = None
    if tag:
        number = tag[len("HEDGE-"):] if tag.startswith("HEDGE-") else ""
        edge_id = int(number) if number.isdigit() and len(number) < 19 else -1  # -1: a tag that names none
    with repository.read() as tx:
        total, rows = tx.observations.timeline(entity or None, edge_id, limit, offset)
    return {"items": [row._asdict() for row in rows], "total": total, "limit": limit, "offset": offset}
