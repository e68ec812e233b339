"""Time windows in plain text, anchored to an explicit `now` (epoch seconds, UTC) so answers are reproducible.

Understood: "last 3 days", "past hour", "since 2026-01-01", "after …", "before …",
"between 2026-01-01 and 2026-01-05", "yesterday", "today", an ISO date (that day),
an ISO date-time (that second), and epoch seconds (9 to 11 digits). Windows are
half-open: [start, end)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

DAY = 86_400
UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3_600, "day": DAY, "week": 7 * DAY,
         "month": 30 * DAY, "year": 365 * DAY}
_POINT = r"(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?|\d{9,11}|yesterday|today)"
_RELATIVE = re.compile(r"\b(?:last|past|previous)\s+(?:(\d+)\s+)?(second|sec|minute|min|hour|day|week|month|year)s?\b",
                       re.I)
_BETWEEN = re.compile(rf"\bbetween\s+{_POINT}\s+and\s+{_POINT}", re.I)
_SINCE = re.compile(rf"\b(since|after|from|before|until)\s+{_POINT}", re.I)
_DAYWORD = re.compile(r"\b(yesterday|today)\b", re.I)
_BARE = re.compile(rf"(?<![\w:-]){_POINT}(?![\w-])", re.I)


LIMIT = 2 ** 62  # window bounds stay inside SQLite's 64-bit integers


def _clamp(value: int | None) -> int | None:
    return None if value is None else max(-LIMIT, min(LIMIT, value))


@dataclass(frozen=True)
class Window:
    start: int | None
    end: int | None
    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _clamp(self.start))
        object.__setattr__(self, "end", _clamp(self.end))

    def contains(self, ts: int) -> bool:
        return (self.start is None or ts >= self.start) and (self.end is None or ts < self.end)

    @property
    def span(self) -> int | None:
        return None if self.start is None or self.end is None else self.end - self.start

    def to_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "text": self.text}


def _day_start(ts: int) -> int:
    return ts - ts % DAY


def _point(token: str, now: int) -> tuple[int, int]:
    """The [start, end) a point names: a day, a second, yesterday or today."""
    low = token.lower()
    if low == "today":
        return _day_start(now), _day_start(now) + DAY
    if low == "yesterday":
        return _day_start(now) - DAY, _day_start(now)
    if token.isdigit():
        return int(token), int(token) + 1
    moment = datetime.fromisoformat(token.replace(" ", "T"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    start = int(moment.timestamp())
    return (start, start + DAY) if len(token) == 10 else (start, start + 1)


def parse_window(text: str, now: int) -> tuple[Window | None, str]:
    """The first time window named in `text`, and the text with it removed (for entity parsing)."""
    try:
        found = _BETWEEN.search(text)
        if found:
            start, _ = _point(found.group(1), now)
            _, end = _point(found.group(2), now)
            return Window(start, end, found.group(0)), _cut(text, found)
        found = _RELATIVE.search(text)
        if found:
            amount = int(found.group(1) or 1)
            return Window(now - amount * UNITS[found.group(2).lower()], now + 1, found.group(0)), _cut(text, found)
        found = _SINCE.search(text)
        if found:
            start, end = _point(found.group(2), now)
            bounds = {"since": (start, None), "from": (start, None), "after": (end, None),
                      "before": (None, start), "until": (None, end)}[found.group(1).lower()]
            return Window(*bounds, found.group(0)), _cut(text, found)
        found = _DAYWORD.search(text) or _BARE.search(text)
        if found:
            start, end = _point(found.group(1), now)
            return Window(start, end, found.group(0)), _cut(text, found)
    except (ValueError, OverflowError):
        pass  # an impossible date (2026-02-30) is no window; the words stay for entity parsing
    return None, text


def _cut(text: str, found: re.Match) -> str:
    return text[:found.start()] + " " + text[found.end():]
