"""The append-only audit log: one row per mutation, written inside the mutation's transaction."""

from __future__ import annotations

import json
from typing import Any

import apsw

# The clock lives in memory/clock.py; a connection carries its store's (connection.py), so a row written through
# it is stamped by the clock the store was given.
from ..clock import utc_now


def record(conn: apsw.Connection, actor: str, operation: str, segment: str | None, payload: dict[str, Any]) -> int:
    conn.execute(
        "INSERT INTO audit_log(at, actor, operation, segment, payload) VALUES (?, ?, ?, ?, ?)",
        (utc_now(conn.clock), actor, operation, segment, json.dumps(payload, sort_keys=True, ensure_ascii=False)),
    )
    return conn.last_insert_rowid()
