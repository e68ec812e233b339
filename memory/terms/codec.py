"""Terms as JSON values, for storage (`facts.args`) and for structured results.

atom -> "text", integer -> 1, float -> 1.5 (always with a decimal point or
exponent, so it reads back as a float), string -> {"string": "text"},
compound -> {"functor": "f", "args": [...]}. Variables are not encodable.
"""

from __future__ import annotations

import json
from typing import Any

from .model import Compound, Float, String, Term, Var


def to_json(term: Term) -> Any:
    kind = type(term)
    if kind is str or kind is int:
        return term
    if kind is Float:
        return term.value  # type: ignore[union-attr]
    if kind is String:
        return {"string": term.value}  # type: ignore[union-attr]
    if kind is Compound:
        return {"functor": term.functor, "args": [to_json(a) for a in term.args]}  # type: ignore[union-attr]
    if kind is Var:
        raise ValueError("a variable has no JSON encoding")
    raise TypeError(f"not a term: {term!r}")


def from_json(value: Any) -> Term:
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        return Float(value)
    if kind is dict:
        if "string" in value:
            return String(value["string"])
        return Compound(value["functor"], tuple(from_json(a) for a in value["args"]))
    raise ValueError(f"not an encoded term: {value!r}")


def encode_args(args: tuple) -> str:
    return json.dumps([to_json(a) for a in args], ensure_ascii=False, separators=(",", ":"))


def decode_args(text: str) -> tuple:
    values = json.loads(text)
    # Fast path: most facts hold only atoms and integers, which need no conversion.
    for v in values:
        if type(v) is not str and type(v) is not int:
            return tuple(from_json(x) for x in values)
    return tuple(values)
