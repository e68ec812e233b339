"""`datalog-memory`: admin commands plus one subcommand per registry tool."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.progress import Progress

from memory import Memory, __version__
from memory.errors import DatalogMemoryError
from memory.tools import REGISTRY, ArgumentsRejected, Tool, call_tool, error_result

from .bulk import read_csv, read_jsonl, read_observations
from .render import render

app = typer.Typer(
    name="datalog-memory",
    help="Durable, explainable memory for LLM agents: a Datalog knowledge base in one SQLite file.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)
BULK_CHUNK = 10_000


@app.callback()
def root(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", help="Database file (default: $DATALOG_MEMORY_DB, else ./.datalog-memory/memory.db)"),
) -> None:
    ctx.obj = {"db": db}


def _memory(ctx: typer.Context) -> Memory:
    state = ctx.find_root().obj
    if "memory" not in state:
        state["memory"] = Memory.open(state.get("db"))
    return state["memory"]


def _fail(error: DatalogMemoryError, as_json: bool) -> None:
    failure = error_result(error)
    if as_json:
        out.print_json(json.dumps(failure.structured))
    else:
        err.print(failure.text, markup=False, highlight=False)
    raise typer.Exit(1)


def _report(result: dict, as_json: bool, text: str) -> None:
    """An admin command's result: the JSON with --json, else one line for people."""
    if as_json:
        out.print_json(json.dumps(result))
    else:
        out.print(text, markup=False, highlight=False)


@app.command()
def serve(
    ctx: typer.Context,
    log_level: Optional[str] = typer.Option(
        None, "--log-level", help="debug, info, warning, error or critical (default: $DATALOG_MEMORY_LOG_LEVEL, "
        "else info); logs go to stderr"),
) -> None:
    """Serve the tools over MCP on stdin/stdout (both protocol eras)."""
    from memory.log_level import log_level as level_of

    try:
        level_of(log_level)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--log-level") from None
    from memory.mcp_server import serve as run

    memory = _memory(ctx)
    try:
        memory.store.data_version()  # open (and migrate) now: a database we cannot use fails before serving
    except DatalogMemoryError as exc:
        _fail(exc, False)
    run(memory, log_level)


@app.command()
def init(ctx: typer.Context) -> None:
    """Create the database (and its folder) if it does not exist, and print where it is."""
    try:
        path = _memory(ctx).init()
    except DatalogMemoryError as exc:
        _fail(exc, False)
    out.print(f"Database ready: {path}", markup=False, highlight=False)


