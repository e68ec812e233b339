"""A tool's contract as typed models: its arguments (`ToolInput`) and its structured result (`ToolOutput`).

Each tool's input and output are pydantic models declared next to its handler. The JSON Schemas the MCP list,
the CLI options and docs/tools.md publish are generated from them here, in the subset every client accepts:
no `title`s, no `$ref`s, no `"type": [X, "null"]` (an optional property is simply not required), inputs
closed (`additionalProperties: false`), outputs open to additions.

Arguments are checked against the generated schema (one validator, so the published contract and the check
cannot differ, and the messages a model reads are JSON Schema's, worded in registry.py) and then become the
input model without a second validation pass: a JSON value keeps its exact type (1 stays an integer where a
number is allowed).
"""

from __future__ import annotations

import copy
import functools
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, WithJsonSchema, model_serializer

from ..validation import MAX_NAME_CHARS, MAX_TEXT_CHARS, NAME_PATTERN

MEMORY_DESCRIPTION = "The segment (default: default)"


class ToolInput(BaseModel):
    """A tool's arguments. Unknown arguments are refused (the schema says `additionalProperties: false`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _Result(BaseModel):
    """A structured result or an object in one. A field with a default of None is optional: left out when it has
    no value, at every depth (the published schemas never type a value as null, so a null would break a
    client that checks them). Extra keys are kept, as the output schemas stay open to additions."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _without_missing(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        required = _required_fields(type(self))
        return {key: value for key, value in data.items() if value is not None or key in required}


class ToolOutput(_Result):
    """A tool's structured result."""

    def to_structured(self) -> dict[str, Any]:
        """The result as `structuredContent`."""
        return self.model_dump()


class OutputPart(_Result):
    """An object nested in a structured result."""


class Empty(ToolInput):
    """A tool that takes no arguments."""


Segment = Annotated[str, Field(min_length=1, max_length=128, description=MEMORY_DESCRIPTION)]


class SegmentInput(ToolInput):
    """A tool whose only argument is the segment it works on."""

    memory: Segment | None = None


# --- field constraints, used as `Annotated[type, constraint]` ----------------------------------------------

def text_field(description: str, max_length: int = MAX_TEXT_CHARS) -> Any:
    """A non-empty string of at most `max_length` characters."""
    return Field(min_length=1, max_length=max_length, description=description)


def name_field(description: str) -> Any:
    """An atom-like name (segment, snapshot, assumption): the same rule the services enforce."""
    return Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=NAME_PATTERN, description=description)


def int_field(description: str, minimum: int | None = None, maximum: int | None = None) -> Any:
    return Field(ge=minimum, le=maximum, description=description)


def about(description: str) -> Any:
    return Field(description=description)


def shaped(model: type[BaseModel], description: str | None = None) -> Any:
    """A plain dict published with `model`'s schema: for results too many to build as models one by one
    (proof nodes), whose shape is still declared once."""
    schema = _clean(model.model_json_schema(mode="validation"))
    schema.pop("additionalProperties", None)
    schema.pop("description", None)
    schema["required"] = [key for key, field in model.model_fields.items() if field.is_required()]
    if description:
        schema["description"] = description
    return WithJsonSchema(schema)


Rows = list[dict[str, Any]]
Strings = list[str]


# --- the published schemas -----------------------------------------------------------------------------------

def input_schema(model: type[ToolInput]) -> dict[str, Any]:
    """The closed JSON Schema of a tool's arguments, required = the fields without a default."""
    schema = _clean(model.model_json_schema())
    return {"type": "object", "properties": _in_field_order(model, schema.get("properties", {})),
            "required": [name for name, field in model.model_fields.items() if field.is_required()],
            "additionalProperties": False}


def output_required(model: type[ToolOutput]) -> list[str]:
    return list(_required_fields(model))


@functools.cache
def _required_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, field in model.model_fields.items() if field.is_required())


def output_schema(model: type[ToolOutput]) -> dict[str, Any]:
    """The open JSON Schema of a tool's structured result: what is always there is required; an optional
    value is not required and never typed as null (some hosts' schema subsets reject null types)."""
    schema = _clean(model.model_json_schema(mode="validation"))
    return {"type": "object", "properties": _in_field_order(model, schema.get("properties", {})),
            "required": output_required(model)}


def _in_field_order(model: type[BaseModel], properties: dict[str, Any]) -> dict[str, Any]:
    """Properties in the order the model declares its fields (pydantic lists a subclass's own first)."""
    return {name: properties[name] for name in model.model_fields if name in properties}


def _clean(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic's JSON Schema reduced to the published subset: references inlined, titles and null defaults
    dropped, `X | None` published as X, open objects and any-item arrays written as plain types."""
    definitions = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = copy.deepcopy(definitions[node["$ref"].rsplit("/", 1)[-1]])
            target.pop("description", None)  # a nested model's docstring is for readers of the code
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**target, **extra})
        node = {key: walk(value) for key, value in node.items() if key not in ("title",)}
        if node.get("default", 0) is None:
            del node["default"]
        options = node.get("anyOf")
        if options is not None:
            kept = [option for option in options if option != {"type": "null"}]
            if len(kept) < len(options) and len(kept) == 1:
                # `X | None = None`: optional, published as X with the field's own keywords.
                node = {**kept[0], **{k: v for k, v in node.items() if k != "anyOf"}}
        if node.get("additionalProperties") is True:
            del node["additionalProperties"]
        if node.get("items") == {}:
            del node["items"]
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("required", [])  # an object with properties always says which are required
        return _ordered(node)

    return walk(schema)


# The order a reader expects keywords in (pydantic sorts them by name): the type, its constraints, the words last.
_KEYWORD_ORDER = ("type", "enum", "anyOf", "minLength", "maxLength", "pattern", "minimum", "exclusiveMinimum",
                  "maximum", "minItems", "maxItems", "items", "properties", "required", "additionalProperties")


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(_KEYWORD_ORDER)}
    return dict(sorted(node.items(), key=lambda item: rank.get(item[0], len(rank))))


# --- arguments into the typed model --------------------------------------------------------------------------

def construct(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """Build `model` from arguments the generated schema has already checked: nested models built too, every
    JSON value kept as given, defaults filled in."""
    values: dict[str, Any] = {}
    for name, value in data.items():
        field = model.model_fields.get(name)
        values[name] = _construct_value(field.annotation, value) if field is not None else value
    return model.model_construct(**values)


def _construct_value(annotation: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(annotation)
    if origin is Annotated:
        return _construct_value(get_args(annotation)[0], value)
    if origin in (Union, UnionType):
        options = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _construct_value(options[0], value) if len(options) == 1 else value
    if origin is list and isinstance(value, list):
        (item,) = get_args(annotation) or (Any,)
        return [_construct_value(item, element) for element in value]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
        return construct(annotation, value)
    return value

