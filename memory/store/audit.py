"""The clock of every stored instant (the audit log itself is the repository's: repository/audit.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


# Where every stored instant comes from; tests put a clock they control here to order events without sleeping.
clock: Callable[[], datetime] = system_clock


def utc_now() -> str:
    """UTC with microseconds, e.g. 2026-11-29T21:50:00.123456Z."""
    return clock().astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
