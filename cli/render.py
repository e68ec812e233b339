"""Human output for tool results: a tree for proofs, a table for rows, the text otherwise.

Values are always printed literally (a term like `[red, green]` or `'a[/red]b'` is text, never Rich
markup). On a terminal rows are a table and proofs a tree; piped, rows are tab-separated lines (one
value per line for a single column, a header line first otherwise) and proofs indented lines, so
`cut`, `sort` and `grep` see whole values. No value is ever shortened. Whatever part of a result the
main rendering leaves out follows it as `key: value` lines (docs/cli.md says which keys are never printed).
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from rich.text import Text

from memory.knowledge import proof_view

if TYPE_CHECKING:
    from rich.console import Console

ROW_KEYS = ("bindings", "items", "memories", "snapshots", "predicates", "rules")
# Keys no rendering prints, each for a reason (docs/cli.md): the warnings go to standard error before the
# result (main.py), is_error is the exit status, the others are the table's own header and footer.
NOT_PRINTED = {"warnings": "printed on standard error before the result",
               "is_error": "the exit status says it",
               "values": "query_logic's answers again (bindings), in the table",
               "variables": "the table's header", "total": "the row count under the table",
               "truncated": "the row count under the table says when rows were cut",
               "model_calls": "always 0: no tool calls a model (a field the references' replies carry)"}
# Keys the main rendering shows in its own form rather than as a `key: value` line.
AS_FORM = {"proven": "a proof tree when true, 'not provable' when false", "proof_nodes": "the proof tree",
           "bindings": "the table of answers, under the variables' names", "proofs": "prove's lines, one per proof"}
# Columns left out first when a table is wider than the terminal (--json keeps them): a row's id, fact or
# term is never cut, a timestamp can go.
LOW_VALUE = ("created_at", "updated_at", "retracted_at", "content_hash", "member_ids", "member_types")
# Integer values under these keys are instants in epoch seconds: people read them as ISO-8601 UTC.
TIME_KEYS = ("now", "timestamp", "event_ts", "since", "until", "at")
_EPOCH = re.compile(r"\b(\d{9,11}) \((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)")


def render(console: Console, text: str, structured: dict[str, Any], inputs: frozenset[str] = frozenset()) -> None:
    """The result for people: its main part (proof, table or text), then every other part of it that the
    main part did not show, as `key: value` lines (on standard error when standard output must hold only
    rows or exact source text). `inputs`: the tool's argument names, whose values the result only echoes
    (the goal asked, the limit, the segment) and which are left out."""
    text = _EPOCH.sub(r"\2", text)  # `at 1796180020 (2026-12-02T02:53:40Z)`: the instant once, readable
    if "proof_nodes" in structured or structured.get("proven") is False:
        _proof(console, structured)
        _extras(console, structured, inputs | {"proof_nodes", "fact", "proven"}, "", False)
        return
    if structured.get("source_text") == text:  # exact source text: byte for byte, nothing added
        sys.stdout.write(text)
        sys.stdout.flush()
        _extras(console, structured, inputs | {"source_text"}, text, True)
        return
    if isinstance(structured.get("content"), str):  # the tool wrote Markdown for people: show it
        _plain(console, text if structured["content"] in text else structured["content"])
        _extras(console, structured, inputs | {"content"}, text, False)
        return
    if _is_prove(structured):
        _prove(console, structured)
        _extras(console, structured, inputs | {"proofs", "count"}, "", False)
        return
    key, rows, columns = _rows(structured)
    if key is None:
        first, _, rest = text.partition("\n")
        if "bindings" in structured and first in ("[{}]", "[]"):  # a ground goal: it holds, or it does not
            text = ("true" if first == "[{}]" else "no solutions") + ("\n" + rest if rest else "")
        _plain(console, text)
        _extras(console, structured, inputs | {"bindings"}, text, False)
        return
    cells = [[_cell(row.get(c), c) for c in columns] for row in rows]
    if console.is_terminal:
        _table(console, columns, cells)
    else:
        _separated(console, columns, cells)
    _footer(console, structured, len(rows), key)
    _extras(console, structured, inputs | {key}, "", not console.is_terminal)


def warn(console: Console, message: str) -> None:
    """A warning line (on standard error): the command still did what it was asked."""
    console.print(Text(f"Warning: {message}", style="yellow"), soft_wrap=True)


def _plain(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _table(console: Console, columns: list[str], cells: list[list[str]]) -> None:
    """A table as wide as the terminal at most, that never cuts a value inside a word: low-value columns
    (LOW_VALUE) go first, then long values wrap after a comma, a space or an opening parenthesis; when even
    that cannot fit, one `column: value` line per value (the terminal wraps a long line, nothing is cut)."""
    from rich.table import Table  # only on a terminal: piped output (a one-shot in a script) goes without

    keep = list(range(len(columns)))
    hidden = []
    for name in LOW_VALUE:
        if _fit(columns, cells, keep, console.width) is not None:
            break
        if name in columns and len(keep) > 1:
            keep.remove(columns.index(name))
            hidden.append(name)
    widths = _fit(columns, cells, keep, console.width)
    if widths is None:
        _records(console, columns, cells)
        return
    table = Table()
    for index, width in zip(keep, widths):
        table.add_column(Text(columns[index]), no_wrap=True, width=width, overflow="ignore")
    for row in cells:
        table.add_row(*[Text("\n".join(_wrap(row[index], width))) for index, width in zip(keep, widths)])
    console.print(table)
    if hidden:
        console.print(Text(f"not shown at this width: {', '.join(hidden)} (--json has every column)", style="dim"),
                      soft_wrap=True)


_BREAK = re.compile(r"[^,( ]*(?:[,(] ?| |$)")


def _pieces(value: str) -> list[str]:
    """The value in pieces that a line may end after: each ends with `,` `(` or a space (or the value)."""
    return [p for p in _BREAK.findall(value) if p] or [""]


def _wrap(value: str, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in value.split("\n"):
        line = ""
        for piece in _pieces(paragraph):
            if line and len(line) + len(piece.rstrip()) > width:
                lines.append(line.rstrip())
                line = ""
            line += piece
        lines.append(line.rstrip())
    return lines


def _fit(columns: list[str], cells: list[list[str]], keep: list[int], total: int) -> list[int] | None:
    """The width of each kept column so that the table fits in `total` characters without cutting a piece
    of a value (see _pieces), or None when it cannot."""
    room = total - 3 * len(keep) - 1  # a border and two spaces of padding per column, the closing border
    natural, least = [], []
    for index in keep:
        values = [row[index] for row in cells]
        natural.append(max([len(columns[index]), *(len(line) for v in values for line in v.split("\n"))]))
        least.append(max([len(columns[index]), *(len(p.rstrip()) for v in values for line in v.split("\n")
                                                  for p in _pieces(line))]))
    widths = list(natural)
    while sum(widths) > room:
        shrinkable = [i for i, w in enumerate(widths) if w > least[i]]
        if not shrinkable:
            return None
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] = max(least[widest], widths[widest] - (sum(widths) - room))
    return widths


def _records(console: Console, columns: list[str], cells: list[list[str]]) -> None:
    """Each row as `column: value` lines, rows apart by a blank line: for a terminal too narrow for a table."""
    blocks = ["\n".join(f"{name}: {value}" for name, value in zip(columns, row)) for row in cells]
    console.print(Text("\n\n".join(blocks)), soft_wrap=True)


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


def _footer(console: Console, structured: dict[str, Any], shown: int, key: str) -> None:
    """How many rows there are: on a terminal under the table; piped, on standard error, so that the
    output holds only rows."""
    total = structured.get("total")
    if not shown and not structured.get("truncated"):
        note = "no solutions" if key == "bindings" else "none"
    elif structured.get("truncated"):
        note = f"{shown} of {total} shown (use --limit/--offset)"
    elif total is not None:
        note = f"{total} row(s)"
    else:
        return
    if console.is_terminal:
        console.print(Text(note, style="dim"))
    else:
        print(note, file=sys.stderr)


def _rows(structured: dict[str, Any]) -> tuple[str | None, list, list]:
    """The list of records the result is about (its key, its rows, their columns), or (None, [], [])."""
    for key in ROW_KEYS:
        rows = structured.get(key)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            continue
        if key == "bindings":
            if not structured.get("variables"):
                return None, [], []  # a ground goal: true or no solutions
            return key, rows, list(structured["variables"])  # no solutions: the header alone, and it says so
        if rows:
            return key, rows, list({k: None for r in rows for k in r})
    return None, [], []


def _is_prove(structured: dict[str, Any]) -> bool:
    proofs = structured.get("proofs")
    return isinstance(proofs, list) and all(isinstance(p, dict) and "proof_id" in p for p in proofs)


def _prove(console: Console, structured: dict[str, Any]) -> None:
    """prove's result in words: each conclusion, how sure, the tags to cite, the observations it rests on."""
    proofs = structured["proofs"]
    if not proofs:
        _plain(console, "no proofs: the rules derive nothing from the observations recalled")
        return
    lines = [f"{len(proofs)} proof(s); cite the tags (HEDGE-, RULE-, STEP-) in an answer that verify checks"]
    for proof in proofs:
        nodes = proof.get("nodes") or []
        lines.append(f"{proof.get('fact')}: {proof.get('status')}, confidence {_cell(proof.get('confidence'))} "
                     f"({proof.get('proof_id')})")
        for node in nodes:
            if node.get("kind") == "conclusion" and node.get("fact") == proof.get("fact"):
                rule = f" (rule_id {node['rule_id']})" if node.get("rule_id") is not None else ""
                lines.append(f"  concluded as {node.get('step_tag')} by {node.get('rule_tag')}{rule}")
        evidence = sorted({n["hedge_tag"] for n in nodes if n.get("kind") == "evidence" and n.get("hedge_tag")},
                          key=lambda tag: int(tag.split("-")[1]) if tag.split("-")[-1].isdigit() else 0)
        lines.append(f"  evidence: {', '.join(evidence)}" if evidence else "  evidence: stored facts only")
        for key in sorted(set(proof) - {"fact", "status", "confidence", "proof_id", "nodes"}):
            lines.append(f"  {key}: {_cell(proof[key], key)}")
    _plain(console, "\n".join(lines))


