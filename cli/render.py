"""Human output for tool results: a tree for proofs, a table for rows, the text otherwise.

Values are always printed literally (a term like `[red, green]` or `'a[/red]b'` is text, never Rich
markup). On a terminal rows are a table and proofs a tree; piped, rows are tab-separated lines (one
value per line for a single column, a header line first otherwise) and proofs indented lines, so
`cut`, `sort` and `grep` see whole values. No value is ever shortened.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from rich.text import Text

from memory.knowledge import proof_view

if TYPE_CHECKING:
    from rich.console import Console

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
        _plain(console, text)
        return
    rows, columns = _rows(structured)
    if not rows:
        _plain(console, text)
        return
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    if console.is_terminal:
        _table(console, columns, cells)
    else:
        _separated(console, columns, cells)
    _footer(console, structured, len(rows))


def warn(console: Console, message: str) -> None:
    """A warning line (on standard error): the command still did what it was asked."""
    console.print(Text(f"Warning: {message}", style="yellow"), soft_wrap=True)


def _plain(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _table(console: Console, columns: list[str], cells: list[list[str]]) -> None:
    from rich.table import Table  # only on a terminal: piped output (a one-shot in a script) goes without

    table = Table()
    for index, name in enumerate(columns):
        longest = max(len(row[index]) for row in cells)
        if longest <= 32 and all(" " not in row[index] for row in cells):
            # short single-word values (timestamps, ids, numbers) keep their whole width
            table.add_column(Text(name), no_wrap=True, min_width=max(longest, len(name)), overflow="fold")
        else:
            table.add_column(Text(name), overflow="fold")  # a long term wraps, never cut with an ellipsis
    for row in cells:
        table.add_row(*[Text(value) for value in row])
    console.print(table)


def _separated(console: Console, columns: list[str], cells: list[list[str]]) -> None:
    lines = ([] if len(columns) == 1 else ["\t".join(_field(c) for c in columns)]) + \
        ["\t".join(_field(value) for value in row) for row in cells]
    console.file.write("\n".join(lines) + "\n")
    console.file.flush()


def _field(value: str) -> str:
    """One tab-separated field on one line, otherwise the value exactly. A term's canonical text already
    writes a tab or newline inside a quoted atom as `\\t` / `\\n` (valid Prolog that reads back as the same
    term), so it is printed verbatim; backslashes are never doubled. Only text that is not a term (a
    memory's content, a formation note) can still hold a raw tab or line break: those alone become
    `\\t`, `\\n`, `\\r`, so every row stays one line of the right number of fields."""
    return value.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _footer(console: Console, structured: dict[str, Any], shown: int) -> None:
    """How many rows there are: on a terminal under the table; piped, on standard error, so that the
    output holds only rows."""
    total = structured.get("total")
    if structured.get("truncated"):
        note = f"{shown} of {total} shown (use --limit/--offset)"
    elif total is not None:
        note = f"{total} row(s)"
    else:
        return
    if console.is_terminal:
        console.print(Text(note, style="dim"))
    else:
        print(note, file=sys.stderr)


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
    root = proof_view.from_flat(structured.get("proof_nodes") or [])
    if root is None:
        _plain(console, f"{structured['fact']}: not provable")
        return
    if not console.is_terminal:  # piped: one node per line, indented by depth
        lines = []
        pending = [(root, 0)]
        while pending:
            step, depth = pending.pop()
            lines.append("  " * depth + _label(step).plain)
            pending.extend((child, depth + 1) for child in reversed(step.children))
        console.file.write("\n".join(lines) + "\n")
        console.file.flush()
        return
    from rich.tree import Tree

    tree = Tree(_label(root))
    stack: list[tuple[Tree, proof_view.ProofStep]] = [(tree, root)]
    while stack:
        parent, step = stack.pop()
        for child in step.children:
            branch = parent.add(_label(child))
            stack.append((branch, child))
    console.print(tree)


def _label(step: proof_view.ProofStep) -> Text:
    """`goal  fact  (supports)` or `goal  ⟸  rule`, built from styled pieces, never parsed as markup."""
    label = Text(step.goal, style="bold")
    how = step.rule_applied
    label.append("  fact" if how == "fact" else f"  ⟸  {how}")
    if step.supports:
        label.append(f"  ({', '.join(step.supports)})", style="dim")
    if step.truncated:
        label.append("  …", style="dim")  # the proof goes on below max_depth
    return label


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, (dict, bool)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)
