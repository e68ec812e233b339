"""Time windows in plain text, anchored to an explicit `now` (epoch seconds, UTC) so answers are reproducible.

Understood: "last 3 days", "past hour", "since 2026-01-01", "after …", "from …", "before …",
"until …", "between 2026-01-01 and 2026-01-05", "from … to …", "yesterday", "today", "in May 2026",
"during 2025", "in May" (the latest May that has begun), "on May 3, 2026" / "3 May 2026",
an ISO date (that day), an ISO date-time (that second), and epoch seconds (9 to 11 digits).
Several windows in one text intersect ("since 2026-05-01 before 2026-05-10"). Windows
are half-open: [start, end). `since`, `after` and `from` end at `now` (inclusive): memory
as of `now` holds nothing later.

Refused with invalid_arguments (never silently read as "all time"): an impossible date
(2026-13-45, 2026-02-30, May 32, 2026) and a duration that is not positive ("last -3 days",
"last 0 hours")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from ..errors import InvalidArguments

DAY = 86_400
UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3_600, "day": DAY, "week": 7 * DAY,
         "month": 30 * DAY, "year": 365 * DAY}
MONTHS = {name: i + 1 for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")]) for name in names}
MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?" \
        r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ISO = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"
# A point in time; a bare year only after a keyword ("during 2025"), where it cannot be a count.
_POINT_BODY = (rf"{_ISO}|\d{{9,11}}|yesterday|today|{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
               rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}\.?,?\s+\d{{4}}|{MONTH}\.?,?\s+\d{{4}}")
_POINT = rf"({_POINT_BODY}|\d{{4}}(?![\d-]))"
_RELATIVE = re.compile(r"\b(?:last|past|previous)\s+(?:([+-]?\s*\d+)\s+)?(second|sec|minute|min|hour|day|week|month"
                       r"|year)s?\b", re.I)
_BETWEEN = re.compile(rf"\b(?:between\s+{_POINT}\s+and|from\s+{_POINT}\s+(?:to|until))\s+{_POINT}(?![\w:-])", re.I)
_SINCE = re.compile(rf"\b(since|after|from|before|until|in|during|on)\s+{_POINT}(?![\w:-])", re.I)
_LATEST_MONTH = re.compile(rf"\b(?:in|during)\s+({MONTH})\b(?!\.?,?\s+\d)", re.I)
_BARE = re.compile(rf"(?<![\w:-])({_POINT_BODY})(?![\w:-])", re.I)
# Anything that looks like a date, checked before parsing: an impossible one is an error, not "no window".
_DATE_LIKE = re.compile(r"(?<![\w:-])(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?(?![\d])")
_MONTH_DAY = re.compile(rf"\b({MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b|\b(\d{{1,2}})(?:st|nd|rd|th)?"
                        rf"\s+({MONTH})\.?,?\s+(\d{{4}})\b", re.I)


LIMIT = 2 ** 62  # window bounds stay inside SQLite's 64-bit integers
END_OF_TIME = 253_402_300_800  # 10000-01-01T00:00:00Z


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

    def intersect(self, other: "Window") -> "Window":
        starts = [s for s in (self.start, other.start) if s is not None]
        ends = [e for e in (self.end, other.end) if e is not None]
        return Window(max(starts) if starts else None, min(ends) if ends else None, f"{self.text}; {other.text}")


def _day_start(ts: int) -> int:
    return ts - ts % DAY


def _epoch(year: int, month: int, day: int = 1) -> int:
    """Seconds at the start of a UTC day; raises ValueError for an impossible one."""
    if year == 10_000 and month == 1 and day == 1:
        return END_OF_TIME
    return int(datetime(year, month, day, tzinfo=timezone.utc).timestamp())


def _month_span(year: int, month: int) -> tuple[int, int]:
    return _epoch(year, month), _epoch(year + month // 12, month % 12 + 1)


def _month_number(name: str) -> int:
    return MONTHS[name.lower().rstrip(".")]


def _point(token: str, now: int) -> tuple[int, int]:
    """The [start, end) a point names: a day, a second, a month, a year, yesterday or today."""
    low = " ".join(token.lower().replace(",", " ").split())
    if low == "today":
        return _day_start(now), _day_start(now) + DAY
    if low == "yesterday":
        return _day_start(now) - DAY, _day_start(now)
    if token.isdigit():
        if len(token) == 4:
            year = int(token)
            return _epoch(year, 1), _epoch(year + 1, 1)
        return int(token), int(token) + 1
    words = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", low).replace(".", " ").split()
    if words[0].isalpha() or (len(words) == 3 and words[1].isalpha()):
        if len(words) == 2:  # Month YYYY
            return _month_span(int(words[1]), _month_number(words[0]))
        month, day = (words[0], words[1]) if words[0].isalpha() else (words[1], words[0])
        start = _epoch(int(words[2]), _month_number(month), int(day))
        return start, start + DAY
    moment = datetime.fromisoformat(token.replace(" ", "T").replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    start = int(moment.timestamp())
    return (start, start + DAY) if len(token) == 10 else (start, start + 1)


def _latest_month(name: str, now: int) -> tuple[int, int]:
    """The latest month of that name that has begun at `now`."""
    today = datetime.fromtimestamp(now, timezone.utc)
    month = _month_number(name)
    year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month)


def check_dates(text: str) -> None:
    """Refuse a text naming an impossible date or time: it must not quietly mean 'all time'."""
    for found in _DATE_LIKE.finditer(text):
        year, month, day, hour, minute, second = (int(g) if g else 0 for g in found.groups())
        try:
            datetime(year, month, day, hour, minute, second)
        except ValueError:
            raise InvalidArguments(f"'{found.group(0)}' is not a real date or time", argument="query",
                                   phrase=found.group(0)) from None
    for found in _MONTH_DAY.finditer(text):
        month, day, year = (found.group(1), found.group(2), found.group(3)) if found.group(1) else \
            (found.group(5), found.group(4), found.group(6))
        try:
            _epoch(int(year), _month_number(month), int(day))
        except ValueError:
            raise InvalidArguments(f"'{found.group(0)}' is not a real date", argument="query",
                                   phrase=found.group(0)) from None


def _one_window(text: str, now: int) -> tuple[Window | None, str]:
    found = _BETWEEN.search(text)
    if found:
        start, _ = _point(found.group(1) or found.group(2), now)
        _, end = _point(found.group(3), now)
        return Window(start, end, found.group(0)), _cut(text, found)
    found = _RELATIVE.search(text)
    if found:
        amount = int((found.group(1) or "1").replace(" ", ""))
        if amount <= 0:
            raise InvalidArguments(f"'{found.group(0)}': a duration must be positive", argument="query",
                                   phrase=found.group(0))
        return Window(now - amount * UNITS[found.group(2).lower()], now + 1, found.group(0)), _cut(text, found)
    found = _SINCE.search(text)
    if found:
        start, end = _point(found.group(2), now)
        bounds = {"since": (start, now + 1), "from": (start, now + 1), "after": (end, now + 1),
                  "before": (None, start), "until": (None, end), "in": (start, end), "during": (start, end),
                  "on": (start, end)}[found.group(1).lower()]
        return Window(*bounds, found.group(0)), _cut(text, found)
    found = _LATEST_MONTH.search(text)
    if found:
        return Window(*_latest_month(found.group(1), now), found.group(0)), _cut(text, found)
    found = _BARE.search(text)
    if found:
        start, end = _point(found.group(1), now)
        return Window(start, end, found.group(0)), _cut(text, found)
    return None, text


def next_window(text: str, now: int) -> tuple[Window | None, str]:
    """The first time phrase in `text` as a window, and the text without it. Raises InvalidArguments for an
    impossible date or a non-positive duration."""
    check_dates(text)
    try:
        return _one_window(text, now)
    except (ValueError, OverflowError) as exc:  # beyond the calendar (year 0, 10000)
        raise InvalidArguments(f"a time phrase names no real moment: {exc}", argument="query") from None


def parse_window(text: str, now: int) -> tuple[Window | None, str]:
    """The window the time phrases in `text` name together (their intersection), and the text without them
    (for entity parsing). Raises InvalidArguments for an impossible date or a non-positive duration."""
    window: Window | None = None
    for _ in range(8):  # a handful of phrases at most; the rest stays in the text (and is reported unparsed)
        found, rest = next_window(text, now)
        if found is None:
            break
        window = found if window is None else window.intersect(found)
        text = rest
    return window, text


def _cut(text: str, found: re.Match) -> str:
    return text[:found.start()] + " " + text[found.end():]