@app.command()
def version() -> None:
    """Print the version."""
    out.print(f"datalog-memory {__version__}", markup=False, highlight=False)


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True, help="A .pl, .csv or .jsonl file"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Target memory segment"),
    predicate: Optional[str] = typer.Option(None, "--predicate", help="Predicate name for CSV rows / JSON arrays"),
    header: bool = typer.Option(False, "--header", help="The CSV file has a header row to skip"),
    file_format: Optional[str] = typer.Option(None, "--format", help="pl, csv or jsonl (default: from the extension)"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Import facts and rules from a Prolog file, or bulk facts from CSV or JSON Lines (all or nothing)."""
    kind = (file_format or file.suffix.lstrip(".")).lower()
    m = _memory(ctx)
    try:
        if kind in ("pl", "pro", "prolog", "dl"):
            loaded = m.import_program(file.read_text(encoding="utf-8"), memory)
            result = {"file": str(file), "facts_added": loaded["facts_added"], "rules_added": loaded["rules_added"],
                      "assumptions": loaded["assumptions"]}
        elif kind in ("csv", "jsonl"):
            terms = list(read_csv(file, predicate, header) if kind == "csv" else read_jsonl(file, predicate))
            added = _bulk_add(m, terms, memory)
            result = {"file": str(file), "facts_read": len(terms), "facts_added": added}
        else:
            raise typer.BadParameter(f"unknown format {kind!r}; use --format pl, csv or jsonl")
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    _report(result, as_json, ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in result.items()))


def _bulk_add(m: Memory, terms: list, memory: Optional[str]) -> int:
    """One transaction for the whole file; the progress bar advances per written chunk."""
    with Progress(console=err, transient=True, disable=len(terms) < 2 * BULK_CHUNK) as progress:
        task = progress.add_task("importing", total=len(terms))
        added, _ = m.add_fact_terms(terms, memory, BULK_CHUNK, lambda n: progress.advance(task, n))
    return added


@app.command("import-observations")
def import_observations(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                help='JSON Lines: {"members": [...], "event_ts": 1700000000, "weight": 0.9, "formation": "..."}'),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Store many observations (as the remember tool would, one per line) in one transaction: all or nothing."""
    try:
        observations = read_observations(file)
        result = _memory(ctx).remember_observations(observations)
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    _report(result, as_json, f"observations stored: {result['stored']}" + (
        f" (HEDGE-{result['first_id']} to HEDGE-{result['last_id']})" if result["stored"] else ""))


@app.command()
def export(
    ctx: typer.Context,
    file: Optional[Path] = typer.Argument(None, help="Output .pl file (default: standard output)"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment to export"),
) -> None:
    """Export a memory segment's facts and rules as a Prolog file that imports back identically."""
    try:
        text = _memory(ctx).export_program(memory)
    except DatalogMemoryError as exc:
        _fail(exc, False)
    _write_out(text, file, "Exported")


def _write_out(text: str, file: Optional[Path], what: str) -> None:
    """Prolog text to a file (saying so on stderr) or to standard output."""
    if file is None:
        sys.stdout.write(text)
    else:
        file.write_text(text, encoding="utf-8")
        err.print(f"{what} to {file}", markup=False, highlight=False)


@app.command("snapshot-export")
def snapshot_export(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The snapshot to export"),
    file: Optional[Path] = typer.Argument(None, help="Output .pl file (default: standard output)"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment the snapshot belongs to"),
) -> None:
    """Write a stored snapshot as the Prolog file it holds."""
    try:
        text = _memory(ctx).export_snapshot(name, memory)
    except DatalogMemoryError as exc:
        _fail(exc, False)
    _write_out(text, file, f"Exported snapshot '{name}'")


@app.command("snapshot-import")
def snapshot_import(
    ctx: typer.Context,
    file: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True, help="A .pl file (as snapshot-export writes)"),
    name: str = typer.Option(..., "--name", help="Store it under this snapshot name"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment the snapshot belongs to"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Store a Prolog file as a named snapshot (restore it with restore-snapshot)."""
    try:
        result = _memory(ctx).import_snapshot(name, file.read_text(encoding="utf-8"), memory)
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    _report(result, as_json, f"Snapshot '{name}' stored ({result['facts']} fact(s), {result['rules']} rule(s), "
                             f"{result['assumptions']} assumption(s))")


# --- one subcommand per registry tool -------------------------------------------

_PY_TYPES = {"string": str, "integer": int, "boolean": bool, "number": float}
BOOLEAN_FLAGS: set[str] = set()
TRUE, FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


def normalize_boolean_flags(argv: list[str]) -> list[str]:
    """Accept the reference CLI's `--dry_run true` / `--dry_run=false` as well as `--dry-run` / `--no-dry-run`."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        flag, _, value = token.partition("=")
        if flag in BOOLEAN_FLAGS:
            if not value and i + 1 < len(argv) and argv[i + 1].lower() in TRUE | FALSE:
                value = argv[i + 1]
                i += 1
            if value:
                if value.lower() not in TRUE | FALSE:
                    out.append(token)  # let the parser report it
                else:
                    out.append(flag if value.lower() in TRUE else "--no-" + flag[2:])
                i += 1
                continue
        out.append(token)
        i += 1
    return out


def _register_tool(spec: Tool) -> None:
    """Add `spec` as a typer command: one --flag per argument (kebab-case, plus the snake_case
    spelling the reference uses), and --json for the exact structured result."""
    required = set(spec.input_schema.get("required", []))
    json_arguments: set[str] = set()
    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    annotations: dict[str, Any] = {"ctx": typer.Context}
    for name, prop in spec.input_schema.get("properties", {}).items():
        flags = ["--" + name.replace("_", "-")] + (["--" + name] if "_" in name else [])
        types = prop.get("type", "string")
        kind = _PY_TYPES.get(types[0] if isinstance(types, list) else types, str)
        if prop.get("type") in ("array", "object"):
            kind = str  # given as JSON text
            json_arguments.add(name)
        if kind is bool:
            BOOLEAN_FLAGS.update(flags)
            flags = [f"{flag}/--no-{flag[2:]}" for flag in flags]
        annotation = kind if name in required else Optional[kind]
        help_text = (prop.get("description") or "") + (" (JSON)" if name in json_arguments else "") + \
            (" ('-' reads standard input)" if name == spec.stdin_argument else "")
        default = typer.Option(... if name in required else None, *flags, help=help_text, show_default=False)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation
    parameters.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY,
                                        default=typer.Option(False, "--json", help="Print the exact structured result as JSON"),
                                        annotation=bool))
    annotations["as_json"] = bool

    def run(ctx: typer.Context, **kwargs: Any) -> None:
        as_json = kwargs.pop("as_json")
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        if spec.stdin_argument and arguments.get(spec.stdin_argument) == "-":
            arguments[spec.stdin_argument] = sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")
        try:
            for name in json_arguments & set(arguments):
                arguments[name] = _json_argument(name, arguments[name])
            result = call_tool(_memory(ctx), spec.name, arguments)
        except ArgumentsRejected as exc:
            err.print(f"Usage error: {exc.message}", markup=False, highlight=False)
            raise typer.Exit(2) from None
        except DatalogMemoryError as exc:
            _fail(exc, as_json)
            return
        if as_json:
            out.print_json(json.dumps(result.structured, ensure_ascii=False))
        else:
            render(out, result.text, result.structured)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = annotations
    run.__doc__ = spec.description
    app.command(spec.name.replace("_", "-"), help=spec.description, short_help=spec.title)(run)


def _json_argument(name: str, value: str) -> Any:
    """A list or object flag (e.g. --ids '["mem_…"]'); a bare word stands for a one-item list."""
    try:
        return json.loads(value)
    except ValueError:
        if value.startswith(("[", "{")):
            raise ArgumentsRejected(f"--{name.replace('_', '-')} is not valid JSON") from None
        return [value]


for _spec in REGISTRY.values():
    _register_tool(_spec)


def main() -> None:
    app(args=normalize_boolean_flags(sys.argv[1:]), prog_name="datalog-memory")


if __name__ == "__main__":
    main()
