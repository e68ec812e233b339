"""docs/tools.md, generated from the registry (`python -m memory.tools.docs > docs/tools.md`)."""

from __future__ import annotations

import json

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
        "Errors: a tool failure is a result with `isError: true`, a text starting with the reference's token",
        "(`InvalidArguments: …`, `SyntaxError: …`, or the message) and `structuredContent.error.code` from",
        "`invalid_arguments`, `syntax_error`, `invalid_program`, `not_found`, `read_only`, `permission_denied`,",
        "`budget_exceeded`, `evaluation_error`, `conflict`, `storage_error`, `cancelled` (the server stopped while",
        "the call ran). Arguments that fail the input schema",
        "(missing, null, wrong type, empty, too long, unknown) are JSON-RPC error `-32602` with",
        "`data.code = \"invalid_arguments\"`; on the CLI they exit with status 2, tool errors with 1.",
        "",
        "| tool | CLI | read-only | destructive | idempotent |",
        "| --- | --- | --- | --- | --- |",
    ]
    for t in REGISTRY.values():
        a = t.annotations
        lines.append(f"| [`{t.name}`](#{t.name}) | `{t.name.replace('_', '-')}` | {_yn(a.read_only)} | "
                     f"{_yn(a.destructive)} | {_yn(a.idempotent)} |")
    for t in REGISTRY.values():
        lines += ["", f"## {t.name}", "", f"**{t.title}.** {t.description}", "", "Arguments:", ""]
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


def _yn(value: bool) -> str:
    return "yes" if value else "no"


if __name__ == "__main__":
    print(render_markdown(), end="")
