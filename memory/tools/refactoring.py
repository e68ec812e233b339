"""Introspection and refactoring tools: schema, overview, references, rename."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field

from ..api import Memory
from ..access.context import ADMIN, READ
from .models import Rows, SegmentInput, Strings, ToolInput, ToolOutput, about, int_field, text_field
from .registry import Annotations, Reply, tool
from .json_text import compact_json

MemoryOrAll = Annotated[str, Field(
    min_length=1, max_length=128,
    description='Memory segment to search: a named segment, "default" for the default memory, or "__all__" '
                'to scan every mounted memory (default: "default")')]


class SchemaOutput(ToolOutput):
    memory: str
    predicates: Rows
    total: int


@tool(
    "get_knowledge_schema",
    title="Knowledge schema",
    group="knowledge",
    description="The predicates of a segment: name, arity, facts or rules or both, and clause counts. Structure only.",
    details=(
        "List the predicates of a memory segment: name, arity, whether they are defined by facts, rules or "
        "both, and how many clauses. Structure only, no content; exact counts (no cap)."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_knowledge_schema(api: Memory, args: SegmentInput) -> Reply[SchemaOutput]:
    result = SchemaOutput.model_validate(api.knowledge.get_knowledge_schema(args.memory))
    return Reply(compact_json({"predicates": result.predicates, "total": result.total}), result)


class OverviewInput(ToolInput):
    sample_size: Annotated[int, int_field("Number of sample clauses per predicate (default: 2, max: 50; values "
                                          "outside 0..50 are clamped, as the reference does)")] | None = None


class OverviewOutput(ToolOutput):
    predicates: Rows
    assumptions: dict[str, Any]
    snapshots: dict[str, Any]
    persistence: dict[str, Any]
    mounts: dict[str, Any]
    truncated: bool


@tool(
    "get_kb_overview",
    title="Knowledge base overview",
    group="knowledge",
    description=(
        "One call's overview of the default segment: predicates with counts and sample clauses, assumptions, "
        "snapshots, mounts and database health (at most 64 KiB; truncated says when cut)."
    ),
    details=(
        "One call for the default memory: predicates with kind, count and sample clauses, assumptions, "
        "snapshots, persistence health and mounted segments. The JSON never exceeds 64 KiB: samples are "
        "halved, then predicates dropped from the end, and truncated says so."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_kb_overview(api: Memory, args: OverviewInput) -> Reply[OverviewOutput]:
    result = api.knowledge.get_kb_overview(args.sample_size)
    return Reply(compact_json(result), OverviewOutput.model_validate(result))


class ReferencesInput(ToolInput):
    functor: Annotated[str, text_field('The predicate name to search for (e.g. "task_status")', 1024)]
    arity: Annotated[int, int_field("The arity (optional; when omitted, matches all arities of the functor)",
                                    0, 1024)] | None = None
    memory: MemoryOrAll | None = None
    include_cross_memory_refs: Annotated[bool, about("Include qualified references from other memory segments "
                                                     "(default: true)")] | None = None


class ReferencesOutput(ToolOutput):
    target: str
    memory: str
    rules: Rows
    direct_facts_count: int
    facts_referenced_in_assumptions: Rows
    cross_memory_refs: Rows


@tool(
    "find_predicate_references",
    title="Find predicate references",
    group="knowledge",
    description=(
        "Where a predicate is used: rules that call it, its fact count, assumptions supporting its facts, and "
        "seg:pred references from other segments. Use before rename_predicate."
    ),
    details=(
        "Locate every rule whose body calls a predicate (through conjunction, disjunction, negation and "
        "aggregates), the number of its facts, the assumptions that support its facts, and qualified "
        "seg:pred(...) references from other memory segments. Use before renaming."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def find_predicate_references(api: Memory, args: ReferencesInput) -> Reply[ReferencesOutput]:
    cross = True if args.include_cross_memory_refs is None else args.include_cross_memory_refs
    result = api.knowledge.find_predicate_references(args.functor, args.arity, args.memory, cross)
    return Reply(compact_json(result), ReferencesOutput.model_validate(result))


REPORT_KEYS = ("renamed_facts", "rewritten_rule_bodies", "affected_rule_ids", "cross_memory_impact", "is_error")


class RenameInput(ToolInput):
    old_functor: Annotated[str, text_field("The current predicate name (an atom)", 1024)]
    new_functor: Annotated[str, text_field("The new predicate name (an atom not already used with the same arity)",
                                           1024)]
    arity: Annotated[int, int_field("The arity to rename (required when several arities exist)", 0, 1024)] | None = None
    memory: Annotated[str, Field(min_length=1, max_length=128, description="The target memory segment (default: "
                                 "'default'); must be writable")] | None = None
    dry_run: Annotated[bool, about("Preview the impact without changing anything (default: false)")] | None = None
    propagate_cross_memory_refs: Annotated[bool, about("Also rewrite seg:old(...) calls in other writable "
                                                       "segments (default: false)")] | None = None


class RenameOutput(ToolOutput):
    renamed_facts: int
    rewritten_rule_bodies: int
    affected_rule_ids: Strings
    cross_memory_impact: dict[str, Any]
    is_error: bool
    renamed_rule_heads: Strings
    old_functor: str
    new_functor: str
    arity: int
    memory: str
    dry_run: bool


@tool(
    "rename_predicate",
    title="Rename predicate",
    group="knowledge",
    description=(
        "Rename a predicate everywhere in one transaction: facts (supports kept), rule heads and rule bodies, "
        "arity-aware; dry_run shows the impact and writes nothing."
    ),
    details=(
        "Rename a predicate everywhere in one transaction: its facts (keeping their supports), rule heads, "
        "and every rule body that calls it, on the parsed rules (aware of arity, never by text "
        "substitution); with propagate_cross_memory_refs also seg:old(...) calls in other writable segments. "
        "Refuses self-renames, collisions with an existing predicate, ambiguous arity, operators and "
        "built-ins, and read-only segments. dry_run reports the same impact and writes nothing."
    ),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
)
def rename_predicate(api: Memory, args: RenameInput) -> Reply[RenameOutput]:
    report = api.knowledge.rename_predicate(args.old_functor, args.new_functor, args.arity, args.memory,
                                  bool(args.dry_run), bool(args.propagate_cross_memory_refs))
    return Reply(json.dumps({k: report[k] for k in REPORT_KEYS}, ensure_ascii=False),
                 RenameOutput.model_validate(report))
