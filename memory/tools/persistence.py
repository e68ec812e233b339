"""Snapshot and persistence tools."""

from __future__ import annotations

from ..sources.context import ADMIN, READ, WRITE_KNOWLEDGE
from .registry import Annotations, ToolResult, tool
from .schemas import name_arg, BOOLEAN, INTEGER, OBJECT, ROWS, STRING, memory_arg, obj, out

COUNTS = {"facts": INTEGER, "rules": INTEGER, "assumptions": INTEGER}


@tool(
    "save_snapshot",
    title="Save snapshot",
    group="snapshots",
    description=(
        "Store the segment's facts, rules and assumptions under a name, in the database (names are atoms: "
        "lowercase letter, then letters, digits, _). Saving an existing name replaces it, and says so."
    ),
    input_schema=obj({"name": name_arg('A name for the snapshot (e.g. "before_refactor")'),
                      "memory": memory_arg()}, ["name"]),
    output_schema=out({"name": STRING, "memory": STRING, "replaced": BOOLEAN, **COUNTS}),
    capability=WRITE_KNOWLEDGE,
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def save_snapshot(api, name: str, **kw) -> ToolResult:
    result = api.save_snapshot(name, kw.get("memory"))
    note = " (replaced the previous snapshot of that name)" if result["replaced"] else ""
    return ToolResult(f"Snapshot '{name}' saved successfully.{note}", result)


@tool(
    "restore_snapshot",
    title="Restore snapshot",
    group="snapshots",
    description=(
        "Replace the segment's facts, rules and assumptions with a snapshot's, in one audited transaction "
        "that survives a restart. Conclusions follow from the restored knowledge."
    ),
    input_schema=obj({"name": name_arg('The snapshot to restore (e.g. "before_refactor")'),
                      "memory": memory_arg()}, ["name"]),
    output_schema=out({"name": STRING, "memory": STRING, **COUNTS}),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def restore_snapshot(api, name: str, **kw) -> ToolResult:
    result = api.restore_snapshot(name, kw.get("memory"))
    return ToolResult(f"Snapshot '{name}' restored successfully.", result)


@tool(
    "list_snapshots",
    title="List snapshots",
    group="snapshots",
    description="The segment's snapshots, oldest first, with creation times and sizes.",
    input_schema=obj({"memory": memory_arg()}),
    output_schema=out({"memory": STRING, "snapshots": ROWS}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def list_snapshots(api, **kw) -> ToolResult:
    result = api.list_snapshots(kw.get("memory"))
    return ToolResult(f"Snapshots: [{', '.join(s['name'] for s in result['snapshots'])}]", result)


@tool(
    "get_persistence_status",
    title="Persistence status",
    group="admin",
    description=(
        "Health of the database: status (active, or degraded when the file or its folder cannot be written now, "
        "with the problem), path, journal "
        "mode, WAL size, schema version, last snapshot, a passive WAL checkpoint run now (last_checkpoint), "
        "the last integrity check (check_integrity runs one now), and the last invariant check "
        "(invariants: rows written around the tools, found by `datalog-memory check`)."
    ),
    input_schema=obj({"check_integrity": {"type": "boolean",
                                          "description": "Run PRAGMA quick_check now and record it (default: false)"}}),
    output_schema=out({"status": STRING, "database": STRING, "directory": STRING, "journal_mode": STRING,
                       "synchronous": STRING, "wal_bytes": INTEGER, "schema_version": INTEGER,
                       "last_snapshot": OBJECT, "last_checkpoint": OBJECT, "integrity": OBJECT, "invariants": OBJECT,
                       "problem": STRING},
                      optional=("last_snapshot", "last_checkpoint", "integrity", "invariants", "problem")),
    capability=READ,
    argument_capabilities={"check_integrity": {True: ADMIN}},
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
)
def get_persistence_status(api, **kw) -> ToolResult:
    result = api.get_persistence_status(kw.get("check_integrity", False))
    last = result["last_snapshot"]["name"] if result["last_snapshot"] else "none"
    text = (f"status: {result['status']}\ndir: {result['directory']}\nlast_snapshot: {last}\n"
            f"journal_size: {result['wal_bytes']} bytes")
    if result.get("problem"):
        text += f"\nproblem: {result['problem']}"
    if result.get("invariants"):
        check = result["invariants"]
        text += f"\nlast_check: {check['at']} ({check['problems']} problem(s))"
    return ToolResult(text, result)
