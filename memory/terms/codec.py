"""Terms as JSON values, for storage (`facts.args`) and for structured results.

atom -> "text", integer -> 1, float -> 1.5 (always with a decimal point or
exponent, so it reads back as a float), string -> {"string": "text"},
compound -> {"functor": "f", "args": [...]}, list -> {"list": [...]} (plus
"tail" when it is not `[]`). Variables are not encodable.

Lists are flat, so a 10,000-item list is one JSON array, not 10,000 nested
objects. Past MAX_JSON_DEPTH levels a subterm is written in postfix order,
{"postfix": [leaf, ..., {"functor": "f", "arity": 2}, ...]}, one flat array: JSON
stays shallow for SQLite's json functions (depth limit 1000) and for protocol
serializers, whatever the depth of the term (the engine can build terms deeper
than the parser accepts), and both directions run without recursion there.
"""

from __future__ import annotations

import gc
import json
from operator import itemgetter
from typing import Any

from .model import LIST_FUNCTOR, NIL, Compound, Float, String, Term, Var, fold_postorder, list_items, make_list

MAX_JSON_DEPTH = 64  # JSON objects/arrays nested in one encoded term before it falls back to text


def to_json(term: Term, _depth: int = 0) -> Any:
    kind = type(term)
    if kind is str or kind is int:
        return term
    if kind is Float:
        return term.value  # type: ignore[union-attr]
    if kind is String:
        return {"string": term.value}  # type: ignore[union-attr]
    if kind is Compound:
        if _depth >= MAX_JSON_DEPTH:
            return {"postfix": _postfix(term)}
        if term.functor == LIST_FUNCTOR and len(term.args) == 2:  # type: ignore[union-attr]
            items, tail = list_items(term)
            encoded: dict[str, Any] = {"list": [to_json(item, _depth + 2) for item in items]}
            if tail != NIL:
                encoded["tail"] = to_json(tail, _depth + 1)
            return encoded
        return {"functor": term.functor, "args": [to_json(a, _depth + 2) for a in term.args]}  # type: ignore[union-attr]
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
        if "list" in value:
            tail = from_json(value["tail"]) if "tail" in value else NIL
            return make_list([from_json(item) for item in value["list"]], tail)
        if "postfix" in value:
            return _from_postfix(value["postfix"])
        return Compound(value["functor"], tuple(from_json(a) for a in value["args"]))
    raise ValueError(f"not an encoded term: {value!r}")


def _postfix(term: Term) -> list:
    """The term in post-order: each leaf encoded, each compound as its functor and arity after its arguments."""
    out: list = []
    fold_postorder(term, lambda leaf: out.append(to_json(leaf)),
                   lambda compound, _: out.append({"functor": compound.functor, "arity": len(compound.args)}))
    return out


def _from_postfix(items: list) -> Term:
    built: list = []
    for item in items:
        if type(item) is dict and "arity" in item:
            count = item["arity"]
            args = tuple(built[len(built) - count:])
            del built[len(built) - count:]
            built.append(Compound(item["functor"], args))
        else:
            built.append(from_json(item))
    if len(built) != 1:
        raise ValueError("not an encoded term: unbalanced postfix sequence")
    return built[0]


def encode_args(args: tuple) -> str:
    return json.dumps([to_json(a) for a in args], ensure_ascii=False, separators=(",", ":"))


def decode_args(text: str) -> tuple:
    return _args(json.loads(text))


DECODE_RUN = 20_000  # argument lists parsed in one call of the JSON parser


def decode_many(texts: list[str]) -> list[tuple]:
    """`decode_args` of each text: runs of them parsed as one JSON array (one parser call instead of one per
    row: about 40 % less time to load a relation). A run of rows of one length holding only atoms and integers
    (a bulk relation) is checked a column at a time, in C, and its atoms shared: an atom named in many rows is
    one string object (a million pairs over half a million nodes hold half a million strings, not two million:
    about 70 MB less for each process holding them)."""
    out: list[Any] = []
    shared: dict = {}
    paused = gc.isenabled() and len(texts) > DECODE_RUN
    if paused:  # a million new tuples would start the cyclic collector over and over; they never form cycles
        gc.disable()
    try:
        _decode_runs(texts, out, shared)
    finally:
        if paused:
            gc.enable()
    return out


def _decode_runs(texts: list[str], out: list, shared: dict) -> None:
    for start in range(0, len(texts), DECODE_RUN):
        rows = json.loads("[" + ",".join(texts[start:start + DECODE_RUN]) + "]")
        columns = _plain_columns(rows, shared)
        if columns is None:
            out += map(_args, rows)
        elif columns:
            out += zip(*columns)
        else:  # integers only: nothing to share
            out += map(tuple, rows)


def _plain_columns(rows: list, shared: dict) -> list | None:
    """When all rows have one length (at least 1) and hold only atoms and integers: their columns, each atom
    shared through `shared` ([] when there are no atoms); else None."""
    if not rows or len(set(map(len, rows))) != 1 or not rows[0]:
        return None
    columns, atoms = [], False
    for position in range(len(rows[0])):
        column = list(map(itemgetter(position), rows))
        kinds = set(map(type, column))
        if kinds == {int}:
            columns.append(column)
        elif kinds <= PLAIN_TYPES:
            columns.append(list(map(shared.setdefault, column, column)))
            atoms = True
        else:
            return None
    return columns if atoms else []


PLAIN_TYPES = frozenset((str, int))


def _args(values: list) -> tuple:
    # Fast path: most facts hold only atoms and integers, which need no conversion.
    for v in values:
        if type(v) is not str and type(v) is not int:
            return tuple(from_json(x) for x in values)
    return tuple(values)
