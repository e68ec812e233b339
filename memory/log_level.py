"""The server's log level: --log-level, else DATALOG_MEMORY_LOG_LEVEL, else info."""

from __future__ import annotations

import logging
import os

LEVELS = ("debug", "info", "warning", "error", "critical")


def log_level(name: str | None = None) -> int:
    """A logging level by name; ValueError for a name that is not one."""
    name = (name or os.environ.get("DATALOG_MEMORY_LOG_LEVEL") or "info").strip().lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {name!r}: use one of {', '.join(LEVELS)}")
    return getattr(logging, name.upper())
