"""Source-memory tools: remember exact text, get it by id, search, recall symbolically, forget.

Who the caller is (principal, session, project, capabilities) is set by the host's
environment; no argument here can change it."""

from __future__ import annotations

from ..sources.memories import ACTIONS, KINDS, MAX_IDS, MAX_KEY_CHARS, MAX_SOURCE_CHARS, RETENTION
from ..sources.namespaces import READ_SCOPES, SCOPES
from ..sources.projections import (MAX_ARITY, MAX_PREDICATE_CHARS, MAX_PROJECTIONS, MAX_STATEMENT_CHARS,
                                   MAX_STRING_ARGUMENT_CHARS, QUALITIES)
from ..sources.search import MAX_LIMIT, MAX_QUERY_CHARS, MODES
from ..sources.context import READ
from .registry import Annotations, ToolResult, tool
from .schemas import BOOLEAN, INTEGER, ROWS, STRING, STRINGS, integer, obj, out, text

MEMORY_ID = {"type": "string", "minLength": 1, "maxLength": 128, "description": "A memory id (mem_…)"}
INSTANT = {"type": "string", "minLength": 1, "maxLength": 64,
           "description": "An ISO-8601 date or date-time (UTC when no offset is given)"}
SCALAR = [{"type": "string", "maxLength": MAX_STRING_ARGUMENT_CHARS}, {"type": "number"}, {"type": "boolean"}]
PROJECTION = obj({
    "predicate": {"type": "string", "minLength": 1, "maxLength": MAX_PREDICATE_CHARS,
                  "description": "Fact name: a lowercase letter, then letters, digits or _"},
    "arguments": {"type": "array", "maxItems": MAX_ARITY, "items": {"anyOf": SCALAR},
                  "description": "Scalar arguments: strings become atoms"},
    "statement": text("The projection in plain words", MAX_STATEMENT_CHARS),
    "quality": {"type": "string", "enum": list(QUALITIES), "description": "exact (default), lossy or context_required; the last two "
                                                          "make recall attach the source text"},
}, ["predicate", "arguments", "statement"])
NAMESPACE = {"type": "object", "properties": {"type": STRING, "id": STRING}, "required": ["type"]}
READ_SCOPE = {"type": "string", "enum": list(READ_SCOPES), "description": "Where to look: all_visible (default), current (where an "
                                                        "auto remember writes), session, project or global"}
SUMMARY = {"id": STRING, "namespace": NAMESPACE, "kind": STRING, "status": STRING, "current": BOOLEAN,
           "recorded_at": STRING}


