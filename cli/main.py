"""`datalog-memory`: admin commands plus one subcommand per registry tool, listed by tool family.

Exit status: 0 done; 1 the command failed (a tool error, a file or database that cannot be used);
2 a usage error (unknown command or flag, arguments the tool's schema refuses); 130 interrupted.
Every failure is one line on standard error, `Name: reason`: a typed error's line is the text the MCP
result carries (memory.tools.registry.error_text); the command line's own failures are `UsageError`
(exit 2) and `Error` (exit 1). `--debug` adds the traceback of unexpected ones.
"""

from __future__ import annotations

import inspect
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from typer.core import TyperOption
from rich.markup import escape

from memory import Memory, __version__
from memory.errors import DatalogMemoryError, InternalError, InvalidConfiguration
from memory.store.connection import storage_error, storage_reason
from memory.store import plain_ddl, schema_sql_path
from memory.tools import REGISTRY, ArgumentsRejected, Tool, call_tool, error_result
from memory.tools.registry import GROUPS, error_text

try:  # recent typer carries its own copy of click, whose exceptions are these
    from typer._click import exceptions as parser_errors
except ImportError:  # pragma: no cover - typer on top of click
    from click import exceptions as parser_errors  # type: ignore[no-redef]

from .backup import backup, wal_findings
from .bulk import count_lines, read_csv, read_jsonl, read_observations, read_text

if TYPE_CHECKING:
    from rich.console import Console

PROG = "datalog-memory"
ADMIN, KNOWLEDGE, SNAPSHOTS, EVIDENCE = "Admin", "Knowledge", "Snapshots", "Evidence"
EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


def panel(group: str) -> str:
    """The help panel of a registry tool family ("memories" -> "Memories")."""
    return group[:1].upper() + group[1:]


SHORT_HELP = 46  # characters of a command's line in the top-level help: one line at 80 columns


def one_line(text: str) -> str:
    """A command's line in the top-level help: its first sentence, cut at a word to fit SHORT_HELP (`--help`
    on the command gives it whole)."""
    # the first sentence as the registry finds it (Tool.summary): "e.g. x" does not end one
    first = " ".join(re.split(r"(?<=[.!?])\s+(?=[A-Z\[(\"'])", text.strip(), maxsplit=1)[0].split())
    if len(first) <= SHORT_HELP:
        return first
    return first[:SHORT_HELP - 1].rsplit(" ", 1)[0].rstrip(",;:(") + "…"


def _flag_type(self: Any, ctx: Any) -> str | None:
    """A flag takes no value, so its help shows no type (typer would show `<bool>`)."""
    return None if getattr(self, "is_flag", False) or _option_type is None else _option_type(self, ctx)


_option_type = getattr(TyperOption, "display_type_rich", None)
if _option_type is not None:  # typer releases that show an option's type in help (older ones show none)
    TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]

app = typer.Typer(
    name=PROG,
    help="Durable, explainable memory for LLM agents: a Datalog knowledge base in one SQLite file.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class _LazyConsole:
    """A rich Console made on first use: `serve` prints through none, and rich's console, tables and progress
    bars (imported with it, and with the renderer) stay off the server's start-up."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


out = _LazyConsole(soft_wrap=True)
err = _LazyConsole(stderr=True, soft_wrap=True)
BULK_CHUNK = 10_000
VECTORS_AT_EXIT_S = 10.0  # a CLI call waits this long at most for the vectors its memories need (about 2,500 on 2 cores)


class Failure(Exception):
    """A command that cannot go on: one line naming the file or argument, and the exit status."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _print_version(value: bool) -> None:
    if value:
        out.print(f"{PROG} {__version__}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(None, "--db", help="Database file (default: $DATALOG_MEMORY_DB, else "
                                     "./.datalog-memory/memory.db)"),
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of unexpected errors"),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version and exit"),
) -> None:
    ctx.obj = {"db": db}  # --debug is read by main(), where failures end up


