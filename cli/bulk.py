"""Reading import files: Prolog text, bulk facts from CSV and JSON Lines, observations.

Every error names the file (and the line where there is one). Only regular files are read: a FIFO
would block forever and a device has no end. Numbers must be finite, as `remember_fact` requires.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Iterator

from memory.errors import InvalidArguments
from memory.knowledge.parsing import parse_fact
from memory.terms import Compound, Float, String, Term, format_term
from memory.terms.codec import from_json

OBSERVATION_FIELDS = {"members", "event_ts", "weight", "formation"}

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+([eE][-+]?\d+)?$")


def _refuse(path: Path, reason: str, line: int | None = None) -> InvalidArguments:
    where = f"{path}:{line}" if line is not None else str(path)
    return InvalidArguments(f"{where}: {reason}", file=str(path), **({"line": line} if line is not None else {}))


def read_text(path: Path) -> str:
    """A whole UTF-8 text file, if it is a regular file (checked on the opened file, without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _refuse(path, f"cannot read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise _refuse(path, f"{kind}; only regular files can be imported")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _refuse(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded)", line) from None


def cell_value(text: str, path: Path, line: int) -> Term:
    """A CSV cell: integers and finite floats as numbers, anything else as the atom with exactly that text."""
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        value = float(text)
        if not math.isfinite(value):
            raise _refuse(path, f"{text} is not a finite number", line)
        return Float(value)
    return text


def _fact(predicate: str | None, args: list, where: str) -> Term:
    if not predicate:
        raise InvalidArguments(f"{where}: rows without a predicate need --predicate")
    term = Compound(predicate, tuple(args)) if args else predicate
    return parse_fact(format_term(term), where)


def read_csv(path: Path, predicate: str | None, header: bool) -> Iterator[Term]:
    """One fact per row; every row has as many cells as the first (a ragged file would define several
    predicates of different arities)."""
    width = None
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    try:
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            if width is None:
                width = len(row)
            elif len(row) != width:
                raise _refuse(path, f"{len(row)} cell(s) where the first row has {width}", line)
            if header and line == 1:
                continue
            yield _fact(predicate, [cell_value(c, path, line) for c in row], f"{path}:{line}")
    except csv.Error as exc:
        raise _refuse(path, f"not CSV ({exc})", reader.line_num) from None


def _json_lines(path: Path) -> Iterator[tuple[str, object]]:
    """(where, value) for each non-blank line of a JSON Lines file; NaN, Infinity and numbers too large
    for a float are refused."""
    for line, raw in enumerate(read_text(path).split("\n"), 1):  # only newlines end a line (as in JSON Lines)
        if not raw.strip():
            continue
        where = f"{path}:{line}"
        try:
            yield where, json.loads(raw, parse_constant=_non_finite(path, line), parse_float=_finite_float(path, line))
        except json.JSONDecodeError as exc:
            raise InvalidArguments(f"{where}: not JSON ({exc.msg})", file=str(path), line=line) from None


def _non_finite(path: Path, line: int):
    def refuse(name: str):
        raise _refuse(path, f"{name} is not a finite number", line)
    return refuse


def _finite_float(path: Path, line: int):
    def parse(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise _refuse(path, f"{text} is not a finite number", line)
        return value
    return parse


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
