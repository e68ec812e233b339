"""Human output for tool results: rich tables where there are rows, the text otherwise."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def render(console: Console, text: str, structured: dict[str, Any]) -> None:
    rows = None
    if isinstance(structured.get("items"), list):
        rows = structured["items"]
    elif isinstance(structured.get("bindings"), list) and structured.get("variables"):
        rows = structured["bindings"]
    if not rows:
        console.print(text, markup=False, highlight=False, soft_wrap=True)
        return
    columns = list(structured.get("variables") or rows[0].keys())
    table = Table(*columns)
    for row in rows:
        table.add_row(*[_cell(row.get(c)) for c in columns])
    console.print(table)
    total = structured.get("total")
    if structured.get("truncated"):
        console.print(f"{len(rows)} of {total} shown (use --limit/--offset)", style="dim")
    elif total is not None:
        console.print(f"{total} row(s)", style="dim")


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)
