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
    """The reference tools' JSON texts: no spaces, Unicode kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
