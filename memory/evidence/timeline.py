"""Observations in time order, for browsing: the `observations` view, filtered by a member entity and paged.
Read-only; retracted observations are included and say so."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidArguments, PermissionDenied
from ..access.context import READ, CallerContext
from ..store import Store

MAX_PAGE = 500


def observation_timeline(store: Store, context: CallerContext, entity: str | None = None, tag: str | None = None,
                         limit: int = 50, offset: int = 0) -> dict[str, Any]:
    """Newest first: {items, total, limit, offset}, only observations with `entity` among their members and the
    citation tag `tag` (HEDGE-<n>) when given; each item has hedge_tag, event_time, event_ts, formation, label,
    weight, members, principal, recorded_at, retracted_at."""
    if not context.can(READ):
        raise PermissionDenied(f"Reading observations needs the capability {READ}", required_capability=READ)
    if not (0 < limit <= MAX_PAGE) or offset < 0:
        raise InvalidArguments(f"limit must be 1..{MAX_PAGE} and offset at least 0", argument="limit")
    conditions, params = ["TRUE"], []
    if entity:
        conditions.append("EXISTS (SELECT 1 FROM json_each(o.members) AS j WHERE j.value = ?)")
        params.append(entity)
    if tag:
        number = tag[len("HEDGE-"):] if tag.startswith("HEDGE-") else ""
        conditions.append("o.id = ?")  # by the key, not the view's computed tag
        params.append(int(number) if number.isdigit() and len(number) < 19 else -1)
    where = " AND ".join(conditions)
    with store.read() as conn:
        total = conn.execute(f"SELECT count(*) FROM observations AS o WHERE {where}", params).fetchone()[0]
        rows = conn.execute(
            f"SELECT o.hedge_tag, o.event_time, o.event_ts, o.formation, o.label, o.weight, o.members, o.principal, "
            f"o.recorded_at, o.retracted_at FROM observations AS o WHERE {where} "
            f"ORDER BY o.event_ts DESC, o.id DESC LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall()
    keys = ("hedge_tag", "event_time", "event_ts", "formation", "label", "weight", "members", "principal",
            "recorded_at", "retracted_at")
    items = [dict(zip(keys, row)) for row in rows]
    for item in items:
        item["members"] = json.loads(item["members"])
    return {"items": items, "total": total, "limit": limit, "offset": offset}
