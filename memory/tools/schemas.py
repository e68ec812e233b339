"""Small builders for the JSON Schemas the tools declare."""

from __future__ import annotations

import json
from typing import Any

from ..validation import MAX_NAME_CHARS, MAX_TEXT_CHARS, NAME_PATTERN

MEMORY_DESCRIPTION = "Target memory segment (optional, defaults to default memory)"


def text(description: str, max_length: int = MAX_TEXT_CHARS) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def integer(description: str, minimum: int | None = None, maximum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def name_arg(description: str) -> dict[str, Any]:
    """An atom-like name (segment, snapshot, assumption): the same rule the services enforce."""
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "pattern": NAME_PATTERN,
            "description": description}


def memory_arg() -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": 128, "description": MEMORY_DESCRIPTION}


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


def out(properties: dict[str, Any], required: list[str] | None = None, *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """Output schemas list what is always there; they stay open to additions. A value that may be missing is an
    `optional` property, left out of the result when it has none (never `"type": [X, "null"]`, which some hosts'
    schema subsets reject)."""
    return {"type": "object", "properties": properties,
            "required": required or [name for name in properties if name not in optional]}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
OBJECT = {"type": "object"}
STRINGS = {"type": "array", "items": {"type": "string"}}
ROWS = {"type": "array", "items": {"type": "object"}}


def compact_json(value: Any) -> str:
    """The reference tools' JSON texts: no spaces, Unicode kept. Values nested deeper than the C encoder's
    recursion allows (a proof thousands of steps deep) are written with an explicit stack instead."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        return _dumps_iteratively(value)


def _dumps_iteratively(value: Any) -> str:
    out: list[str] = []
    stack: list[Any] = [value]
    close = object()  # marks where a container's closing bracket goes
    while stack:
        item = stack.pop()
        if isinstance(item, tuple) and len(item) == 2 and item[0] is close:
            out.append(item[1])
        elif isinstance(item, dict):
            out.append("{")
            stack.append((close, "}"))
            entries = list(item.items())
            for i, (key, child) in enumerate(reversed(entries)):
                stack.append(child)
                prefix = "," if i < len(entries) - 1 else ""
                stack.append((close, prefix + json.dumps(str(key), ensure_ascii=False) + ":"))
        elif isinstance(item, (list, tuple)):
            out.append("[")
            stack.append((close, "]"))
            for i, child in enumerate(reversed(item)):
                stack.append(child)
                if i < len(item) - 1:
                    stack.append((close, ","))
        else:
            out.append(json.dumps(item, ensure_ascii=False))
    return "".join(out)
