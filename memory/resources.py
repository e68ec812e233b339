"""What a client can browse: each mounted segment as Prolog text, each source memory the caller may read
(its exact text), and the database schema. Plain records; the MCP adapter maps them onto resources.

URIs: `datalog-memory://segment/<name>`, `datalog-memory://memory/<id>`, `datalog-memory://schema`, and the
guides a model reads once: `datalog-memory://guide/conventions` (observation formations, verify's words,
detect's thresholds, the dialect) and `datalog-memory://guide/tools` (every tool with its details)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

from .errors import NotFound, PermissionDenied
from .access.context import READ

SCHEME = "datalog-memory://"
SEGMENT = SCHEME + "segment/"
MEMORY = SCHEME + "memory/"
SCHEMA = SCHEME + "schema"
CONVENTIONS = SCHEME + "guide/conventions"
TOOL_GUIDE = SCHEME + "guide/tools"
PROLOG = "text/x-prolog"
PAGE = 200  # source memories per listing page


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    title: str
    description: str
    mime_type: str


@dataclass(frozen=True)
class Template:
    uri_template: str
    name: str
    description: str
    mime_type: str


TEMPLATES = [
    Template(SEGMENT + "{name}", "segment", "A mounted segment's facts, rules and assumptions as a Prolog program",
             PROLOG),
    Template(MEMORY + "{id}", "memory", "A source memory's exact text (only memories the caller may read)",
             "text/plain"),
]


def _schema_resource() -> Resource:
    return Resource(SCHEMA, "schema", "Database schema",
                    "The SQLite schema of the database file (tables, indexes, triggers), for reading it with sqlite3",
                    "application/sql")


def _guides() -> list[Resource]:
    return [Resource(CONVENTIONS, "conventions", "Conventions", "How observations get their formation, the words "
                     "verify accepts, detect's thresholds and the Datalog dialect", "text/markdown"),
            Resource(TOOL_GUIDE, "tools", "Tool guide", "Every tool, its toolset and the details its short "
                     "description leaves out", "text/markdown")]


def list_resources(memory, cursor: str | None) -> tuple[list[Resource], str | None]:
    """One page: the first also holds the schema (of an SQLite store) and every mounted segment; then source
    memories, PAGE at a time.
    The cursor is the offset of the next memory (opaque to clients)."""
    offset = _offset(cursor)
    page: list[Resource] = []
    if offset == 0:
        page += _guides()
        if memory.store.keeps_schema_text:  # SQLite; PostgreSQL is read with psql
            page.append(_schema_resource())
        # Segments are read through memory_read like everything else (reading one is export_program's check).
        for segment in memory.segments.list_memories()["memories"] if memory.context.can(READ) else []:
            if segment["mounted"]:
                page.append(Resource(SEGMENT + quote(segment["name"], safe=""), f"segment {segment['name']}",
                                     f"Segment {segment['name']}",
                                     f"The {segment['scope']} segment {segment['name']} ({segment['mode']}) as Prolog",
                                     PROLOG))
    try:
        memories = memory.sources.listing(offset, PAGE + 1)
    except PermissionDenied:  # a caller without memory_read browses no memories
        memories = []
    for item in memories[:PAGE]:
        page.append(Resource(MEMORY + item["id"], item["id"], f"Memory {item['id']}",
                             f"A {item['kind']} memory recorded at {item['recorded_at']}", "text/plain"))
    return page, (str(offset + PAGE) if len(memories) > PAGE else None)


def _offset(cursor: str | None) -> int:
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit() or len(cursor) > 12:
        raise NotFound(f"Unknown cursor: {cursor[:40]}", cursor=cursor[:40])
    return int(cursor)


def read_resource(memory, uri: str) -> tuple[str, str]:
    """The text of one resource and its MIME type; NotFound for a URI that names nothing the caller may read."""
    if uri == SCHEMA:
        return schema_text(memory), "application/sql"
    if uri == CONVENTIONS:
        from .guide import conventions
        return conventions(memory), "text/markdown"
    if uri == TOOL_GUIDE:
        from .tools.docs import tool_guide
        return tool_guide(), "text/markdown"
    if uri.startswith(SEGMENT):
        name = unquote(uri[len(SEGMENT):])
        return memory.knowledge.export_program(name), PROLOG
    if uri.startswith(MEMORY):
        got = memory.sources.memory_get(uri[len(MEMORY):])
        if got["source_text"] is None:  # erased: the id stays, the text is gone
            raise memory.sources.not_found(got["id"])
        return got["source_text"], "text/plain"
    raise NotFound(f"Unknown resource: {uri[:200]}", uri=uri[:200])


def schema_text(memory) -> str:
    """The live schema, as SQLite keeps it (what `sqlite3 memory.db .schema` prints). On PostgreSQL the schema
    is migrations/postgresql/ (psql's \\d shows it): the store refuses with a typed error."""
    return memory.store.schema_text()
