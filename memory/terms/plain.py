"""Plain facts: the canonical text and stored JSON of a fact built directly, without the printer and the codec.

A bulk import of a million rows spent most of its time printing and re-parsing terms that are nothing but
a name applied to small integers and unquoted atoms. For those, the general forms are fixed strings:

- a plain atom (ASCII letter first lower case, then letters, digits, `_`; not an operator) prints as its
  name in every position and encodes as its name in double quotes (nothing in it needs a JSON escape);
- a plain integer (at most 18 digits, so strictly between -10**18 and 10**18) prints and encodes as `str(n)`, and reads back as the same integer;
- a compound whose functor is a plain atom prints as `f(a1, a2)`, never in operator form.

tests/test_bulk_import.py holds these against format_term, encode_args and the parser for every value
hypothesis generates.
"""

from __future__ import annotations

import re

from .operators import ALL_OPERATORS

_ATOM = r"[a-z][A-Za-z0-9_]*"
_INTEGER = r"-?[0-9]{1,18}"  # as str(n) writes a plain integer
_CELL = rf"{_ATOM}|0|-?[1-9][0-9]{{0,17}}"  # the same, where the text must already be the canonical one
_PLAIN_ATOM = re.compile(_ATOM)
_PLAIN_CELLS = re.compile(rf"(?:{_CELL})(?:,(?:{_CELL}))*")
_INTEGER_CELL = re.compile(r"(?:\A|[,\n])[-0-9]")  # in a block of plain cells: one that is an integer
_ATOM_START = re.compile("[a-z]")  # ... and one that is an atom
_PLAIN_ROWS: dict[int, re.Pattern] = {}  # width -> a block of lines of that many plain cells
_PLAIN_JSON = re.compile(rf"(?:\"{_ATOM}\"|{_INTEGER})(?:,(?:\"{_ATOM}\"|{_INTEGER}))*")


def is_plain_atom(value: object) -> bool:
    return type(value) is str and value not in ALL_OPERATORS and _PLAIN_ATOM.fullmatch(value) is not None


def plain_cell_forms(cells: list[str]) -> tuple[str, str] | None:
    """(canonical text, stored JSON) of the arguments a CSV row's cells are, when every cell is a plain atom's
    name or a plain integer's canonical digits (no leading zero, no `-0`), or None. Checked with one match over
    the row: with exactly one comma per separator, no cell holds a comma, so each cell is matched alone."""
    joined = ",".join(cells)
    if (joined.count(",") != len(cells) - 1 or _PLAIN_CELLS.fullmatch(joined) is None
            or not ALL_OPERATORS.isdisjoint(cells)):
        return None
    return joined.replace(",", ", "), "[" + ",".join([f'"{c}"' if c[0] >= "a" else c for c in cells]) + "]"


def plain_block_forms(functor: str, body: str, width: int) -> tuple[list[str], list[str]] | None:
    """plain_cell_forms for many CSV lines at once: (canonical texts, stored JSON) of `functor(cells...)` for
    each line of `body` (lines joined by `\n`, no line end after the last) when every line is `width` cells
    as plain_cell_forms takes them; None otherwise. One match checks the whole block, and the forms are made
    from it with string operations over the block: the JSON quotes each atom, a run of letters, digits and
    `_` from a lower-case letter on, which no integer cell holds."""
    if not is_plain_atom(functor):
        return None
    rows = _PLAIN_ROWS.get(width)
    if rows is None:
        if len(_PLAIN_ROWS) >= 64:  # widths come from input: keep the compiled patterns few
            _PLAIN_ROWS.clear()
        row = rf"(?:{_CELL})" + rf"(?:,(?:{_CELL}))" * (width - 1)
        rows = _PLAIN_ROWS[width] = re.compile(rf"{row}(?:\n{row})*")
    if rows.fullmatch(body) is None or not ALL_OPERATORS.isdisjoint(body.replace("\n", ",").split(",")):
        return None
    opened = f"{functor}("
    texts = (opened + body.replace(",", ", ").replace("\n", ")\n" + opened) + ")").split("\n")
    if _INTEGER_CELL.search(body) is None:  # atoms only (the usual case): quote around every separator
        encoded = '["' + body.replace(",", '","').replace("\n", '"]\n["') + '"]'
    else:
        quoted = body if _ATOM_START.search(body) is None else _PLAIN_ATOM.sub(_quoted, body)
        encoded = "[" + quoted.replace("\n", "]\n[") + "]"
    return texts, encoded.split("\n")


def _quoted(atom: re.Match) -> str:
    return f'"{atom.group()}"'


def plain_forms(functor: str, args: tuple | list) -> tuple[str, str] | None:
    """(canonical text, stored JSON arguments) of `functor(args...)` when the functor and every argument are
    plain (at least one argument), or None. The JSON is built first and checked with one match: with exactly
    one comma per separator, each part is a double-quoted atom name (only a `str` is quoted) or an integer's
    digits (only an `int` is written bare; anything else becomes `?`, which no part matches). The text is then
    the JSON without its quotes, with `, ` between the arguments."""
    if not args or not is_plain_atom(functor):
        return None
    encoded = ",".join([f'"{a}"' if type(a) is str else str(a) if type(a) is int else "?" for a in args])
    if (encoded.count(",") != len(args) - 1 or _PLAIN_JSON.fullmatch(encoded) is None
            or not ALL_OPERATORS.isdisjoint(args)):
        return None
    return f"{functor}({encoded.replace(chr(34), '').replace(',', ', ')})", f"[{encoded}]"
