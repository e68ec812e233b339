"""Source-memory tools: remember exact text, get it by id, search, recall symbolically, forget.

Who the caller is (principal, session, project, capabilities) is set by the host's
environment; no argument here can change it."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import Field, WithJsonSchema

from ..api import Memory
from ..knowledge.consequences import Withdrawn
from ..access.context import READ
from ..sources.memories import ACTIONS, KINDS, MAX_IDS, MAX_KEY_CHARS, MAX_SOURCE_CHARS, RETENTION
from ..access.namespaces import READ_SCOPES, SCOPES
from ..sources.projections import (MAX_ARITY, MAX_PREDICATE_CHARS, MAX_PROJECTIONS, MAX_STATEMENT_CHARS,
                                   MAX_STRING_ARGUMENT_CHARS, QUALITIES)
from ..sources.search import MAX_LIMIT, MAX_QUERY_CHARS, MODES
from .models import OutputPart, Rows, Strings, ToolInput, ToolOutput, about, int_field, text_field
from .notes import listed_line
from .registry import Annotations, Reply, tool

MemoryId = Annotated[str, Field(min_length=1, max_length=128, description="A memory id, mem_…")]
Instant = Annotated[str, Field(min_length=1, max_length=64,
                               description="ISO-8601 date or time (UTC unless an offset is given)")]
_SCALAR_SCHEMAS = [{"type": "string", "maxLength": MAX_STRING_ARGUMENT_CHARS}, {"type": "number"},
                   {"type": "boolean"}]
# A projection argument: a string (an atom), a number or a boolean, kept as the JSON value it was given.
Scalar = Annotated[Union[str, int, float, bool], WithJsonSchema({"anyOf": _SCALAR_SCHEMAS})]
ScalarOrAny = Annotated[Union[str, int, float, bool, None], WithJsonSchema({"anyOf": [*_SCALAR_SCHEMAS,
                                                                                     {"type": "null"}]})]
ReadScope = Annotated[Literal[READ_SCOPES],  # type: ignore[valid-type]
                      about("Default all_visible; current: where an auto remember writes")]


class Projection(ToolInput):
    predicate: Annotated[str, Field(min_length=1, max_length=MAX_PREDICATE_CHARS,
                                    description="Fact name (an atom)")]
    arguments: Annotated[list[Scalar], Field(max_length=MAX_ARITY, description="Strings become atoms")]
    statement: Annotated[str, text_field("The reading in plain words", MAX_STATEMENT_CHARS)]
    quality: Annotated[Literal[QUALITIES],  # type: ignore[valid-type]
                       about("Default exact; lossy and context_required make recall attach the text")] | None = None


class Namespace(OutputPart):
    type: str
    id: str | None = None


class RememberInput(ToolInput):
    memory: Annotated[str, text_field("The exact text to keep (here memory is the text, not a segment)", MAX_SOURCE_CHARS)]
    scope: Annotated[Literal[SCOPES], about("Default auto: the project when the host names one, else the session")] | None = None  # type: ignore[valid-type]
    retention: Annotated[Literal[tuple(RETENTION)],  # type: ignore[valid-type]
                         about("Default long_term")] | None = None
    kind: Annotated[Literal[("auto", *KINDS)], about("Default text")] | None = None  # type: ignore[valid-type]
    projections: Annotated[list[Projection], Field(max_length=MAX_PROJECTIONS,
                                                   description="Readings of the text, stored as facts")] | None = None
    idempotency_key: Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS, description=(
        "A retry with the same key and text returns the first receipt"))] | None = None
    supersedes: Annotated[list[MemoryId], Field(max_length=MAX_IDS,
                                                description="Ids of active memories this one replaces")] | None = None
    valid_from: Instant | None = None
    valid_to: Instant | None = None


class RememberOutput(ToolOutput):
    status: str
    id: str
    source_id: str
    namespace: Namespace
    durable: bool
    version: int
    sha256: str
    projection_status: str
    projection_ids: Strings
    facts: Strings
    supersedes: Strings
    idempotent_replay: bool
    model_calls: int
    related: Rows
    related_truncated: bool


@tool(
    "memory_remember",
    title="Remember source text",
    group="memories",
    description=(
        "Keep exact text (a quote, a decision and its reasons) byte for byte and get a stable id (mem_...). "
        "Optional projections become facts that rules and queries use, supported by this memory. Lands in the "
        "project namespace when the host names one, else the session's."
    ),
    details=(
        "Durably preserve exact source text (byte for byte, with its sha256) in the caller's authorized "
        "namespace and return a stable id (mem_…). scope auto writes to the project when the host names one, "
        "else to the session; never to global. Optional projections become facts (supported by this memory) "
        "that rules and queries use; supersedes replaces older memories; idempotency_key makes retries safe. "
        "The reply lists current memories you may read that this one may restate (near-duplicate text: word-set "
        "Jaccard >= 0.7) or contradict (a projection with the same predicate and leading arguments and a "
        "different last argument), with how to supersede them; nothing is superseded unless asked."
    ),
    capability=None,
    capability_note="memory_write_session, _project or _global: that of the namespace written",
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def memory_remember(api: Memory, args: RememberInput) -> Reply[RememberOutput]:
    projections = None if args.projections is None else [p.model_dump(exclude_unset=True) for p in args.projections]
    receipt = api.sources.memory_remember(args.memory, args.scope or "auto", args.retention or "long_term",
                                  args.kind or "text", projections, args.idempotency_key, args.supersedes,
                                  args.valid_from, args.valid_to)
    stored = RememberOutput.model_validate(receipt)
    namespace = stored.namespace.type + (f":{stored.namespace.id}" if stored.namespace.id else "")
    text = f"Stored memory {stored.id} in {namespace}"
    if stored.idempotent_replay:
        text += " (a retry: the first receipt)"
    if stored.facts:
        text += f"; facts: {', '.join(stored.facts[:10])}" + (" …" if len(stored.facts) > 10 else "")
    if stored.supersedes:
        text += f"; supersedes {', '.join(stored.supersedes)}"
    return Reply("\n".join([text, *_related_lines(stored)]), stored)


def _related_lines(stored: RememberOutput) -> list[str]:
    """What the new memory may restate or contradict, and the one call that would supersede them."""
    if not stored.related:
        return []
    lines = [f"% may {r['relation'].replace('restates', 'restate').replace('contradicts', 'contradict')} "
             f"{r['id']} ({'; '.join(r['why'])}): "
             f"{r['preview']!r}" + ("" if r["can_supersede"] else f" (you cannot change {r['namespace']['type']} "
                                                                   "memories)")
             for r in stored.related]
    if stored.related_truncated:
        lines.append(f"% (only the first {len(stored.related)} listed)")
    ids = [r["id"] for r in stored.related if r["can_supersede"]]
    if ids:
        lines.append(f"% nothing was superseded; if this replaces them: memory_forget "
                     f'{{"ids": {json.dumps(ids)}, "action": "supersede", "superseded_by": "{stored.id}"}} '
                     "(or pass supersedes: [...] when remembering)")
    return lines


class GetInput(ToolInput):
    id: MemoryId
    as_of: Instant | None = None


class MemorySummary(ToolOutput):
    id: str
    namespace: Namespace
    kind: str
    status: str
    current: bool
    recorded_at: str


class GetOutput(MemorySummary):
    source_id: str
    valid_from: str
    valid_to: str | None = None
    superseded_by: str | None = None
    source_text: str | None = None
    principal: str
    trust: str
    version: int
    projections: Rows
    history: Rows


@tool(
    "memory_get",
    title="Get memory",
    group="memories",
    description=(
        "The exact text of a memory by id, with its namespace, history and projections; as_of answers as it stood "
        "then."
    ),
    details=(
        "Fetch one memory by id: its exact source text (the text content is exactly the source; for a memory "
        "that is not current, after one first line starting with % that says why: superseded, expired, deleted "
        "or outside its validity), namespace, provenance, lifecycle history and projections. An id the caller "
        "may not read is reported exactly like an unknown one. as_of answers as the store stood at that time."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def memory_get(api: Memory, args: GetInput) -> Reply[GetOutput]:
    found = GetOutput.model_validate(api.sources.memory_get(args.id, args.as_of))
    text = found.source_text if found.source_text is not None else f"Memory {args.id}: its text was erased"
    if not found.current:
        text = f"{_not_current(found)}\n{text}"
    return Reply(text, found)


def _not_current(found: GetOutput) -> str:
    """The line a memory that is not current starts with, so a reader of the text alone does not take it for one."""
    if found.status == "active":  # its validity has not begun or has ended
        return (f"% not current: valid from {found.valid_from} to {found.valid_to or 'open end'}; "
                "the text as recorded follows")
    last = found.history[-1] if found.history else {}
    when = f" at {last['at']}" if last.get("at") else ""
    why = f" ({last['reason']})" if last.get("reason") else ""
    by = f" by {found.superseded_by}" if found.superseded_by else ""
    return f"% {found.status}{by}{when}{why}: not current; the text as recorded follows"


class SearchInput(ToolInput):
    query: Annotated[str, text_field("Words to look for", MAX_QUERY_CHARS)]
    scope: ReadScope | None = None
    history: Annotated[bool, about("Include superseded, expired and forgotten ones")] | None = None
    limit: Annotated[int, int_field("Default 10", 1, MAX_LIMIT)] | None = None
    kind: Annotated[Literal[KINDS], about("Only this kind")] | None = None  # type: ignore[valid-type]
    as_of: Instant | None = None
    mode: Annotated[Literal[MODES], about(  # type: ignore[valid-type]
        "Default auto (words and projections); exact: the query as a literal substring")] | None = None


class SearchOutput(ToolOutput):
    query: str
    searched: str
    results: Rows
    total: int
    limit: int
    truncated: bool
    semantic: str | None = None  # the embedding model that also ranked by meaning (left out: words only)
    semantic_indexing: bool | None = None  # true: some memories have no vector yet (found by their words only)


@tool(
    "memory_search",
    title="Search memories",
    group="memories",
    description=(
        "Search the text of every memory you may read by its words in any form (and by meaning where the server "
        "has an embedding model); ranked, each result with why it matched. For facts use query_logic; for events "
        "recall."
    ),
    details=(
        "Full-text plus symbolic search over every memory the caller may read: words in the source text or "
        "projection statements in any inflection (Snowball stems: deploy finds deployed), words inside Chinese, "
        "Japanese and Korean text, compounds joined or apart (rollback finds roll back); a question's stop words "
        "are dropped. Also projections whose predicate or arguments are query words. Ranked by BM25 over what "
        "the caller may see; each result says why it matched. Current memories only unless history is true. "
        "With an embedding model (the semantic extra; DATALOG_MEMORY_EMBEDDER), modes auto and text also rank by "
        "meaning and find memories that share no word with the query; `semantic` names the model."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def memory_search(api: Memory, args: SearchInput) -> Reply[SearchOutput]:
    found = SearchOutput.model_validate(api.sources.memory_search(
        args.query, args.scope or "all_visible", bool(args.history), args.limit, args.kind, args.as_of,
        args.mode or "auto"))
    if not found.results:
        message = f"No memory matches {args.query!r}"
        if not args.history and api.sources.memory_search(args.query, args.scope or "all_visible", True, 1, args.kind,
                                                  args.as_of, args.mode or "auto")["total"]:
            message += "\n% forgotten, expired or superseded memories match: search again with history: true"
        elif found.semantic_indexing:
            message += f"\n% {INDEXING_NOTE}"
        elif not found.semantic and args.mode != "exact":
            message += f"\n% {WORDS_ONLY_NOTE}"
        return Reply(message, found)
    lines = [f"{i}. [{r['id']}] ({r['scope']}, {r['status']}) {_preview(r['memory'])} — {'; '.join(r['why'])}"
             for i, r in enumerate(found.results, 1)]
    if found.truncated:
        lines.append(f"({len(found.results)} of {found.total} shown)")
    if found.semantic_indexing:
        lines.append(f"% {INDEXING_NOTE}")
    return Reply("\n".join(lines), found)


INDEXING_NOTE = "meaning vectors are still being written: some memories were matched by words only; search again soon"
WORDS_ONLY_NOTE = ("searched by words and their forms only (no embedding model here): try other words, synonyms or "
                   "the language the memory is in")


def _preview(text_value: str, size: int = 160) -> str:
    flat = " ".join(text_value.split())
    return flat if len(flat) <= size else flat[:size] + "…"


class RecallInput(ToolInput):
    predicate: Annotated[str, Field(min_length=1, max_length=MAX_PREDICATE_CHARS,
                                    description="The projection's predicate")]
    arguments: Annotated[list[ScalarOrAny], Field(max_length=MAX_ARITY, description=(
        "Argument pattern; null matches any value (omit to match every arity)"))] | None = None
    include_source: Annotated[bool, about("Attach the exact source text to every match")] | None = None
    limit: Annotated[int, int_field("Matches to return (default 20)", 1, MAX_LIMIT)] | None = None
    as_of: Instant | None = None
    scope: ReadScope | None = None


class RecallOutput(ToolOutput):
    content: str
    memories: Rows
    derived: Rows
    total: int
    limit: int
    truncated: bool
    model_calls: int


@tool(
    "memory_recall",
    title="Recall memories",
    group="memories",
    description=(
        "Memories whose projections match predicate(arguments), null matching anything, nearest namespace first; "
        "with rules, also the conclusions they derive from your memories."
    ),
    details=(
        "Symbolic-first recall: current memories whose projections match predicate(arguments…), null "
        "matching anything, nearest namespace first (session, project, global). When rules define the "
        "predicate, also the conclusions they derive from your memories (under derived), each with the "
        "memories its proof rests on; with as_of, derived from the memories current then (rules as they are "
        "now). The exact source text is attached when a projection is lossy or needs "
        "context, or when include_source is true. Returns Markdown plus the structured list."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def memory_recall(api: Memory, args: RecallInput) -> Reply[RecallOutput]:
    found = RecallOutput.model_validate(api.sources.memory_recall(
        args.predicate, args.arguments, bool(args.include_source), args.limit, args.as_of,
        args.scope or "all_visible"))
    return Reply(found.content, found)


class ForgetInput(ToolInput):
    ids: Annotated[list[MemoryId], Field(min_length=1, max_length=MAX_IDS,
                                         description="Memories to forget")] | None = None
    query: Annotated[str, text_field("What to forget, described: only lists the ids",
                                     MAX_QUERY_CHARS)] | None = None
    action: Annotated[Literal[tuple(ACTIONS)], about(  # type: ignore[valid-type]
        "Default expire")] | None = None
    reason: Annotated[str, text_field("Why (kept in the history)", 4096)] | None = None
    erase: Annotated[bool, about("With delete: erase the text too")] | None = None
    dry_run: Annotated[bool, about("Only show the targets")] | None = None
    limit: Annotated[int, int_field("With query: how many to list (default 20)", 1, MAX_LIMIT)] | None = None
    superseded_by: Annotated[MemoryId, about("With supersede: the replacing memory")] | None = None


class ForgetOutput(ToolOutput):
    action: str
    dry_run: bool
    targets: Rows
    forgotten: int
    removed_facts: Strings
    erased: bool
    query: str | None = None
    skipped: Rows | None = None  # with query: readable but not changeable by the caller
    matched: int | None = None  # with query: how many current memories the search matched
    truncated: bool | None = None
    confirm: dict[str, Any] | None = None  # with query: the arguments that forget exactly the targets
    superseded_by: str | None = None
    withdrawn: Strings | None = None  # not for a dry run
    withdrawn_total: int | None = None
    withdrawn_note: str | None = None


@tool(
    "memory_forget",
    title="Forget memories",
    group="memories",
    description=(
        "Forget memories by ids. A query only lists what would go (the ids to pass next). Their projections stop "
        "supporting facts; the reply lists the facts removed."
    ),
    details=(
        "Forget memories by ids (dry_run shows them without changing anything). A query never forgets: one "
        "search lists the current memories it finds that you may change (ids, previews, how many matched, what "
        "was cut or skipped) and the exact ids to pass next. Actions: expire (default), supersede (superseded_by "
        "names the replacement), invalidate, archive, delete; erase (with delete) also erases the text, keeping "
        "a tombstone. A forgotten memory's projections stop supporting facts, so conclusions resting only on "
        "it go. Needs the write capability of each memory's namespace."
    ),
    capability=READ,
    capability_note="and the write capability of each memory's namespace",
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
    evaluates=True,  # it says which conclusions stopped holding: they are evaluated before and after
)
def memory_forget(api: Memory, args: ForgetInput) -> Reply[ForgetOutput]:
    result = ForgetOutput.model_validate(api.sources.memory_forget(
        args.ids, args.query, args.action or "expire", args.reason, bool(args.erase), bool(args.dry_run),
        args.limit, args.superseded_by))
    if args.query is not None:
        return Reply(_preview_text(args.query, result, args.dry_run is False), result)
    ids = ", ".join(t["id"] for t in result.targets) or "none"
    if result.dry_run:
        return Reply(f"Would {result.action} {len(result.targets)} memory(ies): {ids}", result)
    changed = ", ".join(t["id"] for t in result.targets if t.get("changed", True)) or "none"
    lines = [f"Forgot {result.forgotten} memory(ies) ({result.action}): {changed}"]
    if result.superseded_by:
        lines[0] += f", superseded by {result.superseded_by}"
    unchanged = [t for t in result.targets if not t.get("changed", True)]
    if unchanged:  # asked again, or already gone another way: said, not counted as forgotten
        lines.append(f"% unchanged ({len(unchanged)}): " + ", ".join(
            f"{t['id']} (already {t.get('status_before', 'so')})" for t in unchanged))
    if result.removed_facts:
        lines.append(listed_line("facts removed", result.removed_facts))
    lines.append(Withdrawn(result.withdrawn or [], result.withdrawn_total, result.withdrawn_note or "").text())
    return Reply("\n".join(lines), result)


def _preview_text(query: str, result: ForgetOutput, asked_to_apply: bool) -> str:
    """A forget by query: what would go, what was cut or skipped, and the call that forgets exactly that."""
    head = (f"Nothing forgotten yet: a query only lists. Would {result.action} {len(result.targets)} "
            f"memory(ies) matching {query!r}" + (":" if result.targets else "."))
    if asked_to_apply:
        head += "\n% dry_run false does not apply to a query: forget by the ids below"
    lines = [head] + [f"{i}. [{t['id']}] ({t['namespace']['type']}) {_preview(t['preview'])} — {'; '.join(t['why'])}"
                      for i, t in enumerate(result.targets, 1)]
    shown = len(result.targets) + len(result.skipped or [])
    if result.truncated:
        lines.append(f"% {shown} of {result.matched} matches listed: narrow the query or raise limit")
    if result.skipped:
        lines.append(f"% skipped {len(result.skipped)} you may read but not change: "
                     + ", ".join(f"{s['id']} ({s['namespace']['type']}: needs {s['needs']})" for s in result.skipped))
    if result.targets and result.confirm:
        lines.append(f"% to forget exactly these: memory_forget {json.dumps(result.confirm)}")
    return "\n".join(lines)