@tool(
    "memory_remember",
    title="Remember source text",
    group="source memories",
    description=(
        "Durably preserve exact source text (byte for byte, with its sha256) in the caller's authorized "
        "namespace and return a stable id (mem_…). scope auto writes to the project when the host names one, "
        "else to the session; never to global. Optional projections become facts (supported by this memory) "
        "that rules and queries use; supersedes replaces older memories; idempotency_key makes retries safe."
    ),
    input_schema=obj({
        "memory": text("The exact text to keep", MAX_SOURCE_CHARS),
        "scope": {"type": "string", "enum": list(SCOPES), "description": "auto (default), project, session or global"},
        "retention": {"type": "string", "enum": list(RETENTION), "description": "long_term/durable (default) or short_term/session"},
        "kind": {"type": "string", "enum": ["auto", *KINDS], "description": "What the text is (default text)"},
        "projections": {"type": "array", "maxItems": MAX_PROJECTIONS, "items": PROJECTION,
                        "description": "Symbolic readings of the text, stored as facts"},
        "idempotency_key": {"type": "string", "minLength": 1, "maxLength": MAX_KEY_CHARS,
                            "description": "Retry key: the same key and text returns the first receipt"},
        "supersedes": {"type": "array", "maxItems": MAX_IDS, "items": MEMORY_ID,
                       "description": "Ids of memories this one replaces"},
        "valid_from": INSTANT,
        "valid_to": INSTANT,
    }, ["memory"]),
    output_schema=out({"status": STRING, "id": STRING, "source_id": STRING, "namespace": NAMESPACE,
                       "durable": BOOLEAN, "version": INTEGER, "sha256": STRING, "projection_status": STRING,
                       "projection_ids": STRINGS, "facts": STRINGS, "supersedes": STRINGS,
                       "idempotent_replay": BOOLEAN, "model_calls": INTEGER}),
    capability=None,
    capability_note="memory_write_session, _project or _global: that of the namespace written",
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def memory_remember(api, memory: str, **kw) -> ToolResult:
    receipt = api.memory_remember(memory, **kw)
    return ToolResult(f"Stored memory {receipt['id']}", receipt)


@tool(
    "memory_get",
    title="Get memory",
    group="source memories",
    description=(
        "Fetch one memory by id: its exact source text (the text content is exactly the source), namespace, "
        "provenance, lifecycle history and projections. An id the caller may not read is reported exactly "
        "like an unknown one. as_of answers as the store stood at that time."
    ),
    input_schema=obj({"id": MEMORY_ID, "as_of": INSTANT}, ["id"]),
    output_schema=out({**SUMMARY, "source_id": STRING, "source_text": STRING, "principal": STRING,
                       "trust": STRING, "version": INTEGER, "projections": ROWS, "history": ROWS},
                      optional=("source_text",)),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def memory_get(api, id: str, **kw) -> ToolResult:
    found = api.memory_get(id, kw.get("as_of"))
    text_out = found["source_text"] if found["source_text"] is not None else f"Memory {id}: its text was erased"
    return ToolResult(text_out, found)


@tool(
    "memory_search",
    title="Search memories",
    group="source memories",
    description=(
        "Full-text (SQLite FTS5) plus symbolic search over every memory the caller may read: words in the "
        "source text or projection statements, and projections whose predicate or arguments are query words. "
        "Ranked; each result says why it matched. Current memories only unless history is true."
    ),
    input_schema=obj({
        "query": text("Words to look for", MAX_QUERY_CHARS),
        "scope": READ_SCOPE,
        "history": {"type": "boolean", "description": "Include superseded, expired and forgotten memories"},
        "limit": integer("Results to return (default 10)", 1, MAX_LIMIT),
        "kind": {"type": "string", "enum": list(KINDS), "description": "Only memories of this kind"},
        "as_of": INSTANT,
        "mode": {"type": "string", "enum": list(MODES), "description": "auto (default: full text and symbolic), "
                 "text, symbolic, or exact (the query as a literal substring of the source text)"},
    }, ["query"]),
    output_schema=out({"query": STRING, "searched": STRING, "results": ROWS, "total": INTEGER, "limit": INTEGER,
                       "truncated": BOOLEAN}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def memory_search(api, query: str, **kw) -> ToolResult:
    found = api.memory_search(query, **kw)
    if not found["results"]:
        return ToolResult(f"No memory matches {query!r}", found)
    lines = [f"{i}. [{r['id']}] ({r['scope']}, {r['status']}) {_preview(r['memory'])} — {'; '.join(r['why'])}"
             for i, r in enumerate(found["results"], 1)]
    if found["truncated"]:
        lines.append(f"({len(found['results'])} of {found['total']} shown)")
    return ToolResult("\n".join(lines), found)


def _preview(text_value: str, size: int = 160) -> str:
    flat = " ".join(text_value.split())
    return flat if len(flat) <= size else flat[:size] + "…"


@tool(
    "memory_recall",
    title="Recall memories",
    group="source memories",
    description=(
        "Symbolic-first recall: current memories whose projections match predicate(arguments…), null "
        "matching anything, nearest namespace first (session, project, global). When rules define the "
        "predicate, also the conclusions they derive from your memories (under derived), each with the "
        "memories its proof rests on. The exact source text is attached when a projection is lossy or needs "
        "context, or when include_source is true. Returns Markdown plus the structured list."
    ),
    input_schema=obj({
        "predicate": {"type": "string", "minLength": 1, "maxLength": MAX_PREDICATE_CHARS,
                      "description": "The projection's predicate"},
        "arguments": {"type": "array", "maxItems": MAX_ARITY, "items": {"anyOf": [*SCALAR, {"type": "null"}]},
                      "description": "Argument pattern; null matches any value (omit to match every arity)"},
        "include_source": {"type": "boolean", "description": "Attach the exact source text to every match"},
        "limit": integer("Matches to return (default 20)", 1, MAX_LIMIT),
        "as_of": INSTANT,
        "scope": READ_SCOPE,
    }, ["predicate"]),
    output_schema=out({"content": STRING, "memories": ROWS, "derived": ROWS, "total": INTEGER, "limit": INTEGER,
                       "truncated": BOOLEAN, "model_calls": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def memory_recall(api, predicate: str, **kw) -> ToolResult:
    found = api.memory_recall(predicate, **kw)
    return ToolResult(found["content"], found)


@tool(
    "memory_forget",
    title="Forget memories",
    group="source memories",
    description=(
        "Forget memories by ids, or by a query resolved to concrete ids first (dry_run shows them without "
        "changing anything). Actions: expire (default), supersede, invalidate, archive, delete; erase (with "
        "delete) also erases the text, keeping a tombstone. A forgotten memory's projections stop supporting "
        "facts, so conclusions resting only on it go. Needs the write capability of each memory's namespace."
    ),
    input_schema=obj({
        "ids": {"type": "array", "minItems": 1, "maxItems": MAX_IDS, "items": MEMORY_ID,
                "description": "The memories to forget"},
        "query": text("Forget the current memories a search for this finds", MAX_QUERY_CHARS),
        "action": {"type": "string", "enum": list(ACTIONS), "description": "expire (default), supersede, invalidate, archive or delete"},
        "reason": text("Why (kept in the history)", 4096),
        "erase": {"type": "boolean", "description": "With delete: erase the text itself"},
        "dry_run": {"type": "boolean", "description": "Only resolve and show the targets"},
    }),
    output_schema=out({"action": STRING, "dry_run": BOOLEAN, "targets": ROWS, "forgotten": INTEGER,
                       "removed_facts": STRINGS, "erased": BOOLEAN}),
    capability=READ,
    capability_note="and the write capability of each memory's namespace",
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def memory_forget(api, **kw) -> ToolResult:
    result = api.memory_forget(**kw)
    ids = ", ".join(t["id"] for t in result["targets"]) or "none"
    if result["dry_run"]:
        return ToolResult(f"Would {result['action']} {len(result['targets'])} memory(ies): {ids}", result)
    return ToolResult(f"Forgot {result['forgotten']} memory(ies) ({result['action']}): {ids}", result)
