"""Time windows in plain text, anchored to an explicit `now` (epoch seconds, UTC) so answers are reproducible.

Understood: "last 3 days", "past hour", "since 2026-01-01", "after …", "from …", "before …",
"until …", "between 2026-01-01 and 2026-01-05", "from … to …", "from March 10 to March 26, 2026",
"yesterday", "today", "the day before yesterday", "4 days ago" (that UTC day), "2 hours ago" (the hour
around then; weeks, months and years likewise), "last Tuesday" (the latest Tuesday before today),
"since Monday" / "on Monday" (the latest Monday up to today), "in May 2026", "during 2025", "in May"
(the latest May that has begun), "on March 25" (the latest March 25 up to today), "on May 3, 2026" /
"3 May 2026", a numeric date when it can be read one way only (20/03/2026 day first, 3/20/2026 month
first, 5/5/2026), an ISO date (that day), an ISO date-time (that second, with Z, an offset, a zone
abbreviation (ZONES) or an IANA zone name such as America/Los_Angeles), and epoch seconds (9 to 11 digits).
Several windows in one text intersect ("since 2026-05-01 before 2026-05-10"). Windows
are half-open: [start, end). `since`, `after` and `from` end at `now` (inclusive): memory
as of `now` holds nothing later.

Refused with invalid_arguments (never silently read as "all time"): an impossible date
(2026-13-45, 2026-02-30, May 32, 2026, 32/03/2026), a numeric date that reads two ways (03/04/2026:
March 4 or April 3), a reversed range ("between 2026-03-26 and 2026-03-10") and a duration that is not
positive ("last -3 days", "last 0 hours"), and phrases with no moment in common ("yesterday or
today": phrases intersect). What is left of a text that still reads as time ("not",
"except", "next week", "PST" on its own) is for the caller to report: `TIME_WORDS`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

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
# Zone abbreviations a date-time may carry, as hours east of UTC (the US ones, which models write most).
ZONES = {"utc": 0, "gmt": 0, "z": 0, "pst": -8, "pdt": -7, "mst": -7, "mdt": -6, "cst": -6, "cdt": -5, "est": -5,
         "edt": -4, "cet": 1, "cest": 2, "bst": 1, "eet": 2, "eest": 3, "ist": 5.5, "jst": 9, "aest": 10}
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2}|\s?(?:" + "|".join(sorted((z for z in ZONES if z != "z"), key=len, reverse=True)) + \
    r")\b|\s[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)"  # or an IANA name: 2026-03-20 10:00 America/Los_Angeles
_ISO = rf"\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?{_ZONE}?)?"
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_NUMERIC = r"\d{1,2}/\d{1,2}/\d{4}"
# A point in time; a bare year only after a keyword ("during 2025"), where it cannot be a count.
_POINT_BODY = (rf"{_ISO}|{_NUMERIC}|\d{{9,11}}|yesterday|today|{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
               rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}\.?,?\s+\d{{4}}|{MONTH}\.?,?\s+\d{{4}}")
_POINT = rf"({_POINT_BODY}|\d{{4}}(?![\d-]))"
# After a keyword only: a weekday, or a month and day without the year (the latest such day up to today). A weekday
# before a date ("on Friday, March 20") names that date's weekday, not the latest Friday: left to the date.
_KEYED_POINT = (rf"({_POINT_BODY}|{WEEKDAY}(?!,?\s+(?:\d|{MONTH}))|{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?"
                rf"|\d{{4}}(?![\d-]))")
_RELATIVE = re.compile(r"\b(?:last|past|previous)\s+(?:([+-]?\s*\d+)\s+)?(second|sec|minute|min|hour|day|week|month"
                       r"|year)s?\b", re.I)
_BETWEEN = re.compile(rf"\b(?:between\s+{_KEYED_POINT}\s+and|from\s+{_KEYED_POINT}\s+(?:to|until))\s+{_POINT}"
                      r"(?![\w:-])", re.I)
_SINCE = re.compile(rf"\b(since|after|from|before|until|in|during|on)\s+{_KEYED_POINT}(?![\w:-])", re.I)
_DAY_BEFORE_YESTERDAY = re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I)
_AGO = re.compile(r"\b(\d+|an?|one)\s+(second|sec|minute|min|hour|day|week|month|year)s?\s+ago\b", re.I)
_LAST_WEEKDAY = re.compile(rf"\b(?:last|previous)\s+({WEEKDAY})\b", re.I)
_LATEST_MONTH = re.compile(rf"\b(?:in|during)\s+({MONTH})\b(?!\.?,?\s+\d)", re.I)
_BARE = re.compile(rf"(?<![\w:-])({_POINT_BODY})(?![\w:-])", re.I)
# Anything that looks like a date, checked before parsing: an impossible one is an error, not "no window".
_NUMERIC_DATE = re.compile(r"(?<![\w/.-])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/-])")
_DATE_LIKE = re.compile(r"(?<![\w:-])(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?(?![\d])")
_MONTH_DAY = re.compile(rf"\b({MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b|\b(\d{{1,2}})(?:st|nd|rd|th)?"
                        rf"\s+({MONTH})\.?,?\s+(\d{{4}})\b", re.I)


# Words that still speak of time when a text's window phrases are taken out of it: a caller must say that the
# phrase was not understood rather than answer for all time ("not yesterday", "before last week", "10:00 PST").
TIME_WORDS = (frozenset("""
not except excluding exclude besides outside without before after until till since ago next previous around
approximately noon midnight morning afternoon evening night tonight tomorrow weekend week weeks day days month
months year years hour hours minute minutes seconds fortnight fortnights earlier later pm clock last past since
than quarter
""".split()) | frozenset(WEEKDAYS) | frozenset(MONTHS) | frozenset(ZONES)) - {"z", "may"}  # "may": mostly the verb

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
    """The [start, end) a point names: a day, a minute, a second, a month, a year, yesterday or today."""
    low = " ".join(token.lower().replace(",", " ").split())
    if low == "today":
        return _day_start(now), _day_start(now) + DAY
    if low == "yesterday":
        return _day_start(now) - DAY, _day_start(now)
    if low in WEEKDAYS:  # the latest one up to today
        back = (datetime.fromtimestamp(now, timezone.utc).weekday() - WEEKDAYS[low]) % 7
        return _day_start(now) - back * DAY, _day_start(now) - (back - 1) * DAY
    if re.fullmatch(_NUMERIC, low):
        year, month, day = _numeric_date(low)
        start = _epoch(year, month, day)
        return start, start + DAY
    if token.isdigit():
        if len(token) == 4:
            year = int(token)
            return _epoch(year, 1), _epoch(year + 1, 1)
        return int(token), int(token) + 1
    words = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", low).replace(".", " ").split()
    if words[0].isalpha() or (len(words) == 3 and words[1].isalpha()):
        if len(words) == 2 and len(words[1]) <= 2:  # Month DD: the latest such day up to today
            today = datetime.fromtimestamp(now, timezone.utc)
            month, day = _month_number(words[0]), int(words[1])
            year = today.year if (month, day) <= (today.month, today.day) else today.year - 1
            start = _epoch(year, month, day)
            return start, start + DAY
        if len(words) == 2:  # Month YYYY
            return _month_span(int(words[1]), _month_number(words[0]))
        month, day = (words[0], words[1]) if words[0].isalpha() else (words[1], words[0])
        start = _epoch(int(words[2]), _month_number(month), int(day))
        return start, start + DAY
    named = re.search(r"\s([A-Za-z]+/[A-Za-z_/]+)$", token) if len(token) > 16 else None
    zone = None if named else re.search(r"\s?([A-Za-z]{3,4})$", token) if len(token) > 16 else None
    offset = ZONES[zone.group(1).lower()] if zone else 0
    iso = token[:(named or zone).start()] if named or zone else token
    moment = datetime.fromisoformat(iso.replace(" ", "T").replace("Z", "+00:00"))
    if named:  # the zone's offset at that moment, summer time included
        moment = moment.replace(tzinfo=_zone(named.group(1)))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    start = int(moment.timestamp() - offset * 3_600)
    if len(token) == 10:
        return start, start + DAY
    # A time written to the minute names that minute ("at 2026-12-01 11:00"), to the second that second.
    return start, start + (1 if re.search(r"\d:\d\d:\d\d", iso) else 60)


def _zone(name: str) -> tzinfo:
    """An IANA time zone by name; InvalidArguments for one this system does not know."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidArguments(f"'{name}' is not a time zone this system knows", argument="query",
                               phrase=name) from None


