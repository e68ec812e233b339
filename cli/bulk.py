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
from itertools import chain
from pathlib import Path
from typing import BinaryIO, Iterator

from memory.errors import InvalidArguments
from memory.knowledge.parsing import parse_fact, plain_fact, plain_row, plain_rows
from memory.store.repository import NewFact
from memory.terms import Compound, Float, String, Term, format_term
from memory.terms.codec import from_json
from memory.terms.lexer import MAX_INTEGER_DIGITS

OBSERVATION_FIELDS = {"members", "event_ts", "weight", "formation"}

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d+([eE][-+]?\d+)?$")
# A bound on what one line may hold in memory: many times what a fact's text (at most 65,536 characters) takes
# in UTF-8 even escaped, so only a file that is not a table of facts meets it.
MAX_LINE_BYTES = 16 * 2 ** 20
READ_BLOCK = 2 ** 18  # bytes read at a time (a block of lines ends at the last line end in them)


def _refuse(path: Path, reason: str, line: int | None = None) -> InvalidArguments:
    where = f"{path}:{line}" if line is not None else str(path)
    if line is None:
        return InvalidArguments(f"{where}: {reason}", file=str(path))
    return InvalidArguments(f"{where}: {reason}", file=str(path), line=line)


def _open_regular(path: Path) -> BinaryIO:
    """The file opened for reading, if it is a regular file (checked on the opened file, without blocking)."""
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
    return os.fdopen(fd, "rb")


def _not_utf8(path: Path, data: bytes, exc: UnicodeDecodeError, line: int) -> InvalidArguments:
    return _refuse(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded)", line)


def read_text(path: Path) -> str:
    """A whole UTF-8 text file, if it is a regular file."""
    with _open_regular(path) as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data, exc, data.count(b"\n", 0, exc.start) + 1) from None


def read_blocks(path: Path) -> Iterator[str]:
    """The text of a UTF-8 file in blocks of whole lines (each block ends with a `\n`, but perhaps the file's
    last), so a file of any size is read in bounded memory and its lines are split at C speed. Errors name the
    line as read_text's do (only `\n` ends a line). A line longer than MAX_LINE_BYTES is refused without
    being read whole."""
    with _open_regular(path) as handle:
        line, pending = 1, b""
        while True:
            data = handle.read(READ_BLOCK)
            chunk = pending + data if pending else data
            if not chunk:
                return
            end = chunk.rfind(b"\n") + 1 if data else len(chunk)
            block, pending = chunk[:end], chunk[end:]
            if len(pending) > MAX_LINE_BYTES:
                raise _refuse(path, f"a line longer than {MAX_LINE_BYTES:,} bytes", line + block.count(b"\n"))
            if len(block) > MAX_LINE_BYTES:  # only a block that long can hold a line that long
                for number, piece in enumerate(block.split(b"\n")):
                    if len(piece) > MAX_LINE_BYTES:
                        raise _refuse(path, f"a line longer than {MAX_LINE_BYTES:,} bytes", line + number)
            try:
                text = block.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, block, exc, line + block.count(b"\n", 0, exc.start)) from None
            line += block.count(b"\n")
            if text:
                yield text


def count_lines(path: Path) -> int:
    """How many lines a file has (what a progress bar counts toward), read in blocks."""
    ends, last = 0, b"\n"
    with _open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            ends, last = ends + block.count(b"\n"), block[-1:]
    return ends + (last != b"\n")


def cell_value(text: str, path: Path, line: int) -> Term:
    """A CSV cell: integers and finite floats as numbers, anything else as the atom with exactly that text."""
    if _INT.match(text):
        if len(text) - text.startswith("-") > MAX_INTEGER_DIGITS:
            raise _refuse(path, f"an integer with more than {MAX_INTEGER_DIGITS} digits", line)
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
    plain = plain_fact(predicate, args)  # most rows: the same fact without printing and parsing it
    if plain is not None:
        return plain
    term = Compound(predicate, tuple(args)) if args else predicate
    return parse_fact(format_term(term), where)