def _memory(ctx: typer.Context, short_lived: bool = True) -> Memory:
    state = ctx.find_root().obj
    if "memory" not in state:
        state["memory"] = memory = Memory.open(state.get("db"))
        ctx.find_root().call_on_close(memory.close)
        if short_lived:  # runs before close (click calls them last first): a CLI call ends right after its
            # reply, so the vectors its writes or its search found missing are written here, not left to a
            # server that may never run (a server's indexer has had its time: it ends at once)
            ctx.find_root().call_on_close(lambda: memory.finish_background_writes(VECTORS_AT_EXIT_S))
    return state["memory"]


def _status_of(error: DatalogMemoryError) -> int:
    """A setting the host gave that cannot be used is a usage error (2); any other failure is 1."""
    return EXIT_USAGE if isinstance(error, InvalidConfiguration) else EXIT_FAILED


def _fail(error: DatalogMemoryError, as_json: bool, status: int | None = None) -> None:
    status = _status_of(error) if status is None else status
    failure = error_result(error)
    if as_json:
        out.print_json(json.dumps(failure.structured))
    else:
        _error_line(error_text(error))
    raise typer.Exit(status)


def _error_line(text: str) -> None:
    """A failure as one line on standard error: `Name: reason`, as the MCP result text reads."""
    err.print(_one_line(text), markup=False, highlight=False)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


def _report(result: dict, as_json: bool, text: str) -> None:
    """An admin command's result: the JSON with --json, else one line for people."""
    if as_json:
        out.print_json(json.dumps(result))
    else:
        out.print(text, markup=False, highlight=False)


def _given(ctx: typer.Context, option: str) -> bool:
    """Whether the command line (or its environment variable) set an option, rather than its default."""
    source = ctx.get_parameter_source(option)
    return source is not None and source.name != "DEFAULT"


@app.command(rich_help_panel=ADMIN)
def serve(
    ctx: typer.Context,
    log_level: Optional[str] = typer.Option(
        None, "--log-level", help="debug, info, warning, error or critical (default: $DATALOG_MEMORY_LOG_LEVEL, "
        "else info); logs go to stderr"),
    http: bool = typer.Option(False, "--http", help="Serve MCP over Streamable HTTP at http://HOST:PORT/mcp "
                              "instead of stdin/stdout"),
    host: str = typer.Option("127.0.0.1", "--host", help="With --http: the address to listen on; any but a loopback "
                             "address requires a token on every request (see `token create`)"),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="With --http: the port (0: a free one)"),
    require_token: bool = typer.Option(False, "--require-token", help="With --http: require a bearer token even on "
                                       "a loopback address (it is required anyway once any token exists)"),
    toolsets: Optional[str] = typer.Option(
        None, "--toolsets", envvar="DATALOG_MEMORY_TOOLSETS", help="The tools listed: default (a compact set for "
        "agents), all (every tool, as the references name them), toolset names, or default,beliefs,... "
        "(a model can enable more with enable_toolsets)"),
) -> None:
    """Serve the tools over MCP on stdin/stdout, or over Streamable HTTP with --http (both protocol eras)."""
    from memory.log_level import log_level as level_of

    try:
        level_of(log_level)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--log-level") from None
    if not http and (require_token or _given(ctx, "host") or _given(ctx, "port")):
        raise typer.BadParameter("--host, --port and --require-token serve HTTP: add --http", param_hint="--http")
    if toolsets is not None:
        from memory.tools.toolsets import ENVIRONMENT, select

        try:
            select(toolsets)
        except DatalogMemoryError as exc:
            raise typer.BadParameter(exc.message, param_hint="--toolsets") from None
        os.environ[ENVIRONMENT] = toolsets  # what the server (built below, in this process) starts with
    from memory.workers import WorkerPool

    memory = _memory(ctx, short_lived=False)
    sock = None
    try:
        memory.store.data_version()  # open (and migrate) now: a database we cannot use fails before serving
        if http:
            sock, required = _http_socket(memory, host, port, require_token)
        workers = WorkerPool.for_memory(memory)  # None: evaluate in this process (DATALOG_MEMORY_WORKERS=0)
    except DatalogMemoryError as exc:
        if sock is not None:
            sock.close()
        _fail(exc, False)
    # Over stdio the first line is read, and an initialize answered when an earlier start kept the SDK's answer
    # to it, before the evaluation processes start (they would take the CPU the answer needs) and before the SDK
    # is imported (most of a start): memory/early_initialize.py.
    early = None
    if not http and not sys.stdin.isatty():
        from memory.early_initialize import early_start

        early = early_start()
    # The evaluation processes start before the MCP package is imported: they get ready meanwhile, so neither
    # the first call nor a second one right after it waits for a cold start.
    if workers is not None:
        workers.start()
    try:
        if http:
            from memory.http_server import serve_http

            assert sock is not None  # bound above whenever http is set
            serve_http(memory, sock, required, log_level, workers)
        else:
            from memory.mcp_server import serve as run

            run(memory, log_level, workers, early)
    finally:
        if workers is not None:
            workers.close()  # no worker outlives the server


