"""Introspection and refactoring tools: schema, overview, references, rename."""

from __future__ import annotations

import json

from ..sources.context import ADMIN, READ
from .registry import Annotations, ToolResult, tool
from .schemas import compact_json, BOOLEAN, INTEGER, ROWS, STRING, STRINGS, integer, memory_arg, obj, out, text

MEMORY_OR_ALL = {
    "type": "string", "minLength": 1, "maxLength": 128,
    "description": 'Memory segment to search: a named segment, "default" for the default memory, or "__all__" '
                   'to scan every mounted memory (default: "default")',
}


@tool(
    "get_knowledge_schema",
    title="Knowledge schema",
    group="knowledge",
    description=(
        "List the predicates of a memory segment: name, arity, whether they are defined by facts, rules or "
        "both, and how many clauses. Structure only, no content; exact counts (no cap)."
    ),
    input_schema=obj({"memory": memory_arg()}),
    output_schema=out({"memory": STRING, "predicates": ROWS, "total": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_knowledge_schema(api, **kw) -> ToolResult:
    result = api.get_knowledge_schema(kw.get("memory"))
    return ToolResult(compact_json({"predicates": result["predicates"], "total": result["total"]}), result)


@tool(
    "get_kb_overview",
    title="Knowledge base overview",
    group="knowledge",
    description=(
        "One call for the default memory: predicates with kind, count and sample clauses, assumptions, "
        "snapshots, persistence health and mounted segments. The JSON never exceeds 64 KiB: samples are "
        "halved, then predicates dropped from the end, and truncated says so."
    ),
    input_schema=obj({"sample_size": integer("Number of sample clauses per predicate (default: 2, max: 50; values outside 0..50 are clamped, as the reference does)")}),
    output_schema=out({"predicates": ROWS, "assumptions": {"type": "object"}, "snapshots": {"type": "object"},
                       "persistence": {"type": "object"}, "mounts": {"type": "object"}, "truncated": BOOLEAN}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def get_kb_overview(api, **kw) -> ToolResult:
    result = api.get_kb_overview(kw.get("sample_size"))
    return ToolResult(compact_json(result), result)


@tool(
    "find_predicate_references",
    title="Find predicate references",
    group="knowledge",
    description=(
        "Locate every rule whose body calls a predicate (through conjunction, disjunction, negation and "
        "aggregates), the number of its facts, the assumptions that support its facts, and qualified "
        "seg:pred(...) references from other memory segments. Use before renaming."
    ),
    input_schema=obj({
        "functor": text('The predicate name to search for (e.g. "task_status")', 1024),
        "arity": integer("The arity (optional; when omitted, matches all arities of the functor)", 0, 1024),
        "memory": MEMORY_OR_ALL,
        "include_cross_memory_refs": {"type": "boolean", "description":
                                      "Include qualified references from other memory segments (default: true)"},
    }, ["functor"]),
    output_schema=out({"target": STRING, "memory": STRING, "rules": ROWS, "direct_facts_count": INTEGER,
                       "facts_referenced_in_assumptions": ROWS, "cross_memory_refs": ROWS}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def find_predicate_references(api, functor: str, **kw) -> ToolResult:
    result = api.find_predicate_references(functor, kw.get("arity"), kw.get("memory"),
                                           kw.get("include_cross_memory_refs", True))
    return ToolResult(compact_json(result), result)


REPORT_KEYS = ("renamed_facts", "rewritten_rule_bodies", "affected_rule_ids", "cross_memory_impact", "is_error")


@tool(
    "rename_predicate",
    title="Rename predicate",
    group="knowledge",
    description=(
        "Rename a predicate everywhere in one transaction: its facts (keeping their supports), rule heads, "
        "and every rule body that calls it, on the parsed rules (aware of arity, never by text "
        "substitution); with propagate_cross_memory_refs also seg:old(...) calls in other writable segments. "
        "Refuses self-renames, collisions with an existing predicate, ambiguous arity, operators and "
        "built-ins, and read-only segments. dry_run reports the same impact and writes nothing."
    ),
    input_schema=obj({
        "old_functor": text("The current predicate name (an atom)", 1024),
        "new_functor": text("The new predicate name (an atom not already used with the same arity)", 1024),
        "arity": integer("The arity to rename (required when several arities exist)", 0, 1024),
        "memory": {"type": "string", "minLength": 1, "maxLength": 128,
                   "description": "The target memory segment (default: 'default'); must be writable"},
        "dry_run": {"type": "boolean", "description": "Preview the impact without changing anything (default: false)"},
        "propagate_cross_memory_refs": {"type": "boolean", "description":
                                        "Also rewrite seg:old(...) calls in other writable segments (default: false)"},
    }, ["old_functor", "new_functor"]),
    output_schema=out({
        "renamed_facts": INTEGER, "rewritten_rule_bodies": INTEGER, "affected_rule_ids": STRINGS,
        "cross_memory_impact": {"type": "object"}, "is_error": BOOLEAN, "renamed_rule_heads": STRINGS,
        "old_functor": STRING, "new_functor": STRING, "arity": INTEGER, "memory": STRING, "dry_run": BOOLEAN,
    }),
    capability=ADMIN,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
)
def rename_predicate(api, old_functor: str, new_functor: str, **kw) -> ToolResult:
    report = api.rename_predicate(old_functor, new_functor, kw.get("arity"), kw.get("memory"),
                                  kw.get("dry_run", False), kw.get("propagate_cross_memory_refs", False))
    return ToolResult(json.dumps({k: report[k] for k in REPORT_KEYS}, ensure_ascii=False), report)
