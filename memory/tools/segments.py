"""Memory segment tools: create, mount, unmount, list."""

from __future__ import annotations

from typing import Annotated, Literal

from ..api import Memory
from ..access.context import ADMIN, READ, WRITE_GLOBAL
from .models import Empty, Rows, ToolInput, ToolOutput, about, name_field
from .registry import Annotations, Reply, tool
from .json_text import compact_json

Scope = Literal["project", "global"]


class CreateInput(ToolInput):
    name: Annotated[str, name_field("A valid atom (snake_case) naming the memory segment")]
    scope: Annotated[Scope, about('The scope: "project" (default) or "global"')] | None = None


class SegmentOutput(ToolOutput):
    name: str
    scope: str
    mounted: bool


@tool(
    "create_memory",
    title="Create memory segment",
    group="segments",
    description=(
        "Create a named segment: scope project (this database, default) or global (shared by every project). "
        "Mount it before use."
    ),
    details=(
        "Create a named memory segment: scope project (in this project's database, the default) or global "
        "(in the global database under $XDG_DATA_HOME/datalog-memory/, visible from every project). "
        "It is not mounted: mount it to use it."
    ),
    capability=ADMIN,
    argument_capabilities={"scope": {"global": WRITE_GLOBAL}},
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def create_memory(api: Memory, args: CreateInput) -> Reply[SegmentOutput]:
    result = SegmentOutput.model_validate(api.segments.create_memory(args.name, args.scope or "project"))
    return Reply(f"Created memory '{args.name}' ({result.scope} scope)", result)


class MountInput(ToolInput):
    name: Annotated[str, name_field("The name of the memory segment to mount")]
    mode: Annotated[Literal["rw", "ro"], about('Mount mode: "rw" (default) or "ro"')] | None = None
    scope: Annotated[Scope, about("Which scope to mount from, when the name exists in both")] | None = None


class MountOutput(ToolOutput):
    name: str
    scope: str
    mode: str
    mounted: bool


@tool(
    "mount_memory",
    title="Mount memory segment",
    group="segments",
    description=(
        "Mount a segment read-write or read-only, so tools can target it with memory and rules can read it as "
        "seg:pred(...)."
    ),
    details=(
        "Mount a segment so the tools can target it with the memory argument, read-write or read-only. "
        "Mounts persist for the project; mounting again with the other mode switches the mode. A read-only "
        "segment refuses every mutation; rules elsewhere may still read it as seg:pred(...)."
    ),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def mount_memory(api: Memory, args: MountInput) -> Reply[MountOutput]:
    result = MountOutput.model_validate(api.segments.mount_memory(args.name, args.mode or "rw", args.scope))
    return Reply(f"Mounted memory '{args.name}' ({result.mode})", result)


class UnmountInput(ToolInput):
    name: Annotated[str, name_field("The name of the memory segment to unmount")]


@tool(
    "unmount_memory",
    title="Unmount memory segment",
    group="segments",
    description="Unmount a segment (its data stays). The default segment cannot be unmounted.",
    details="Unmount a segment (its data stays). The default memory cannot be unmounted.",
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def unmount_memory(api: Memory, args: UnmountInput) -> Reply[SegmentOutput]:
    result = SegmentOutput.model_validate(api.segments.unmount_memory(args.name))
    return Reply(f"Unmounted memory '{args.name}'", result)


class SegmentsOutput(ToolOutput):
    memories: Rows


@tool(
    "list_memories",
    title="List memory segments",
    group="segments",
    description="Every segment in both scopes: name, scope, whether mounted and how.",
    details="Every segment, mounted or not, in both scopes: name, scope, mounted, mode (null when unmounted).",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_memories(api: Memory, args: Empty) -> Reply[SegmentsOutput]:
    result = api.segments.list_memories()
    return Reply(compact_json(result), SegmentsOutput.model_validate(result))
