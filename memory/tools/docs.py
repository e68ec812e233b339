"""docs/tools.md, generated from the registry, and the tool x capability table of docs/authority.md.

    python -m memory.tools.docs --write          regenerate docs/tools.md and docs/authority.md's table
    python -m memory.tools.docs --check          exit 1 when either is stale
    python -m memory.tools.docs                  print docs/tools.md
    python -m memory.tools.docs --capabilities   print the capability table of docs/authority.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..resources import SCHEMA, TEMPLATES
from . import REGISTRY
from .toolsets import DEFAULT_TOOLS
from .registry import Tool


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def render_markdown() -> str:
    lines = [
        "# Tool reference",
        "",
        "Generated from the tool registry by `python -m memory.tools.docs --write`; a test fails when",
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
        f"- `{SCHEMA}`: the SQLite schema of the database file (`application/sql`); not listed on a PostgreSQL store",
        "",
        "Authority: the capability column is what a call needs, checked before the tool reads or writes",
        "anything (a refused call is `permission_denied` and writes nothing). Any write to a mounted global",
        "segment also needs `memory_write_global`. A call behaves as if data the caller may not read did not",
        "exist (see [Authority](authority.md)).",
        "",
        "| tool | CLI | capability | read-only | destructive | idempotent |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for t in REGISTRY.values():
        a = t.annotations
        lines.append(f"| [`{t.name}`](#{t.name}) | `{t.name.replace('_', '-')}` | {capability_cell(t)} | "
                     f"{_yn(a.read_only)} | {_yn(a.destructive)} | {_yn(a.idempotent)} |")
    for t in REGISTRY.values():
        lines += ["", f"## {t.name}", "", f"**{t.title}** (toolset `{t.group}`{', default' if t.name in DEFAULT_TOOLS else ''}). "
                  f"{t.description}", ""]
        if t.details:
            lines += [t.details, ""]
        lines += [f"Capability: {capability_cell(t)}.", "", "Arguments:", ""]
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


def tool_guide() -> str:
    """Every tool by toolset, with what its short description leaves out: the datalog-memory://guide/tools
    resource, for a model that wants the details without the schemas."""
    from .toolsets import TOOLSETS, tools_of

    lines = ["# Tools", "", "Toolsets marked default are listed from the start; enable the others with "
             'enable_toolsets {"enable": ["name"]}.']
    for toolset in TOOLSETS:
        lines += ["", f"## {toolset.name}: {toolset.description}", ""]
        for name in tools_of(toolset.name):
            spec = REGISTRY[name]
            mark = " (default)" if name in DEFAULT_TOOLS else ""
            lines.append(f"- **{name}**{mark}: {spec.description}" + (f" {spec.details}" if spec.details else ""))
    return "\n".join(lines) + "\n"


def capability_cell(t: Tool) -> str:
    """The capabilities a tool needs, as docs/authority.md and docs/tools.md print them."""
    parts = [f"`{t.capability}`"] if t.capability else []
    for argument, by_value in t.argument_capabilities.items():
        parts += [f"`{c}` with `{argument}: {json.dumps(v)}`" for v, c in by_value.items()]
    if t.capability_note:
        parts.append(t.capability_note)
    return "; ".join(parts) or "none"


def capability_table() -> str:
    """The tool x capability table of docs/authority.md (a test checks the page holds exactly this)."""
    lines = ["| tool | needs |", "| --- | --- |"]
    lines += [f"| `{t.name}` | {capability_cell(t)} |" for t in REGISTRY.values()]
    return "\n".join(lines) + "\n"


def _yn(value: bool) -> str:
    return "yes" if value else "no"


# docs/tools.md of the checkout this module runs from (an installed wheel has no docs folder); the page with the
# capability table is beside it.
TOOLS_MD = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
AUTHORITY_PAGE = "authority.md"
CAPABILITY_HEADER = "| tool | needs |"


class NoCapabilityTable(ValueError):
    """The authority page has no table to replace: its header line is missing."""


def with_capability_table(page: str) -> str:
    """The page with its tool x capability table (the table lines from the `| tool | needs |` header on) replaced
    by the current one; the text around it is kept as it is."""
    lines = page.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == CAPABILITY_HEADER)
    except StopIteration:
        raise NoCapabilityTable(f"no line {CAPABILITY_HEADER!r} to put the capability table at") from None
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "".join(lines[:start]) + capability_table() + "".join(lines[end:])


def generated_pages() -> dict[Path, str]:
    """Every generated file of the docs folder and what it should hold."""
    authority = TOOLS_MD.parent / AUTHORITY_PAGE
    page = authority.read_text(encoding="utf-8") if authority.exists() else ""
    try:
        return {TOOLS_MD: render_markdown(), authority: with_capability_table(page)}
    except NoCapabilityTable as e:
        raise NoCapabilityTable(f"{authority}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memory.tools.docs",
                                     description="Tool docs generated from the registry.")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true",
                      help=f"regenerate {TOOLS_MD} and the capability table of {AUTHORITY_PAGE} beside it")
    what.add_argument("--check", action="store_true", help="exit 1 when either is stale")
    what.add_argument("--capabilities", action="store_true",
                      help=f"print the tool x capability table of docs/{AUTHORITY_PAGE}")
    args = parser.parse_args(argv)
    if args.capabilities:
        print(capability_table(), end="")
        return 0
    if not (args.write or args.check):
        print(render_markdown(), end="")
        return 0
    if not TOOLS_MD.parent.is_dir():
        print(f"no docs folder at {TOOLS_MD.parent}: run this from a source checkout", file=sys.stderr)
        return 2
    try:
        pages = generated_pages()
    except NoCapabilityTable as e:
        print(e, file=sys.stderr)
        return 2
    stale = [path for path, text in pages.items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run python -m memory.tools.docs --write", file=sys.stderr)
        return 1 if stale else 0
    for path, text in pages.items():
        if path in stale:
            path.write_text(text, encoding="utf-8")
        print(f"{path}: {'written' if path in stale else 'unchanged'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
