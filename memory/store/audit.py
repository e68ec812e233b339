"""The clock of every stored instant, and the audit log's entry point for code holding a store connection."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


# Where every stored instant comes from; tests put a clock they control here to order events without sleeping.
clock: Callable[[], datetime] = system_clock


def utc_now() -> str:
    """UTC with microseconds, e.g. 2026-11-29T21:50:00.123456Z."""
    return clock().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record(conn, actor: str, operation: str, segment: str | None, payload: dict[str, Any]) -> int:
    """One audit row inside the transaction `conn` belongs to (the repository's `Audit.record`)."""
    from .repository import within  # the repository imports this module's clock
    return within(conn).audit.record(actor, operation, segment, payload)
