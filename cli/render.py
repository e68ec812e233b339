"""Human output for tool results: a tree for proofs, a table for rows, the text otherwise."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.tree import Tree

ROW_KEYS = ("bindings", "items", "memories", "snapshots", "predicates", "rules")


def render(console: Console, text: str, structured: dict[str, Any]) -> None:
    if "proof_nodes" in structured or structured.get("proven") is False:
        _proof(console, structured)
        return
    if structured.get("source_text") == text:  # exact source text: byte for byte, nothing added
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if isinstance(structured.get("content"), str):  # the tool wrote Markdown for people: show it
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    rows, columns = _rows(structured)
    if not rows:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    table = Table(*columns)
    for row in rows:
        table.add_row(*[_cell(row.get(c)) for c in columns])
    console.print(table)
    total = structured.get("total")
    if structured.get("truncated"):
        console.print(f"{len(rows)} of {total} shown (use --limit/--offset)", style="dim")
    elif total is not None:
        console.print(f"{total} row(s)", style="dim")


def _rows(structured: dict[str, Any]) -> tuple[list, list]:
    for key in ROW_KEYS:
        rows = structured.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            if key == "bindings" and not structured.get("variables"):
                return [], []  # a ground goal: the text ([{}] or []) says it
            columns = list(structured.get("variables") or {k: None for r in rows for k in r})
            return rows, columns
    return [], []


def _proof(console: Console, structured: dict[str, Any]) -> None:
    nodes = structured.get("proof_nodes")
    if not nodes:
        console.print(f"{structured['fact']}: not provable", markup=False, highlight=False)
        return
    root = Tree(_label(nodes[0]))
    stack = [(root, nodes[0])]
    while stack:
        parent, node = stack.pop()
        for child in node["children"]:  # indexes into the flat list
            branch = parent.add(_label(nodes[child]))
            stack.append((branch, nodes[child]))
    console.print(root)


def _label(node: dict) -> str:
    from rich.markup import escape
    how = node["rule_applied"]
    extra = ""
    if node.get("supports"):
        extra = f"  [dim]({', '.join(node['supports'])})[/dim]"
    if node.get("truncated"):
        extra += "  [dim]…[/dim]"
    if how == "fact":
        return f"[bold]{escape(node['goal'])}[/bold]  fact{extra}"
    return f"[bold]{escape(node['goal'])}[/bold]  ⟸  {escape(how)}{extra}"


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)
