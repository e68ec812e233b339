"""Instants as the store keeps them: UTC ISO-8601 text with microseconds, which sorts as time does."""

from __future__ import annotations

from datetime import datetime, timezone

from .errors import InvalidArguments
from .store import utc_now

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_instant(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime(FORMAT)


def parse_instant(argument: str, value: object) -> str:
    """An ISO-8601 date or date-time (naive means UTC) as the store's canonical UTC text."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArguments(f"'{argument}' must be an ISO-8601 date or date-time", argument=argument)
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidArguments(f"'{argument}' is not an ISO-8601 date or date-time: {value!r}",
                               argument=argument) from None
    return format_instant(moment)


def from_epoch(seconds: float) -> str:
    return format_instant(datetime.fromtimestamp(seconds, timezone.utc))


def to_epoch(instant: str) -> float:
    return datetime.strptime(instant, FORMAT).replace(tzinfo=timezone.utc).timestamp()


__all__ = ["FORMAT", "format_instant", "from_epoch", "parse_instant", "to_epoch", "utc_now"]
