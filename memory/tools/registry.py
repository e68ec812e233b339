"""The tool registry: each tool defined once, validated once, called the same way from every surface."""

from __future__ import annotations

import functools
import re
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

from ..errors import DatalogMemoryError, InvalidArguments
from .models import ToolInput, ToolOutput, construct, input_schema, output_schema


@dataclass(frozen=True)
class Toolset:
    name: str
    description: str


# The toolsets (each tool is in exactly one: its family, `group`), in the order surfaces list them (the CLI's
# help panels, the tool docs, enable_toolsets). Which tools a server lists is chosen in toolsets.py.
TOOLSETS: tuple[Toolset, ...] = (
    Toolset("knowledge", "facts and rules: store, query, explain, list, edit in bulk, rename, materialize"),
    Toolset("beliefs", "assumptions: believe facts under a named assumption, ask why, retract it"),
    Toolset("snapshots", "save and restore a segment's facts, rules and assumptions"),
    Toolset("segments", "create and mount named memory segments (project or global)"),
    Toolset("memories", "exact source text with stable ids: keep, get, search, recall, forget"),
    Toolset("evidence", "time-stamped observations: record, recall, reason, prove, verify answers, detect patterns"),
    Toolset("admin", "connectivity, database health and the toolsets themselves"),
)
GROUPS = tuple(t.name for t in TOOLSETS)


class ArgumentsRejected(InvalidArguments):
    """Arguments that fail the tool's input schema (a tool error the model can correct, as any other)."""


class UnknownTool(DatalogMemoryError):
    code = "unknown_tool"


