"""Splitting an answer into the units `verify` judges: sentences and list items.

A sentence ends at `.`, `!` or `?` (with any closing quotes or brackets) followed by white
space, except after an abbreviation (Mr., e.g., a.k.a., i.e., etc., …) or an initial (J.),
or inside parentheses, brackets or double quotes. Sentences may start in lower case (a
bare name like "admin" often does). Decimals (0.8) never split, having no space after the
point. Every line is its own unit at least, so list items and table rows are judged one by
one. Citation tags that open a unit ("… sector:q. [HEDGE-3] Next") belong to the sentence
before them when it cites nothing itself. When in doubt the text stays in one unit: a unit
is kept only if all of it is supported, so a missed split can cost a kept sentence, never
let a claim through."""

from __future__ import annotations

import re

TAG = re.compile(r"\b(?:HEDGE|RULE|STEP)-\d+\b")
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e a.k.a aka approx appx no nos inc ltd co corp dept est fig gen col "
    "capt lt sgt cmdr adm gov sen rep u.s u.k u.n a.m p.m cf al viz ca resp min max sec hr hrs mt ft".split())
OPENERS, CLOSERS = "([{", ")]}"
QUOTES = "\"“”«»"
_LEADING_TAGS = re.compile(r"^(?:\s*\[?\s*(?:HEDGE|RULE|STEP)-\d+\s*(?:[,;]\s*(?:HEDGE|RULE|STEP)-\d+\s*)*\]?[.,;]?)+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+")


def _ends_abbreviation(line: str, start: int, period: int) -> bool:
    """Whether the word before the period at `period` is an abbreviation or an initial (only that word is
    looked at, so a long line costs no more than its length)."""
    token = line[line.rfind(" ", start, period) + 1:period].lstrip("([{\"'“‘")
    if not token or not token[0].isalpha() or not all(ch.isalpha() or ch == "." for ch in token):
        return False
    if len(token) == 1 and token.isupper():
        return True  # an initial: J. R. Smith
    return token.lower() in ABBREVIATIONS or re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", token) is not None


def _split_line(line: str) -> list[str]:
    parts: list[str] = []
    depth, quoted, start, i = 0, False, 0, 0
    while i < len(line):
        ch = line[i]
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth = max(0, depth - 1)
        elif ch in QUOTES and not (quoted and depth == 0 and i and line[i - 1] in ".!?"):
            quoted = not quoted if ch == '"' else ch in "“«"
        elif (ch in ".!?" and not quoted or ch in QUOTES) and depth == 0:  # a quote closing on "." ends one too
            quoted = False
            end = i + 1
            while end < len(line) and line[end] in ".!?" + CLOSERS + QUOTES + "'’":
                end += 1
            rest = line[end:]
            following = rest.lstrip()
            if rest[:1].isspace() and following and not (ch == "." and _ends_abbreviation(line, start, i)):
                parts.append(line[start:end].strip())
                start = end
            i = end
            continue
        i += 1
    parts.append(line[start:].strip())
    return [p for p in parts if p]


def split_units(answer: str) -> list[str]:
    """The answer's sentences and list items, each with the citation tags that belong to it."""
    return [unit for _, unit in split_lines(answer)]


def split_lines(answer: str) -> list[tuple[int, str]]:
    """`split_units` with the number of the line each unit is on (its first line's, for a citation that
    opened the next line), so what is kept can be laid out in the answer's own lines."""
    units: list[str] = []
    lines: list[int] = []
    for number, line in enumerate(answer.splitlines()):
        marker = _LIST_MARKER.match(line)
        parts = _split_line(line[marker.end():].strip()) if marker else _split_line(line.strip())
        if marker and parts:
            parts[0] = marker.group(0).strip() + " " + parts[0]
        for part in parts:
            leading = _LEADING_TAGS.match(part)
            if leading and leading.group(0).strip() and units and not TAG.search(units[-1]):
                units[-1] += " " + leading.group(0).strip()  # "…converged. [HEDGE-3]": the tag is the sentence's
                part = part[leading.end():].strip()
            if part:
                units.append(part)
                lines.append(number)
    return list(zip(lines, units))


def joined_lines(answer: str, kept: list[tuple[int, str]]) -> str:
    """The kept units in the answer's layout: units of one line joined by a space, one output line per input
    line that keeps something, and a blank line where the answer had one between kept lines (a heading, a
    paragraph break and a table's rows stay on their own lines)."""
    by_line: dict[int, list[str]] = {}
    for number, unit in kept:
        by_line.setdefault(number, []).append(unit)
    out: list[str] = []
    for number, line in enumerate(answer.splitlines()):
        if number in by_line:
            out.append(" ".join(by_line[number]))
        elif not line.strip() and out and out[-1]:
            out.append("")
    return "\n".join(out).strip("\n")


def strip_list_marker(unit: str) -> str:
    """A list item without its bullet or number ("1. ", "- "), which asserts nothing."""
    return _LIST_MARKER.sub("", unit, count=1)