def _extras(console: Console, structured: dict[str, Any], shown: frozenset[str] | set[str], text: str,
            to_stderr: bool) -> None:
    """Every top-level part of the result the main rendering did not show, one `key: value` line each."""
    lines = []
    for key, value in structured.items():
        if key in shown or key in NOT_PRINTED or _in_text(key, value, text):
            continue
        if _records_list(value):  # one line per record
            lines.append(f"{key}:")
            lines += [f"  - {', '.join(f'{k}={_cell(v, k)}' for k, v in item.items())}" for item in value]
        elif isinstance(value, dict) and value:  # one line per member
            lines.append(f"{key}:")
            lines += [f"  {k}: {_cell(v, k) if v not in (None, [], {}, '') else 'none'}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {_cell(value, key) if value not in (None, [], {}, '') else 'none'}")
    if not lines:
        return
    if to_stderr:
        print("\n".join(lines), file=sys.stderr)
    else:
        _plain(console, "\n".join(lines))


def _records_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _in_text(key: str, value: Any, text: str) -> bool:
    """Whether `text` already shows this part of the result: every text leaf of it appears there (a number
    only counts beside a word of its key, so a stray `1` does not stand for any count)."""
    if not text:
        return False
    if _records_list(value):  # a list of records: shown when the text names each one
        return all(any(isinstance(v, str) and v and v in text for v in _leaves(item)) for item in value)
    leaves = list(_leaves(value))
    words = [w for w in key.split("_") if len(w) > 2]
    strings = [v for v in leaves if isinstance(v, str) and v]
    numbers = [v for v in leaves if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if strings:
        return all(v in text for v in strings) and (not numbers or any(w in text for w in words))
    if numbers:
        return all(_number(v) in text for v in numbers) and any(w in text.lower() for w in words)
    lowered = text.lower()
    return key in lowered or key.replace("_", " ") in lowered


def _leaves(value: Any):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


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


def _cell(value: Any, key: str = "") -> str:
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, (dict, bool)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int) and _is_time(key) and 0 <= value < 2 ** 34:
        return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return "" if value is None else str(value)


def _is_time(key: str) -> bool:
    return key in TIME_KEYS or key.endswith(("_at", "_ts"))