@dataclass(frozen=True)
class Annotations:
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False

    def to_mcp(self, title: str) -> dict[str, Any]:
        return {
            "title": title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


@dataclass
class ToolResult:
    """What a call returns to a surface: the text clients show, and the structured result matching
    output_schema (or, for a failure, the typed error)."""

    text: str
    structured: dict[str, Any]


Out = TypeVar("Out", bound=ToolOutput)


@dataclass
class Reply(Generic[Out]):
    """What a handler returns: the text the model reads and the typed structured result."""

    text: str
    output: Out


@dataclass
class Tool:
    name: str
    title: str
    description: str
    input_model: type[ToolInput]
    output_model: type[ToolOutput]
    annotations: Annotations
    handler: Callable[[Any, Any], Reply[Any]]
    # The capability every call needs (None: none), checked before the handler runs; see memory/access/context.py.
    capability: str | None = None
    # Further capabilities some argument values need: {argument: {value: capability}}.
    argument_capabilities: dict[str, dict[Any, str]] = field(default_factory=dict)
    # What the handler checks itself because it depends on stored data (the namespace of a memory, ...).
    capability_note: str = ""
    group: str = "admin"  # its family in GROUPS
    # Whether the handler runs the Datalog engine (query, proof, belief status, materialize, ...): the MCP server
    # runs such calls in an evaluation process (memory/workers), so no evaluation can stall or bloat it.
    evaluates: bool = False
    # What a model rarely needs (the references' words, limits, edge cases): docs/tools.md and the
    # datalog-memory://tools resource carry it; tools/list carries only the description.
    details: str = ""
    _validator: Draft202012Validator | None = field(default=None, repr=False)

    # The published schemas, generated from the models (memory/tools/models.py) when first read: a CLI command
    # or an evaluation worker never reads the output schemas, which the MCP list and the docs publish.
    @functools.cached_property
    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.input_model)

    @functools.cached_property
    def output_schema(self) -> dict[str, Any]:
        return output_schema(self.output_model)

    @property
    def summary(self) -> str:
        """The description's first sentence: the one line a listing shows."""
        return re.split(r"(?<=[.!?])\s+(?=[A-Z\[(\"'])", self.description.strip(), maxsplit=1)[0]

    @property
    def validator(self) -> Draft202012Validator:
        if self._validator is None:
            # Imported with the first call that is checked here: the MCP server checks its evaluating calls in
            # its workers, so jsonschema stays off its start-up.
            from jsonschema import Draft202012Validator

            self._validator = Draft202012Validator(self.input_schema)
        return self._validator

    def parse_arguments(self, arguments: Any) -> ToolInput:
        """The checked arguments as the tool's input model."""
        return construct(self.input_model, self.check_arguments(arguments))

    def check_arguments(self, arguments: Any) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise ArgumentsRejected(f"Invalid arguments for tool {self.name}: arguments must be an object")
        errors = sorted(self.validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            details = [_describe(e, self.input_schema) for e in errors]
            raise ArgumentsRejected(f"Invalid arguments for tool {self.name}: {'; '.join(details)}",
                                    tool=self.name, errors=details)
        return {name: _as_declared(self.input_schema["properties"].get(name, {}), value)
                for name, value in arguments.items()}

    def required_capabilities(self, arguments: dict[str, Any]) -> list[str]:
        """What a call with these (checked) arguments needs before anything is read or written."""
        needed = [self.capability] if self.capability else []
        for argument, by_value in self.argument_capabilities.items():
            value = arguments.get(argument)
            extra = by_value.get(value) if isinstance(value, (str, bool, int)) else None
            if extra and extra not in needed:
                needed.append(extra)
        return needed


def _as_declared(schema: dict[str, Any], value: Any) -> Any:
    """JSON Schema counts 2.0 as an integer; handlers get the int it stands for."""
    kinds = schema.get("type")
    if type(value) is float and (kinds == "integer" or isinstance(kinds, list) and "integer" in kinds
                                 and "number" not in kinds):
        return int(value)
    return value


def _describe(error: ValidationError, schema: dict[str, Any]) -> str:
    """One schema failure, worded so the caller knows what to change."""
    where = ".".join(str(p) for p in error.path)
    message = error.message
    if error.validator == "maxLength" and isinstance(error.instance, str):
        message = f"too long ({len(error.instance)} characters; the limit is {error.validator_value})"
    elif error.validator == "additionalProperties" and not error.path:
        allowed = ", ".join(schema.get("properties", {})) or "none"
        message = f"{message}; the arguments are: {allowed}"
    if len(message) > 200:
        message = message[:200] + "…"
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "type" and described:  # what the field takes, in its own words ("Epoch seconds ...")
        message = f"{message}: {described}"
    return f"'{where}': {message}" if where else message


REGISTRY: dict[str, Tool] = {}

Handler = TypeVar("Handler", bound=Callable[..., Any])


# No description in tools/list is longer (a model reads every one of them before its first call).
MAX_DESCRIPTION_CHARS = 400


def tool(name: str, *, title: str, group: str, description: str, annotations: Annotations, capability: str | None,
         argument_capabilities: dict[str, dict[Any, str]] | None = None, capability_note: str = "",
         evaluates: bool = False, details: str = "") -> Callable[[Handler], Handler]:
    """Register a handler `(api: Memory, args: XInput) -> Reply[XOutput]` as a tool of family `group`: its
    input and output models are read from the handler's annotations, and its schemas generated from them.
    `capability` is required (None for a tool that touches no data), so no tool can be added without deciding
    who may call it. `evaluates`: the handler runs the Datalog engine (a test over the registry checks that no
    other tool does)."""
    def register(handler: Handler) -> Handler:
        if name in REGISTRY:
            raise ValueError(f"tool {name} registered twice")
        if group not in GROUPS:
            raise ValueError(f"tool {name}: unknown group {group!r} (one of {', '.join(GROUPS)})")
        if not annotations.read_only and capability is None and not capability_note:
            raise ValueError(f"tool {name} writes: it must declare the capability it needs")
        if len(description) > MAX_DESCRIPTION_CHARS:
            raise ValueError(f"tool {name}: description of {len(description)} characters (at most "
                             f"{MAX_DESCRIPTION_CHARS}; the rest goes to details)")
        input_model, output_model = _models_of(name, handler)
        REGISTRY[name] = Tool(name, title, description, input_model, output_model, annotations, handler,
                              capability, dict(argument_capabilities or {}), capability_note, group, evaluates,
                              details if details != description else "")
        return handler
    return register


def _models_of(name: str, handler: Callable[..., Any]) -> tuple[type[ToolInput], type[ToolOutput]]:
    """The input and output models a handler is annotated with: `args: XInput` and `-> Reply[XOutput]`."""
    hints = typing.get_type_hints(handler)
    parameters = [hint for key, hint in hints.items() if key not in ("return", "api")]
    returned = typing.get_args(hints.get("return"))
    if (len(parameters) != 1 or not issubclass(parameters[0], ToolInput) or len(returned) != 1
            or not issubclass(returned[0], ToolOutput)):
        raise TypeError(f"tool {name}: the handler must be (api, args: ToolInput model) -> Reply[ToolOutput model]")
    return parameters[0], returned[0]


def get_tool(name: str) -> Tool:
    found = REGISTRY.get(name)
    if found is None:
        raise UnknownTool(f"Unknown tool: {name}", tool=name)
    return found


def call_tool(memory: Any, name: str, arguments: Any) -> ToolResult:
    """Validate and run one tool call. Raises ArgumentsRejected, UnknownTool or the tool's own typed error."""
    spec = get_tool(name)
    checked = spec.check_arguments(arguments)
    # Authority is decided here, once for every tool and surface, before the handler reads or writes anything.
    for capability in spec.required_capabilities(checked):
        memory.context.require(capability, f"{spec.name}")
    reply = spec.handler(memory, construct(spec.input_model, checked))
    return ToolResult(reply.text, reply.output.to_structured())


def error_name(code: str) -> str:
    """The stable name a failure's text starts with: its stable code in CamelCase (`not_found` -> `NotFound`,
    `syntax_error` -> `SyntaxError`), which gives the reference's `InvalidArguments` and `SyntaxError`."""
    return "".join(part.capitalize() for part in code.split("_"))


def error_text(error: DatalogMemoryError) -> str:
    """The one text of a failure on every surface (MCP result text, CLI error line): `Name: reason`, except a
    reference tool's exact message (`Memory not mounted: x`), which is kept as the reference words it."""
    return error.message if error.plain else f"{error_name(error.code)}: {error.message}"


def error_result(error: DatalogMemoryError) -> ToolResult:
    """A tool failure as a result: its text (error_text) and the typed error."""
    return ToolResult(error_text(error), {"error": error.to_dict()})
