"""Where time comes from, and instants as the store keeps them: UTC ISO-8601 text with microseconds,
which sorts as time does.

Every instant the library records or reads "now" at (audit rows, created/expiry/as-of of memories,
observations, recall's default moment) comes from one `Clock`, given to `Memory` at construction and held
by its `Store`; the system clock by default, a `ManualClock` in tests that must order events without
sleeping."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from .errors import InvalidArguments

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current moment, timezone-aware."""
        ...


class SystemClock:
    """The machine's wall clock."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK = SystemClock()


class ManualClock:
    """A clock that moves only when told: `advance()` moves it on, `set()` puts it somewhere. With a `tick`,
    every reading also moves it on by that much afterwards, so instants recorded one after another are strictly
    ordered without anyone calling `advance()`."""

    def __init__(self, start: datetime | str | None = None, *, tick: timedelta = timedelta(0)) -> None:
        self._lock = threading.Lock()
        self._now = _moment(start) if start is not None else datetime.now(timezone.utc)
        if tick < timedelta(0):
            raise ValueError("a clock's tick cannot go backwards")
        self.tick = tick

    def now(self) -> datetime:
        with self._lock:
            moment = self._now
            self._now = moment + self.tick
            return moment

    def advance(self, by: timedelta | float = timedelta(seconds=1)) -> datetime:
        """Move on by `by` (a timedelta, or seconds); returns the new moment."""
        step = by if isinstance(by, timedelta) else timedelta(seconds=by)
        if step < timedelta(0):
            raise ValueError("a clock cannot be advanced backwards; use set()")
        with self._lock:
            self._now += step
            return self._now

    def set(self, moment: datetime | str) -> None:
        with self._lock:
            self._now = _moment(moment)

    def __repr__(self) -> str:
        return f"ManualClock({format_instant(self._now)!r}, tick={self.tick!r})"


def _moment(value: datetime | str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def utc_now(clock: Clock = SYSTEM_CLOCK) -> str:
    """The clock's current moment as the store keeps it, e.g. 2026-11-29T21:50:00.123456Z."""
    return format_instant(clock.now())


def epoch_now(clock: Clock = SYSTEM_CLOCK) -> int:
    """The clock's current moment in whole epoch seconds (how observations are timed)."""
    return int(clock.now().timestamp())


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


__all__ = ["Clock", "FORMAT", "ManualClock", "SYSTEM_CLOCK", "SystemClock", "epoch_now", "format_instant", "from_epoch",
           "parse_instant", "to_epoch", "utc_now"]
