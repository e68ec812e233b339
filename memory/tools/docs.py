"""docs/tools.md, generated from the registry (`python -m memory.tools.docs > docs/tools.md`), and the README's
tool x capability table (`python -m memory.tools.docs --capabilities`)."""

from __future__ import annotations

import json

from ..resources import SCHEMA, TEMPLATES
from . import REGISTRY


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def render_markdown() -> str:
    lines = [
        "# Tool reference",
        "",
        "Generated from the tool registry by `python -m memory.tools.docs > docs/tools.md`; a test fails when",
        "this file is stale. Every tool is an MCP tool, a CLI subcommand (`datalog-memory <name-with-dashes>`,",
        "one `--flag` per argument, `--json` for the structured result) and a `memory.Memory` method.",
        "",
        "Errors: every tool failure, arguments that fail the input schema included (missing, null, wrong type,",
        "empty, too long, unknown), is a result with `isError: true` and a text starting with the error's",
        "stable name, its code in CamelCase (`InvalidArguments: …`, `SyntaxError: …`, `NotFound: …`), or the",
        "reference's exact message where a reference tool has one (`Snapshot not found: x`); the CLI prints the same line,",
        "so the model reads what to change. Error results carry no `structuredContent` (clients check it",
        "against the output schema, which describes success); the typed error is in",
        "`_meta[\"datalog-memory/error\"]` with `code` from `invalid_arguments`, `syntax_error`,",
        "`invalid_program`, `not_found`, `read_only`, `permission_denied`, `budget_exceeded`, `evaluation_error`,",
        "`conflict`, `storage_error`, `internal_error`, `cancelled` (the server stopped while the call ran).",
        "Only an unknown tool or a malformed request is a JSON-RPC",
        "error (`-32602`). On the CLI, `--json` prints `{\"error\": {...}}`; schema failures exit with status",
        "2, tool errors with 1. Optional output properties are left out when they have no value (no schema",
        "uses null types).",
        "",
        "Resources (MCP `resources/list`, `resources/read`; the listing pages through source memories):",
        "",
        *[f"- `{r.uri_template}`: {r.description} (`{r.mime_type}`)" for r in TEMPLATES],
        f"- `{SCHEMA}`: the SQLite schema of the database file (`application/sql`)",
        "",
        "Authority: the capability column is what a call needs, checked before the tool reads or writes",
        "anything (a refused call is `permission_denied` and writes nothing). Any write to a mounted global",
        "segment also needs `memory_write_global`. A call behaves as if data the caller may not read did not",
        "exist (see README, Authority).",
        "",
        "| tool | CLI | capability | read-only | destructive | idempotent |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for t in REGISTRY.values():
        a = t.annotations
        lines.append(f"| [`{t.name}`](#{t.name}) | `{t.name.replace('_', '-')}` | {capability_cell(t)} | "
                     f"{_yn(a.read_only)} | {_yn(a.destructive)} | {_yn(a.idempotent)} |")
    for t in REGISTRY.values():
        lines += ["", f"## {t.name}", "", f"**{t.title}.** {t.description}", "",
                  f"Capability: {capability_cell(t)}.", "", "Arguments:", ""]
        required = set(t.input_schema.get("required", []))
        props = t.input_schema.get("properties", {})
        if not props:
            lines.append("- (none)")
        for name, prop in props.items():
            need = "required" if name in required else "optional"
            lines.append(f"- `{name}` ({prop.get('type')}, {need}; CLI `{_flag(name)}`): {prop.get('description', '')}")
        lines += ["", "Input schema:", "", "```json", json.dumps(t.input_schema, indent=2), "```",
                  "", "Output schema (`structuredContent`):", "", "```json", json.dumps(t.output_schema, indent=2), "```"]
    return "\n".join(lines) + "\n"


def capability_cell(t) -> str:
    """The capabilities a tool needs, as README and docs/tools.md print them."""
    parts = [f"`{t.capability}`"] if t.capability else []
    for argument, by_value in t.argument_capabilities.items():
        parts += [f"`{c}` with `{argument}: {json.dumps(v)}`" for v, c in by_value.items()]
    if t.capability_note:
        parts.append(t.capability_note)
    return "; ".join(parts) or "none"


def capability_table() -> str:
    """The tool x capability table of the README (a test checks the README holds exactly this)."""
    lines = ["| tool | needs |", "| --- | --- |"]
    lines += [f"| `{t.name}` | {capability_cell(t)} |" for t in REGISTRY.values()]
    return "\n".join(lines) + "\n"


def _yn(value: bool) -> str:
    return "yes" if value else "no"


if __name__ == "__main__":
    import sys

    print(capability_table() if sys.argv[1:] == ["--capabilities"] else render_markdown(), end="")
