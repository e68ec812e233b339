"""Plain facts: the canonical text and stored JSON of a fact built directly, without the printer and the codec.

A bulk import of a million rows spent most of its time printing and re-parsing terms that are nothing but
a name applied to small integers and unquoted atoms. For those, the general forms are fixed strings:

- a plain atom (ASCII letter first lower case, then letters, digits, `_`; not an operator) prints as its
  name in every position and encodes as its name in double quotes (nothing in it needs a JSON escape);
- an integer with fewer than 19 digits prints and encodes as `str(n)`, and reads back as the same integer;
- a compound whose functor is a plain atom prints as `f(a1, a2)`, never in operator form.

tests/test_bulk_import.py holds these against format_term, encode_args and the parser for every value
hypothesis generates.
"""

from __future__ import annotations

import re

from .operators import ALL_OPERATORS

_PLAIN_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*")
PLAIN_INT_LIMIT = 10 ** 18  # integers strictly between -limit and limit are plain
_PLAIN_INT_CHARS = 19  # the longest text of a plain integer: a sign and 18 digits


def is_plain_atom(value: object) -> bool:
    return type(value) is str and _PLAIN_ATOM.fullmatch(value) is not None and value not in ALL_OPERATORS


def _plain_args(args: tuple | list) -> bool:
    for value in args:
        kind = type(value)
        if kind is int:
            if not -PLAIN_INT_LIMIT < value < PLAIN_INT_LIMIT:  # type: ignore[operator]
                return False
        elif kind is not str or _PLAIN_ATOM.fullmatch(value) is None or value in ALL_OPERATORS:  # type: ignore[arg-type]
            return False
    return True


def is_plain_fact(functor: str, args: tuple | list) -> bool:
    """Whether `functor(args...)` (at least one argument) has the plain forms below."""
    return bool(args) and is_plain_atom(functor) and _plain_args(args)


def plain_text_bound(functor: str, args: tuple | list) -> int:
    """An upper bound on the length of a plain fact's text, without building it."""
    return len(functor) + 2 * len(args) + sum(len(a) if type(a) is str else _PLAIN_INT_CHARS for a in args)


def plain_forms(functor: str, args: tuple | list) -> tuple[str, str] | None:
    """(canonical text, stored JSON arguments) of a plain fact, or None when it is not plain."""
    if not is_plain_fact(functor, args):
        return None
    texts = [a if type(a) is str else str(a) for a in args]
    return (f"{functor}({', '.join(texts)})",
            "[" + ",".join(f'"{a}"' if type(a) is str else t for a, t in zip(args, texts)) + "]")
