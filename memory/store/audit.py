"""The append-only audit log: one row per mutation, written inside the mutation's transaction."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable

import apsw


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


# Where every stored instant comes from; tests put a clock they control here to order events without sleeping.
clock: Callable[[], datetime] = system_clock


def utc_now() -> str:
    """UTC with microseconds, e.g. 2026-11-29T21:50:00.123456Z."""
    return clock().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record(conn: apsw.Connection, actor: str, operation: str, segment: str | None, payload: dict[str, Any]) -> int:
    conn.execute(
        "INSERT INTO audit_log(at, actor, operation, segment, payload) VALUES (?, ?, ?, ?, ?)",
        (utc_now(), actor, operation, segment, json.dumps(payload, sort_keys=True, ensure_ascii=False)),
    )
    return conn.last_insert_rowid()