def _numeric_date(text: str) -> tuple[int, int, int]:
    """(year, month, day) of a numeric date that reads one way only; InvalidArguments otherwise."""
    a, b, year = (int(p) for p in text.split("/"))
    readings = {(year, m, d) for m, d in ((a, b), (b, a)) if 1 <= m <= 12 and 1 <= d <= 31}
    readings = {r for r in readings if _real(*r)}
    if not readings:
        raise InvalidArguments(f"'{text}' is not a real date", argument="query", phrase=text)
    if len(readings) > 1:
        (y1, m1, d1), (y2, m2, d2) = sorted(readings)
        raise InvalidArguments(f"'{text}' reads two ways ({y1}-{m1:02d}-{d1:02d} or {y2}-{m2:02d}-{d2:02d}): "
                               "write the date as YYYY-MM-DD", argument="query", phrase=text)
    return readings.pop()


def _real(year: int, month: int, day: int) -> bool:
    try:
        datetime(year, month, day)
    except ValueError:
        return False
    return True


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
    for found in _NUMERIC_DATE.finditer(text):
        _numeric_date(found.group(0))
    for found in _MONTH_DAY.finditer(text):
        month, day, year = (found.group(1), found.group(2), found.group(3)) if found.group(1) else \
            (found.group(5), found.group(4), found.group(6))
        try:
            _epoch(int(year), _month_number(month), int(day))
        except ValueError:
            raise InvalidArguments(f"'{found.group(0)}' is not a real date", argument="query",
                                   phrase=found.group(0)) from None


