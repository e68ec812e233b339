"""Symbolic projections of a source memory: checked, and turned into facts rules can use.

A projection is (predicate, arguments, statement, quality). Arguments are JSON
scalars: a string becomes an atom, an integer an integer, a finite number a float,
true/false the atoms `true`/`false`. The predicate is a plain lowercase name, so
rules can name it without quotes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..datalog.program import check_user_predicate
from ..errors import InvalidArguments, InvalidProgram
from ..terms import Compound, Float, Term, format_term
from ..validation import is_name, require_text

QUALITIES = ("exact", "lossy", "context_required")
MAX_PROJECTIONS = 128
MAX_ARITY = 32
MAX_PREDICATE_CHARS = 128
MAX_STATEMENT_CHARS = 8192
MAX_STRING_ARGUMENT_CHARS = 2048
FIELDS = {"predicate", "arguments", "statement", "quality"}


@dataclass(frozen=True)
class Projection:
    predicate: str
    arguments: list  # JSON scalars, as given
    statement: str
    quality: str
    term: Term

    @property
    def fact(self) -> str:
        return format_term(self.term)


def to_value(value: Any, where: str):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArguments(f"{where} must be a finite number", argument="projections")
        return Float(value)
    if isinstance(value, str):
        if len(value) > MAX_STRING_ARGUMENT_CHARS:
            raise InvalidArguments(f"{where} is longer than {MAX_STRING_ARGUMENT_CHARS} characters",
                                   argument="projections")
        if "\x00" in value:
            raise InvalidArguments(f"{where} contains a NUL character", argument="projections")
        return value
    raise InvalidArguments(f"{where} must be a string, number or boolean", argument="projections")


def check_predicate(predicate: object, label: str, arity: int, argument: str = "projections") -> str:
    if not isinstance(predicate, str) or not is_name(predicate) or len(predicate) > MAX_PREDICATE_CHARS:
        raise InvalidArguments(f"{label} must be a lowercase name (letters, digits, _; at most "
                               f"{MAX_PREDICATE_CHARS} characters)", argument=argument)
    try:
        check_user_predicate(Compound(predicate, (0,) * arity) if arity else predicate, "projection")
    except InvalidProgram as exc:
        raise InvalidArguments(f"{label}: {exc.message}", argument=argument) from None
    return predicate


def parse_projections(items: object) -> list[Projection]:
    if items is None:
        return []
    if not isinstance(items, list) or len(items) > MAX_PROJECTIONS:
        raise InvalidArguments(f"'projections' must be a list of at most {MAX_PROJECTIONS} items",
                               argument="projections")
    out = []
    for i, item in enumerate(items):
        where = f"projections[{i}]"
        if not isinstance(item, dict) or set(item) - FIELDS or not {"predicate", "arguments", "statement"} <= set(item):
            raise InvalidArguments(f"{where} must be an object with predicate, arguments and statement "
                                   "(and optionally quality), nothing else", argument="projections")
        arguments = item["arguments"]
        if not isinstance(arguments, list) or len(arguments) > MAX_ARITY:
            raise InvalidArguments(f"{where}.arguments must be a list of at most {MAX_ARITY} values",
                                   argument="projections")
        predicate = check_predicate(item["predicate"], f"{where}.predicate", len(arguments))
        values = tuple(to_value(a, f"{where}.arguments[{j}]") for j, a in enumerate(arguments))
        statement = require_text(f"{where}.statement", item["statement"], max_chars=MAX_STATEMENT_CHARS)
        quality = item.get("quality", "exact")
        if quality not in QUALITIES:
            raise InvalidArguments(f"{where}.quality must be one of {', '.join(QUALITIES)}", argument="projections")
        term = Compound(predicate, values) if values else predicate
        out.append(Projection(predicate, list(arguments), statement, quality, term))
    return out


def same_scalar(pattern: Any, value: Any) -> bool:
    """JSON equality that keeps true apart from 1 and 1 apart from "1"."""
    return type(pattern) is type(value) and pattern == value or (
        type(pattern) in (int, float) and type(value) in (int, float) and pattern == value)
