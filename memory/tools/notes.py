"""The lines a reply's text adds after its main content, so a model that reads only the text knows what the
structured result would tell it: warnings, a cut page and how to get the next one, instants a person reads.

Written once here for every tool; `%` starts each note (Prolog's comment), so the main content above it (a
reference tool's JSON, a list of clauses) stays what the references return when nothing needs saying."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable


def warning_lines(warnings: Iterable[str] | None) -> list[str]:
    return [f"% warning: {w}" for w in warnings or ()]


def page_line(shown: int, total: int, offset: int, what: str = "answers") -> str | None:
    """`% 1000 of 1225 answers shown (offset 0); next page: offset 1000`, or None when nothing was cut. A page
    that shows none of them says why (an offset past the end, or a limit of 0), never a next page that is this
    one again."""
    if not shown and total:
        if offset >= total:
            return f"% none shown: offset {offset} is past the last of {total} {what} (offset 0 starts them)"
        return f"% 0 of {total} {what} shown (limit 0 counts them); a limit of 1 or more shows them"
    if offset + shown >= total:
        return None
    return f"% {shown} of {total} {what} shown (offset {offset}); next page: offset {offset + shown}"


def listed_line(what: str, items: list[str], limit: int = 20, sep: str = ", ") -> str:
    """`% facts removed (23): a, b, … (+3 more)`: what a change touched, the first `limit` of them named."""
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"% {what} ({len(items)}): {sep.join(items[:limit])}{more}"


def with_notes(text: str, notes: Iterable[str | None]) -> str:
    lines = [note for note in notes if note]
    return "\n".join([text, *lines]) if lines else text


def iso(seconds: int | float) -> str:
    """Epoch seconds as an ISO-8601 UTC instant (2026-05-28T20:26:40Z); out-of-range values as given."""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return str(seconds)