def _range_start(token: str, last: str, now: int) -> int:
    """The start of a range's first point; a month and day without a year takes the year of the range's end
    ("from March 10 to March 26, 2026")."""
    words = token.replace(",", " ").split()
    year = re.search(r"\b(\d{4})$", last.strip())
    if len(words) == 2 and words[0].isalpha() and len(words[1].rstrip("stndrh")) <= 2 and year:
        return _point(f"{words[0]} {words[1]} {year.group(1)}", now)[0]
    return _point(token, now)[0]


def _one_window(text: str, now: int) -> tuple[Window | None, str]:
    found = _DAY_BEFORE_YESTERDAY.search(text)
    if found:
        return Window(_day_start(now) - 2 * DAY, _day_start(now) - DAY, found.group(0)), _cut(text, found)
    found = _BETWEEN.search(text)
    if found:
        start = _range_start(found.group(1) or found.group(2), found.group(3), now)
        _, end = _point(found.group(3), now)
        if end <= start:
            raise InvalidArguments(f"'{found.group(0)}' ends before it starts", argument="query",
                                   phrase=found.group(0))
        return Window(start, end, found.group(0)), _cut(text, found)
    found = _AGO.search(text)
    if found:
        amount = int(found.group(1)) if found.group(1).isdigit() else 1
        if amount <= 0:
            raise InvalidArguments(f"'{found.group(0)}': a duration must be positive", argument="query",
                                   phrase=found.group(0))
        unit = UNITS[found.group(2).lower()]
        if unit == DAY:  # "4 days ago" is a calendar day
            start = _day_start(now) - amount * DAY
            return Window(start, start + DAY, found.group(0)), _cut(text, found)
        middle = now - amount * unit  # "2 hours ago": the hour around then
        return Window(middle - unit // 2, middle + unit - unit // 2, found.group(0)), _cut(text, found)
    found = _LAST_WEEKDAY.search(text)
    if found:
        back = (datetime.fromtimestamp(now, timezone.utc).weekday() - WEEKDAYS[found.group(1).lower()]) % 7 or 7
        start = _day_start(now) - back * DAY
        return Window(start, start + DAY, found.group(0)), _cut(text, found)
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


# A time of day with its date in words: "at 14:30 on 2026-03-26", "on 2026-03-26 at 14:30" (read as the ISO
# date-time "2026-03-26 14:30", which names that minute).
_TIME_ON_DATE = re.compile(r"\b(?:at\s+)?([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?\s+on\s+(\d{4}-\d{2}-\d{2})\b", re.I)
_DATE_AT_TIME = re.compile(r"\b(?:on\s+)?(\d{4}-\d{2}-\d{2})\s+at\s+([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?![\d:])",
                           re.I)


def _as_iso(date: str, hour: str, minute: str, second: str | None) -> str:
    return f"{date} {int(hour):02d}:{minute}" + (f":{second}" if second else "")


def parse_window(text: str, now: int) -> tuple[Window | None, str]:
    """The window the time phrases in `text` name together (their intersection), and the text without them
    (for entity parsing). Raises InvalidArguments for an impossible date or a non-positive duration."""
    text = _TIME_ON_DATE.sub(lambda m: _as_iso(m.group(4), m.group(1), m.group(2), m.group(3)), text)
    text = _DATE_AT_TIME.sub(lambda m: _as_iso(m.group(1), m.group(2), m.group(3), m.group(4)), text)
    window: Window | None = None
    for _ in range(8):  # a handful of phrases at most; the rest stays in the text (and is reported unparsed)
        found, rest = next_window(text, now)
        if found is None:
            break
        window = found if window is None else window.intersect(found)
        if window.start is not None and window.end is not None and window.start >= window.end:
            # "yesterday or today", "since March 25 before March 20": no moment is in every phrase read
            raise InvalidArguments(f"the time phrases '{window.text}' have no moment in common", argument="query",
                                   phrase=window.text)
        text = rest
    return window, text


def _cut(text: str, found: re.Match) -> str:
    return text[:found.start()] + " " + text[found.end():]
