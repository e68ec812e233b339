"""Memory segment tools: create, mount, unmount, list."""

from __future__ import annotations

from ..sources.context import ADMIN, READ, WRITE_GLOBAL
from .registry import Annotations, ToolResult, tool
from .schemas import name_arg, BOOLEAN, ROWS, STRING, compact_json, obj, out

SCOPE = {"type": "string", "enum": ["project", "global"]}


@tool(
    "create_memory",
    title="Create memory segment",
    group="segments",
    description=(
        "Create a named memory segment: scope project (in this project's database, the default) or global "
        "(in the global database under $XDG_DATA_HOME/datalog-memory/, visible from every project). "
        "It is not mounted: mount it to use it."
    ),
    input_schema=obj({
        "name": name_arg("A valid atom (snake_case) naming the memory segment"),
        "scope": {**SCOPE, "description": 'The scope: "project" (default) or "global"'},
    }, ["name"]),
    output_schema=out({"name": STRING, "scope": STRING, "mounted": BOOLEAN}),
    capability=ADMIN,
    argument_capabilities={"scope": {"global": WRITE_GLOBAL}},
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def create_memory(api, name: str, **kw) -> ToolResult:
    result = api.create_memory(name, kw.get("scope", "project"))
    return ToolResult(f"Created memory '{name}' ({result['scope']} scope)", result)


@tool(
    "mount_memory",
    title="Mount memory segment",
    group="segments",
    description=(
        "Mount a segment so the tools can target it with the memory argument, read-write or read-only. "
        "Mounts persist for the project; mounting again with the other mode switches the mode. A read-only "
        "segment refuses every mutation; rules elsewhere may still read it as seg:pred(...)."
    ),
    input_schema=obj({
        "name": name_arg("The name of the memory segment to mount"),
        "mode": {"type": "string", "enum": ["rw", "ro"], "description": 'Mount mode: "rw" (default) or "ro"'},
        "scope": {**SCOPE, "description": "Which scope to mount from, when the name exists in both"},
    }, ["name"]),
    output_schema=out({"name": STRING, "scope": STRING, "mode": STRING, "mounted": BOOLEAN}),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def mount_memory(api, name: str, **kw) -> ToolResult:
    result = api.mount_memory(name, kw.get("mode", "rw"), kw.get("scope"))
    return ToolResult(f"Mounted memory '{name}' ({result['mode']})", result)


@tool(
    "unmount_memory",
    title="Unmount memory segment",
    group="segments",
    description="Unmount a segment (its data stays). The default memory cannot be unmounted.",
    input_schema=obj({"name": name_arg("The name of the memory segment to unmount")}, ["name"]),
    output_schema=out({"name": STRING, "scope": STRING, "mounted": BOOLEAN}),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def unmount_memory(api, name: str) -> ToolResult:
    result = api.unmount_memory(name)
    return ToolResult(f"Unmounted memory '{name}'", result)


@tool(
    "list_memories",
    title="List memory segments",
    group="segments",
    description="Every segment, mounted or not, in both scopes: name, scope, mounted, mode (null when unmounted).",
    input_schema=obj({}),
    output_schema=out({"memories": ROWS}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_memories(api) -> ToolResult:
    result = api.list_memories()
    return ToolResult(compact_json(result), result)
