"""Snapshot and persistence tools."""

from __future__ import annotations

from typing import Annotated, Any

from ..api import Memory
from ..access.context import ADMIN, READ, WRITE_KNOWLEDGE
from .models import Rows, Segment, SegmentInput, Strings, ToolInput, ToolOutput, about, name_field
from .notes import listed_line
from .registry import Annotations, Reply, tool


class SnapshotInput(ToolInput):
    name: Annotated[str, name_field('A name for the snapshot (e.g. "before_refactor")')]
    memory: Segment | None = None


class SaveSnapshotOutput(ToolOutput):
    name: str
    memory: str
    replaced: bool
    facts: int
    rules: int
    assumptions: int


@tool(
    "save_snapshot",
    title="Save snapshot",
    group="snapshots",
    description=(
        "Save the segment's facts, rules and assumptions under a name (replacing one of that name, which the "
        "reply says). Facts projected from source memories are not included."
    ),
    details=(
        "Store the segment's facts, rules and assumptions under a name, in the database (names are atoms: "
        "lowercase letter, then letters, digits, _). Saving an existing name replaces it, and says so."
    ),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def save_snapshot(api: Memory, args: SnapshotInput) -> Reply[SaveSnapshotOutput]:
    result = SaveSnapshotOutput.model_validate(api.snapshots.save_snapshot(args.name, args.memory))
    note = " (replaced the previous snapshot of that name)" if result.replaced else ""
    return Reply(f"Snapshot '{args.name}' saved successfully.{note}", result)


class RestoreInput(ToolInput):
    name: Annotated[str, name_field('The snapshot to restore (e.g. "before_refactor")')]
    memory: Segment | None = None


class RestoreOutput(ToolOutput):
    name: str
    memory: str
    facts: int
    rules: int
    assumptions: int
    dropped: Strings  # clauses the segment held that the snapshot lacks (facts, rules, :- assume), gone now
    brought_back: Strings  # clauses of the snapshot the segment lacked



@tool(
    "restore_snapshot",
    title="Restore snapshot",
    group="snapshots",
    description=(
        "Replace the segment's facts, rules and assumptions with a snapshot's, in one transaction; conclusions "
        "follow."
    ),
    details=(
        "Replace the segment's facts, rules and assumptions with a snapshot's, in one audited transaction "
        "that survives a restart. Conclusions follow from the restored knowledge."
    ),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def restore_snapshot(api: Memory, args: RestoreInput) -> Reply[RestoreOutput]:
    result = RestoreOutput.model_validate(api.snapshots.restore_snapshot(args.name, args.memory))
    lines = [f"Snapshot '{args.name}' restored successfully."]
    for what, clauses in (("dropped", result.dropped), ("brought back", result.brought_back)):
        if clauses:
            lines.append(listed_line(what, clauses, sep=" "))
    return Reply("\n".join(lines), result)


class SnapshotsOutput(ToolOutput):
    memory: str
    snapshots: Rows


@tool(
    "list_snapshots",
    title="List snapshots",
    group="snapshots",
    description="The segment's snapshots, oldest first, with their times and sizes.",
    details="The segment's snapshots, oldest first, with creation times and sizes.",
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_snapshots(api: Memory, args: SegmentInput) -> Reply[SnapshotsOutput]:
    result = SnapshotsOutput.model_validate(api.snapshots.list_snapshots(args.memory))
    return Reply(f"Snapshots: [{', '.join(s['name'] for s in result.snapshots)}]", result)


class StatusInput(ToolInput):
    check_integrity: Annotated[bool, about("Run PRAGMA quick_check now and record it (default: false)")] | None = None


class StatusOutput(ToolOutput):
    status: str
    database: str
    directory: str
    journal_mode: str
    synchronous: str
    wal_bytes: int
    schema_version: int
    last_snapshot: dict[str, Any] | None = None
    last_checkpoint: dict[str, Any] | None = None
    integrity: dict[str, Any] | None = None
    invariants: dict[str, Any] | None = None
    problem: str | None = None
    reason: str | None = None  # why degraded: database_removed, read_only, disk_full or cannot_create
    read_only: bool | None = None  # the database is open read-only (a read-only file or filesystem)
    last_failure: dict[str, Any] | None = None  # the last write the storage refused: reason and message


@tool(
    "get_persistence_status",
    title="Persistence status",
    group="admin",
    description=(
        "Database health: active or degraded (the file removed or replaced, the disk full, read-only storage: "
        "with the reason), path, journal, WAL size, schema version, last snapshot and checks; check_integrity "
        "runs one now."
    ),
    details=(
        "Health of the database: status (active, or degraded when the file or its folder cannot be written now, "
        "with the problem), path, journal "
        "mode, WAL size, schema version, last snapshot, a passive WAL checkpoint run now (last_checkpoint), "
        "the last integrity check (check_integrity runs one now), and the last invariant check "
        "(invariants: rows written around the tools, found by `datalog-memory check`)."
    ),
    capability=READ,
    argument_capabilities={"check_integrity": {True: ADMIN}},
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def get_persistence_status(api: Memory, args: StatusInput) -> Reply[StatusOutput]:
    result = StatusOutput.model_validate(api.admin.get_persistence_status(bool(args.check_integrity)))
    last = result.last_snapshot["name"] if result.last_snapshot else "none"
    text = (f"status: {result.status}\ndir: {result.directory}\nlast_snapshot: {last}\n"
            f"journal_size: {result.wal_bytes} bytes")
    if result.problem:
        text += f"\nproblem: {result.problem}" + (f" ({result.reason})" if result.reason else "")
    if result.read_only:
        text += "\nread_only: true (reads, queries and proofs work; writes are refused)"
    if result.last_failure:
        text += f"\nlast_failure: {result.last_failure.get('message', '')}"
    if result.invariants:
        check = result.invariants
        text += f"\nlast_check: {check['at']} ({check['problems']} problem(s))"
    return Reply(text, result)