def _bind(host: str, port: int):
    """A listening TCP socket on host:port (port 0: a free one); OSError when the address cannot be had. Bound
    here, before the server starts, so a port in use fails at once, and port 0's choice is known."""
    import socket

    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)  # from here a client's connection waits in the backlog until the server accepts it
    except OSError:
        sock.close()
        raise
    return sock


def _http_socket(memory: Memory, host: str, port: int, require_token: bool):
    """The HTTP server's listening socket and whether it requires tokens; refused (exit 2) when it would have to
    and cannot (no token exists), or for a database only this process could see."""
    from memory.http_connections import configure
    from memory.access.tokens import token_required
    from memory.store import IN_MEMORY

    configure()  # the connection limits from the environment: a bad value stops here, before anything listens
    if memory.path == IN_MEMORY:
        raise InvalidConfiguration("--http serves one database file to many callers; ':memory:' is private to "
                                   "one connection: give a file with --db")
    required = token_required(memory.repository, host, require_token)
    try:
        return _bind(host, port), required
    except OSError as exc:
        raise Failure(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@app.command(rich_help_panel=ADMIN)
def explore(
    ctx: typer.Context,
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (default: a free one)"),
) -> None:
    """Browse the store in a local, read-only web view (127.0.0.1, a token in the URL it prints)."""
    from memory.explorer import read_only, serve as run
    from memory.access.context import CallerContext

    state = ctx.find_root().obj
    # The principal the server would run as (the same environment), able to read and nothing more.
    memory = Memory.open(state.get("db"), context=read_only(CallerContext.from_env()))
    ctx.find_root().call_on_close(memory.close)
    try:
        memory.store.data_version()  # a database we cannot use fails before serving
    except DatalogMemoryError as exc:
        _fail(exc, False)
    try:
        run(memory, port, announce=lambda link: out.print(f"Explorer (read-only, Ctrl-C to stop): {link}",
                                                          markup=False, highlight=False, soft_wrap=True))
    except OSError as exc:
        raise Failure(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


@app.command(rich_help_panel=ADMIN)
def init(ctx: typer.Context) -> None:
    """Create the database (and its folder) if it does not exist, and print where it is."""
    memory = _memory(ctx)
    try:
        memory.init()
    except DatalogMemoryError as exc:
        _fail(exc, False)
    where = memory.location.describe() if memory.location.origin == "global" else memory.path
    out.print(f"Database ready: {where}", markup=False, highlight=False)


@app.command(rich_help_panel=ADMIN)
def version() -> None:
    """Print the version."""
    out.print(f"{PROG} {__version__}", markup=False, highlight=False)


@app.command("import", rich_help_panel=KNOWLEDGE)
def import_(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A .pl, .csv or .jsonl file"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Target memory segment"),
    predicate: Optional[str] = typer.Option(None, "--predicate", help="Predicate name for CSV rows / JSON arrays"),
    header: bool = typer.Option(False, "--header", help="The CSV file has a header row to skip"),
    file_format: Optional[str] = typer.Option(None, "--format", help="pl, csv or jsonl (default: from the extension)"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Import facts and rules from a Prolog file, or bulk facts from CSV or JSON Lines (all or nothing)."""
    kind = (file_format or file.suffix.lstrip(".")).lower()
    if kind not in ("pl", "pro", "prolog", "dl", "csv", "jsonl"):
        raise Failure(f"{file}: unknown format {kind!r}; use --format pl, csv or jsonl", EXIT_USAGE)
    m = _memory(ctx)
    try:
        m.require_for("add_fact_terms" if kind in ("csv", "jsonl") else "import_program", memory)  # before reading
        if kind in ("csv", "jsonl"):
            terms = read_csv(file, predicate, header) if kind == "csv" else read_jsonl(file, predicate)
            added, kept = _bulk_add(m, terms, memory, count_lines(file))
            result = {"file": str(file), "facts_read": added + kept, "facts_added": added}
        else:
            loaded = m.knowledge.import_program(read_text(file), memory)
            result = {"file": str(file), "facts_added": loaded["facts_added"], "rules_added": loaded["rules_added"],
                      "assumptions": loaded["assumptions"]}
    except DatalogMemoryError as exc:
        _fail(_in_file(exc, file), as_json)
    _report(result, as_json, ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in result.items()))


def _in_file(error: DatalogMemoryError, file: Path) -> DatalogMemoryError:
    """The error of an import names its file (readers already say `file:line`; the program parser says
    `line L, column C`)."""
    if not error.message.startswith(str(file)):
        error.message = f"{file}: {error.message}"
        error.details.setdefault("file", str(file))
    return error


def _bulk_add(m: Memory, terms, memory: Optional[str], lines: int) -> tuple[int, int]:
    """One transaction for the whole file, read as it is written; the progress bar counts toward its lines."""
    from rich.progress import Progress

    with Progress(console=err.console, transient=True, disable=lines < 2 * BULK_CHUNK) as progress:
        task = progress.add_task("importing", total=lines)
        return m.knowledge.add_fact_terms(terms, memory, BULK_CHUNK, lambda n: progress.advance(task, n))


@app.command("import-observations", rich_help_panel=EVIDENCE)
def import_observations(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help='JSON Lines: {"members": [...], "event_ts": 1700000000, "weight": 0.9, '
                                          '"formation": "..."}'),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Store many observations (as the remember tool would, one per line) in one transaction: all or nothing."""
    try:
        m = _memory(ctx)
        m.require_for("remember_observations")  # before reading the file
        result = m.evidence.remember_observations(read_observations(file))
    except DatalogMemoryError as exc:
        _fail(_in_file(exc, file), as_json)
    _report(result, as_json, f"observations stored: {result['stored']}" + (
        f" (HEDGE-{result['first_id']} to HEDGE-{result['last_id']})" if result["stored"] else ""))


@app.command(rich_help_panel=KNOWLEDGE)
def export(
    ctx: typer.Context,
    file: Optional[Path] = typer.Argument(None, help="Output .pl file (default: standard output)"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment to export"),
) -> None:
    """Export a memory segment's facts and rules as a Prolog file that imports back identically."""
    try:
        text = _memory(ctx).knowledge.export_program(memory)
    except DatalogMemoryError as exc:
        _fail(exc, False)
    _write_out(text, file, "Exported")


def _write_out(text: str, file: Optional[Path], what: str) -> None:
    """Prolog text to a file (saying so on stderr) or to standard output; a file that cannot be written
    (a folder, a full device) is a one-line failure naming it."""
    if file is None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as exc:
            _discard_stdout()
            raise Failure(f"cannot write to standard output: {exc.strerror or exc}") from None
        return
    try:
        with open(file, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise Failure(f"cannot write {file}: {exc.strerror or exc}") from None
    err.print(f"{what} to {file}", markup=False, highlight=False)


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so the text still buffered does not fail again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


@app.command("snapshot-export", rich_help_panel=SNAPSHOTS)
def snapshot_export(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The snapshot to export"),
    file: Optional[Path] = typer.Argument(None, help="Output .pl file (default: standard output)"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment the snapshot belongs to"),
) -> None:
    """Write a stored snapshot as the Prolog file it holds."""
    try:
        text = _memory(ctx).snapshots.export_snapshot(name, memory)
    except DatalogMemoryError as exc:
        _fail(exc, False)
    _write_out(text, file, f"Exported snapshot '{name}'")


@app.command("snapshot-import", rich_help_panel=SNAPSHOTS)
def snapshot_import(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A .pl file (as snapshot-export writes)"),
    name: str = typer.Option(..., "--name", help="Store it under this snapshot name"),
    memory: Optional[str] = typer.Option(None, "--memory", help="Memory segment the snapshot belongs to"),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON"),
) -> None:
    """Store a Prolog file as a named snapshot (restore it with restore-snapshot)."""
    try:
        m = _memory(ctx)
        m.require_for("import_snapshot", memory)  # before reading the file
        result = m.snapshots.import_snapshot(name, read_text(file), memory)
    except DatalogMemoryError as exc:
        _fail(_in_file(exc, file), as_json)
    _report(result, as_json, f"Snapshot '{name}' stored ({result['facts']} fact(s), {result['rules']} rule(s), "
                             f"{result['assumptions']} assumption(s))")


@app.command(rich_help_panel=ADMIN)
def schema(
    sql: bool = typer.Option(False, "--sql", help="Only the statements, without comments (what .schema shows)"),
) -> None:
    """Print the database schema with the comments that explain every table, column and view."""
    text = schema_sql_path().read_text(encoding="utf-8")
    sys.stdout.write(plain_ddl(text) if sql else text)


@app.command(rich_help_panel=ADMIN)
def check(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
) -> None:
    """Find rows written around the tools (facts without supports, supports without facts, a broken observation
    hash chain, stale materializations, ...); exit 1 when there are any. The check is recorded in the audit log."""
    lost = wal_findings(ctx)  # read before the database is opened: opening it recovers what it can, silently
    try:
        report = _memory(ctx).admin.check_invariants()
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    if as_json:
        out.print_json(json.dumps({**report.to_dict(), "wal": lost}, ensure_ascii=False))
    else:
        for warning in lost:
            out.print(f"problem: wal: {warning}", markup=False, highlight=False)
        for finding in report.problems + report.notes:
            label = "problem" if finding in report.problems else "note"
            out.print(f"{label}: {finding.check}: {finding.count} {finding.description}", markup=False, highlight=False)
            for example in finding.examples:
                out.print(f"  {example}", markup=False, highlight=False)
        found = report.problem_count + len(lost)
        out.print("ok: no invariant is broken" if report.ok and not lost else f"{found} problem(s) found",
                  markup=False, highlight=False)
    if not report.ok or lost:
        raise typer.Exit(EXIT_FAILED)


# --- bearer tokens of the HTTP server ------------------------------------------------

token_app = typer.Typer(help="Bearer tokens for `serve --http`: each names a remote caller (principal, project, "
                        "capabilities). Only a hash is stored; the token is printed once.", no_args_is_help=True)
app.add_typer(token_app, name="token", rich_help_panel=ADMIN, short_help="Bearer tokens for `serve --http`")


def _token_record(row) -> dict:
    """A token's row as `token list` shows it: never the token, nor its digest."""
    return {"id": row.id, "name": row.name, "principal": row.principal, "project_remote": row.project_remote,
            "source_class": row.source_class, "capabilities": list(row.capabilities), "created_at": row.created_at,
            "created_by": row.created_by, "revoked_at": row.revoked_at, "revoked_by": row.revoked_by}


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    name: str = typer.Option(..., "--name", help="A label: who or what holds the token"),
    principal: str = typer.Option(..., "--principal", help="Who the caller acts as (audit rows, session namespaces)"),
    project: Optional[str] = typer.Option(None, "--project", help="The project namespace (git remote or path) the "
                                          "caller may use (default: none)"),
    capabilities: Optional[str] = typer.Option(
        None, "--capabilities", help="Comma-separated (default: every capability but memory_admin and "
        "memory_write_global); an empty string grants none"),
    source_class: Optional[str] = typer.Option(None, "--source-class", help="Provenance of what the caller writes "
                                               "(default: model_inferred)"),
    as_json: bool = typer.Option(False, "--json", help="Print the token and its record as JSON"),
) -> None:
    """Create a token and print it (once: only its hash is kept). Needs memory_admin."""
    from memory.access.context import parse_capabilities

    granted = None if capabilities is None else sorted(parse_capabilities(capabilities))
    try:
        issued = _memory(ctx).admin.create_token(name, principal, project, granted, source_class)
    except DatalogMemoryError as exc:
        _fail(exc, as_json, EXIT_USAGE if exc.code == "invalid_arguments" else None)
    record = _token_record(issued.row)
    if as_json:
        out.print_json(json.dumps({"token": issued.token, **record}))
        return
    out.print(issued.token, markup=False, highlight=False)
    err.print(f"token {record['id']} for {record['principal']} (capabilities: {', '.join(record['capabilities']) or 'none'}"
              f"; project: {record['project_remote'] or 'none'}): store it now, it is not shown again",
              markup=False, highlight=False)


@token_app.command("list")
def token_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the tokens' records as JSON"),
) -> None:
    """List the tokens (ids and the callers they name; never a token). Needs memory_admin."""
    try:
        rows = _memory(ctx).admin.list_tokens()
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    records = [_token_record(row) for row in rows]
    if as_json:
        out.print_json(json.dumps(records))
        return
    for r in records:
        state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "valid"
        out.print(f"{r['id']}  {r['name']}  principal={r['principal']}  project={r['project_remote'] or '-'}  "
                  f"capabilities={','.join(r['capabilities']) or '-'}  created {r['created_at']}  {state}",
                  markup=False, highlight=False)
    if not records:
        out.print("no tokens", markup=False, highlight=False)


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context,
    token_id: str = typer.Argument(..., metavar="ID", help="The token's id (see `token list`)"),
    as_json: bool = typer.Option(False, "--json", help="Print the revoked token's record as JSON"),
) -> None:
    """Revoke a token: every request presenting it is refused from now on (401). Needs memory_admin."""
    try:
        row = _memory(ctx).admin.revoke_token(token_id)
    except DatalogMemoryError as exc:
        _fail(exc, as_json)
    _report(_token_record(row), as_json, f"revoked token {row.id} ({row.principal})")


# --- one subcommand per registry tool -------------------------------------------

_PY_TYPES = {"string": str, "integer": int, "boolean": bool, "number": float}
BOOLEAN_FLAGS: set[str] = set()  # a tool's boolean arguments: --x / --no-x (unset: the tool's default)
# The command line's own flags (off unless given): `--json false` is the same as leaving --json out.
PLAIN_FLAGS = {"--json", "--debug", "--header", "--force", "--sql", "--http", "--require-token"}
TRUE, FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}
FORMATS = ("json", "text")


def normalize_boolean_flags(argv: list[str]) -> list[str]:
    """Accept `--json true`, `--dry_run true` / `--dry_run=false` (the reference CLI's spelling) as well as
    `--json`, `--dry-run` / `--no-dry-run`: a flag takes a value only when it is one of TRUE or FALSE."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":  # what follows is arguments, never flags
            out.extend(argv[i:])
            break
        flag, _, value = token.partition("=")
        if flag in BOOLEAN_FLAGS or flag in PLAIN_FLAGS:
            if not value and i + 1 < len(argv) and argv[i + 1].lower() in TRUE | FALSE:
                value = argv[i + 1]
                i += 1
            if value:
                if value.lower() not in TRUE | FALSE:
                    out.append(token)  # let the parser report it
                elif value.lower() in TRUE:
                    out.append(flag)
                elif flag in BOOLEAN_FLAGS:
                    out.append("--no-" + flag[2:])
                i += 1
                continue
        out.append(token)
        i += 1
    return out


def _positional(spec: Tool) -> str | None:
    """The argument a tool also takes as its first positional argument, as the reference CLI does
    (`define-rule HEAD --body ...`, `assume-fact FACT --assumption ...`): its first required text argument."""
    properties = spec.input_schema.get("properties", {})
    for name in spec.input_schema.get("required", []):
        if properties.get(name, {}).get("type", "string") == "string":
            return name
    return None


def _register_tool(spec: Tool, target: typer.Typer | None = None, command: str | None = None) -> None:
    """Add `spec` as a typer command: one --flag per argument (kebab-case, plus the snake_case
    spelling the reference uses), its first required text argument also positional, and --json
    (or --format json) for the exact structured result."""
    required = set(spec.input_schema.get("required", []))
    positional = _positional(spec)
    json_arguments: set[str] = set()
    text_arguments: set[str] = set()  # given as text on the command line: '-' reads it from standard input
    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    annotations: dict[str, Any] = {"ctx": typer.Context}
    if positional is not None:
        parameters.append(inspect.Parameter(
            "positional__", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Optional[str],
            default=typer.Argument(None, metavar=positional.upper(), show_default=False,
                                   help=f"The same as --{positional.replace('_', '-')}")))
        annotations["positional__"] = Optional[str]
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
        needed = name in required and name != positional  # the positional one: checked in run()
        annotation = kind if needed else Optional[kind]
        if kind is str:
            text_arguments.add(name)
        help_text = (prop.get("description") or "") + (" (JSON)" if name in json_arguments else "") + \
            (" ('-' reads standard input)" if kind is str else "") + \
            (f" [required: --{name.replace('_', '-')} or the first argument]" if name == positional else "")
        default = typer.Option(... if needed else None, *flags, help=escape(help_text), show_default=False)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
        annotations[name] = annotation
    parameters.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY,
                                        default=typer.Option(False, "--json", help="Print the exact structured result "
                                                             "as JSON (also --json true|false)"),
                                        annotation=bool))
    parameters.append(inspect.Parameter("output_format", inspect.Parameter.KEYWORD_ONLY,
                                        default=typer.Option(None, "--format", metavar="json|text",
                                                             help="json: the same as --json", show_default=False),
                                        annotation=Optional[str]))
    annotations["as_json"] = bool
    annotations["output_format"] = Optional[str]
    inputs = frozenset(spec.input_schema.get("properties", {}))

    def run(ctx: typer.Context, **kwargs: Any) -> None:
        as_json = kwargs.pop("as_json")
        output_format = kwargs.pop("output_format")
        given = kwargs.pop("positional__", None)
        if output_format is not None and output_format.lower() not in FORMATS:
            raise Failure(f"--format takes json or text, not {output_format!r}", EXIT_USAGE)
        as_json = as_json or (output_format or "").lower() == "json"
        if positional is not None:
            flag = "--" + positional.replace("_", "-")
            if given is not None and kwargs.get(positional) is not None:
                raise Failure(f"{positional} given twice: as the first argument and as {flag}", EXIT_USAGE)
            if given is not None:
                kwargs[positional] = given
            elif kwargs.get(positional) is None:
                raise Failure(f"Missing option '{flag}' (or give it as the first argument)", EXIT_USAGE)
        arguments = {k: v for k, v in kwargs.items() if v is not None}
        _read_stdin_argument(arguments, text_arguments)
        try:
            for name in json_arguments & set(arguments):
                arguments[name] = _json_argument(name, arguments[name])
            result = call_tool(_memory(ctx), spec.name, arguments)
        except ArgumentsRejected as exc:  # the tool's schema refused them: a usage error, worded as over MCP
            _fail(exc, as_json, EXIT_USAGE)
            return
        except DatalogMemoryError as exc:
            _fail(exc, as_json)
            return
        if as_json:
            out.print_json(json.dumps(result.structured, ensure_ascii=False))
            return
        from .render import render, warn

        warnings = result.structured.get("warnings") or []
        for warning in warnings:
            warn(err.console, warning)
        # Warnings go to stderr here: the text's own % warning lines would say them twice.
        text = "\n".join(line for line in result.text.split("\n") if not line.startswith("% warning: ")) \
            if warnings else result.text
        render(out.console, text, result.structured, inputs)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = annotations
    run.__doc__ = spec.description
    (target or app).command(command or spec.name.replace("_", "-"), help=escape(spec.description),
                            short_help=escape(one_line(spec.summary)), rich_help_panel=panel(spec.group))(run)


def _read_stdin_argument(arguments: dict[str, Any], text_arguments: set[str]) -> None:
    """Any text argument given as `-` is read from standard input, exactly as given (one argument per call:
    standard input can be read once). The value `-` itself is written quoted, as Prolog does: `'-'`."""
    wanted = sorted(name for name in text_arguments if arguments.get(name) == "-")
    if len(wanted) > 1:
        raise Failure("only one argument can read standard input ('-'), not "
                      + ", ".join("--" + name.replace("_", "-") for name in wanted), EXIT_USAGE)
    if wanted:
        arguments[wanted[0]] = sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")


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

# The reference CLI's `memory create|mount|unmount|list` (--name, --scope, --mode): the segment tools again.
memory_app = typer.Typer(help="Memory segments as the reference CLI names them: create, mount, unmount, list "
                         "(the same as create-memory, mount-memory, unmount-memory, list-memories).",
                         no_args_is_help=True)
app.add_typer(memory_app, name="memory", rich_help_panel=panel("segments"),
              short_help="create, mount, unmount, list (as zpm)")
for _verb in ("create", "mount", "unmount", "list"):
    _register_tool(REGISTRY[f"{_verb}_memories" if _verb == "list" else f"{_verb}_memory"], memory_app, _verb)

app.command(rich_help_panel=ADMIN)(backup)  # cli/backup.py

# The help lists panels in the order their first command appears: the families in the registry's order.
_PANELS = [panel(group) for group in GROUPS]
for _command in app.registered_commands:  # the top-level help: one line per command
    if _command.short_help is None:
        _command.short_help = one_line(inspect.getdoc(_command.callback) or "")
app.registered_commands.sort(key=lambda command: _PANELS.index(command.rich_help_panel)
                             if command.rich_help_panel in _PANELS else len(_PANELS))


def main(argv: list[str] | None = None) -> None:
    """Run the command line; every failure ends here as one line on standard error and an exit status."""
    args = normalize_boolean_flags(sys.argv[1:] if argv is None else list(argv)) or ["--help"]  # bare: the help
    debug = "--debug" in args
    try:
        status = app(args=args, prog_name=PROG, standalone_mode=False)
    except Failure as exc:
        _error_line(f"{'UsageError' if exc.status == EXIT_USAGE else 'Error'}: {exc.message}")
        status = exc.status
    except parser_errors.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else PROG
        _error_line(f"UsageError: {exc.format_message()} (see '{where} --help')")
        status = EXIT_USAGE
    except parser_errors.ClickException as exc:
        _error_line(f"Error: {exc.format_message()}")
        status = exc.exit_code
    except (typer.Abort, getattr(parser_errors, "Abort", typer.Abort), KeyboardInterrupt):
        err.print("Interrupted", markup=False, highlight=False)
        status = EXIT_INTERRUPTED
    except DatalogMemoryError as exc:  # e.g. opening the database outside a tool call
        if debug:
            raise
        _error_line(error_text(exc))
        status = _status_of(exc)
    except Exception as exc:  # a bug: worded as the server words it, never a bare traceback
        if debug:
            raise
        if storage_reason(exc) is not None:  # the disk, not the code (a full disk, a read-only file, I/O)
            failure = storage_error(exc, "the database could not be used")
            _error_line(error_text(failure))
            sys.exit(_status_of(failure))
        _error_line(f"{error_text(InternalError(f'{type(exc).__name__}: {exc}'))} (run with --debug for the traceback)")
        status = EXIT_FAILED
    sys.exit(status if isinstance(status, int) else 0)


if __name__ == "__main__":
    main()
