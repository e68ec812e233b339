"""Reading bulk facts from CSV and JSON Lines files into parsed terms."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Iterator

from memory.errors import InvalidArguments
from memory.knowledge.parsing import parse_fact
from memory.terms import Compound, Float, String, Term
from memory.terms.codec import from_json

OBSERVATION_FIELDS = {"members", "event_ts", "weight", "formation"}

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+([eE][-+]?\d+)?$")


def cell_value(text: str) -> Term:
    """A CSV cell: integers and floats as numbers, anything else as the atom with exactly that text."""
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return Float(float(text))
    return text


def _fact(predicate: str | None, args: list, where: str) -> Term:
    if not predicate:
        raise InvalidArguments(f"{where}: rows without a predicate need --predicate")
    term = Compound(predicate, tuple(args)) if args else predicate
    from memory.terms import format_term
    return parse_fact(format_term(term), where)


def read_csv(path: Path, predicate: str | None, header: bool) -> Iterator[Term]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        for line, row in enumerate(reader, 1):
            if line == 1 and header:
                continue
            if not row:
                continue
            yield _fact(predicate, [cell_value(c) for c in row], f"{path.name}:{line}")


def _json_lines(path: Path) -> Iterator[tuple[str, object]]:
    """(where, value) for each non-blank line of a JSON Lines file."""
    with path.open(encoding="utf-8") as handle:
        for line, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            where = f"{path.name}:{line}"
            try:
                yield where, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InvalidArguments(f"{where}: not JSON ({exc.msg})") from None


def read_observations(path: Path) -> list[dict]:
    """Each line: {"members": [...], "event_ts"?: int, "weight"?: number, "formation"?: text}."""
    out = []
    for where, value in _json_lines(path):
        if not isinstance(value, dict) or "members" not in value or set(value) - OBSERVATION_FIELDS:
            raise InvalidArguments(f"{where}: expected {{\"members\": [...]}} with optional event_ts, weight, formation")
        out.append(value)
    return out


def read_jsonl(path: Path, predicate: str | None) -> Iterator[Term]:
    """Each line: a JSON array of arguments (with --predicate), {"predicate": p, "args": [...]}, or {"fact": text}."""
    for where, value in _json_lines(path):
        if isinstance(value, list):
            yield _fact(predicate, [_json_arg(v, where) for v in value], where)
        elif isinstance(value, dict) and "fact" in value:
            yield parse_fact(value["fact"], where)
        elif isinstance(value, dict) and "args" in value:
            yield _fact(value.get("predicate") or predicate, [_json_arg(v, where) for v in value["args"]], where)
        else:
            raise InvalidArguments(f"{where}: expected an array, {{\"fact\": …}} or {{\"predicate\": …, \"args\": […]}}")


def _json_arg(value, where: str) -> Term:
    try:
        if isinstance(value, bool) or value is None:
            raise ValueError
        if isinstance(value, dict) and "string" in value:
            return String(value["string"])
        return from_json(value)
    except (ValueError, KeyError, TypeError):
        raise InvalidArguments(f"{where}: {json.dumps(value)} is not an encodable argument") from None