def read_csv(path: Path, predicate: str | None, header: bool) -> Iterator[Term | NewFact]:
    """One fact per row (plain rows already in stored form); every row has as many cells as the first (a
    ragged file would define several predicates of different arities).

    Blocks of plain rows, the usual bulk data, are turned into facts a block at a time (knowledge/parsing.py
    plain_rows); from the first block that is not all plain, the csv module reads the rest row by row."""
    blocks = read_blocks(path)
    width, lines = None, 0  # the row width once known; the file's lines read so far
    if predicate:
        for block in blocks:
            plain = _plain_block(predicate, block, width, header and not lines)
            if plain is None:
                blocks = chain([block], blocks)
                break
            facts, width = plain
            lines += block.count("\n")
            yield from facts
        else:
            return
    yield from _csv_rows(path, predicate, header, blocks, lines, width)


def _plain_block(predicate: str, block: str, width: int | None, with_header: bool) -> tuple[list, int] | None:
    """(facts, width) of a block whose lines are all plain rows (after the header line when `with_header`),
    or None. Without quotes or `\r`, the csv module splits a line at every comma: so does this."""
    if '"' in block or "\r" in block:
        return None
    body = block[:-1] if block.endswith("\n") else block
    if with_header:
        first, newline, body = body.partition("\n")
        if not first:
            return None
        width = first.count(",") + 1
        if not newline:  # the header line was all the block held
            return [], width
    if width is None:
        width = body.partition("\n")[0].count(",") + 1
    facts = plain_rows(predicate, width, body)
    return None if facts is None else (facts, width)


def _csv_rows(path: Path, predicate: str | None, header: bool, blocks: Iterator[str], offset: int,
              width: int | None) -> Iterator[Term | NewFact]:
    """The facts of rows the csv module reads from `blocks`, which start after `offset` lines of the file."""
    reader = csv.reader(_csv_lines(blocks))
    try:
        for row in reader:
            if not row:
                continue
            if len(row) != width:
                if width is not None:
                    raise _refuse(path, f"{len(row)} cell(s) where the first row has {width}",
                                  offset + reader.line_num)
                width = len(row)
                if header and offset + reader.line_num == 1:
                    continue
            # most rows: what the general way gives, stored form included, without converting, printing, parsing
            plain = plain_row(predicate, row) if predicate else None
            if plain is not None:
                yield plain
                continue
            line = offset + reader.line_num
            yield _fact(predicate, [cell_value(c, path, line) for c in row], f"{path}:{line}")
    except csv.Error as exc:
        raise _refuse(path, f"not CSV ({exc})", offset + reader.line_num) from None


def _csv_lines(blocks: Iterator[str]) -> Iterator[str]:
    """The lines of a file's blocks as the csv module reads them from a file opened with newline="" (a lone
    `\r` ends a line too): blocks end at a `\n`, so splitting each block alone splits the file the same way."""
    for block in blocks:
        yield from io.StringIO(block, newline="")


def _newline_lines(path: Path) -> Iterator[str]:
    """The file's lines, ended by `\n` only (as in JSON Lines), without it."""
    for block in read_blocks(path):
        lines = block.split("\n")
        if block.endswith("\n"):
            lines.pop()  # what follows the block's last line end is the next block's
        yield from lines


def _json_lines(path: Path) -> Iterator[tuple[str, object]]:
    """(where, value) for each non-blank line of a JSON Lines file; NaN, Infinity, numbers too large
    for a float and integers longer than the parser's are refused."""
    for line, raw in enumerate(_newline_lines(path), 1):
        if not raw.strip():
            continue
        where = f"{path}:{line}"
        try:
            yield where, json.loads(raw, parse_constant=_non_finite(path, line), parse_float=_finite_float(path, line),
                                    parse_int=_bounded_int(path, line))
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


def _bounded_int(path: Path, line: int):
    def parse(text: str) -> int:
        if len(text) - text.startswith("-") > MAX_INTEGER_DIGITS:
            raise _refuse(path, f"an integer with more than {MAX_INTEGER_DIGITS} digits", line)
        return int(text)
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
