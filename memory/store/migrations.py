"""The one migration runner: applies a dialect's `NNNN_name.sql` files in order, each in its own transaction,
and records them (version, name, checksum, when)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import apsw

from ..clock import SYSTEM_CLOCK, utc_now
from ..errors import SchemaTooNew, StorageError

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def shipped(packaged: str, checkout: str) -> Path:
    """A data file or folder shipped with the code: installed wheels carry it inside the package (`packaged`,
    under memory/), a source checkout has it at the root (`checkout`)."""
    inside = resources.files("memory").joinpath(*packaged.split("/"))
    if inside.is_dir() or inside.is_file():
        return Path(str(inside))
    return Path(__file__).resolve().parents[2].joinpath(*checkout.split("/"))


def _migrations_dir() -> Path:
    return shipped("_migrations", "migrations")


def schema_sql_path() -> Path:
    return shipped("_schema/schema.sql", "schema/schema.sql")


def after_quoted(sql: str, start: int) -> int:
    """Where the quoted text (a string literal or quoted name) opening at `start` ends: the index after its
    closing quote, a doubled quote being part of the text; the end of `sql` when it is not closed."""
    quote = sql[start]
    end = sql.find(quote, start + 1)
    while end != -1 and sql.startswith(quote, end + 1):
        end = sql.find(quote, end + 2)
    return len(sql) if end == -1 else end + 1


def squeeze(text: str) -> str:
    """`text` with each run of whitespace outside quotes made one space, and no leading or trailing space;
    quoted text is kept as it is."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            end = after_quoted(text, i)
            out.append(text[i:end])
            i = end
        elif c.isspace():
            while i < n and text[i].isspace():
                i += 1
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out).strip()


def table_items(body: str) -> list[str]:
    """The comma-separated items of a table's body (columns and constraints), outside parentheses and quotes,
    each squeezed onto one line."""
    items, depth, start, i, n = [], 0, 0, 0, len(body)
    while i < n:
        c = body[i]
        if c in "'\"":
            i = after_quoted(body, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
        i += 1
    items.append(body[start:])
    return [squeeze(item) for item in items if item.strip()]


def table_lines(head: str, items: list[str]) -> list[str]:
    """A table's statement laid out one item per line, up to its last item (the caller closes it)."""
    return [f"{head} ("] + [f"    {item}," for item in items[:-1]] + [f"    {items[-1]}"]


def schema_objects(conn: apsw.Connection) -> list[tuple[str, str, str]]:
    """(name, type, statement as SQLite keeps it) of every object of the schema, in the order SQLite created
    them; SQLite's own objects and FTS5's shadow tables are not the schema's."""
    shadow = {name for (name,) in conn.execute("SELECT name FROM pragma_table_list WHERE type = 'shadow'")}
    return [(str(name), str(kind), str(sql)) for name, kind, sql in conn.execute(
        "SELECT name, type, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
        "ORDER BY rowid").fetchall() if name not in shadow]


def plain_ddl(sql: str) -> str:
    """The statements of a commented schema without its comments (what `.schema` shows), a blank line
    between statements. Quoted text is copied as it is (a `--` inside a string stays, and so do its spaces
    and blank lines); outside it, lines lose trailing spaces, a line that held only a comment goes, and blank
    lines run into one."""
    text = ""
    line_start = 0  # where the current line begins in `text`
    commented = False  # the current line held a comment

    def end_line() -> None:
        nonlocal text, line_start, commented
        text = text.rstrip(" \t\r")  # stops at the line's start or at a closing quote: never inside quotes
        if text[line_start:] or not (commented or text == "" or text.endswith("\n\n")):
            text += "\n"
        line_start, commented = len(text), False

    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            end = after_quoted(sql, i)
            text += sql[i:end]
            i = end
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end
            commented = True
        elif c == "\n":
            end_line()
            i += 1
        else:
            text += c
            i += 1
    return text.strip() + "\n"


def numbered_files(directory: Path) -> list[Migration]:
    """Every NNNN_name.sql of `directory`, in order of its number (gaps are the caller's to refuse)."""
    found = []
    for path in sorted(directory.iterdir()):
        match = _NAME.match(path.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), path.read_text(encoding="utf-8")))
    return found


def load_migrations(directory: Path | None = None) -> list[Migration]:
    directory = directory or _migrations_dir()
    found = numbered_files(directory)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise StorageError(f"migrations in {directory} are not numbered 1..N without gaps: {versions}")
    return found


class MigrationSteps:
    """What `migrate` does at each step on one dialect's connection: SQLite's here; PostgreSQL's connection
    carries its own (`migration_steps`, memory/store/postgresql.py). Versions, checksums, the order and the
    refusal of a newer schema are the runner's, the same for every store."""

    def history(self) -> list[Migration]:
        """The migrations this dialect's schema is built from, oldest first."""
        return load_migrations()

    def version(self, conn) -> int:
        return current_version(conn)

    def begin(self, conn) -> None:
        """Start a step's transaction holding the write lock, so two processes migrating a new database at once
        serialize and the second finds the work done."""
        conn.execute("BEGIN IMMEDIATE")

    def apply(self, conn, sql: str) -> None:
        conn.execute(sql)

    def rollback(self, conn) -> None:
        if conn.in_transaction:  # SQLite rolls back by itself on some failures (a full disk): the cause stands
            conn.execute("ROLLBACK")


SQLITE_STEPS = MigrationSteps()


def current_version(conn: apsw.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    assert row is not None  # an aggregate always has its row
    return row[0]


def migrate(conn, migrations: list[Migration] | None = None) -> int:
    """Bring the database up to the newest version its dialect knows; return that version. Each migration is
    one transaction under the write lock, recorded with its checksum.

    A dialect's history may start above 1 (PostgreSQL's first migration stands for SQLite's first twelve): a
    database is then either new or at least at that first version."""
    steps: MigrationSteps = getattr(conn, "migration_steps", SQLITE_STEPS)
    migrations = migrations if migrations is not None else steps.history()
    latest = migrations[-1].version if migrations else 0
    found = steps.version(conn)
    if found > latest:
        raise SchemaTooNew(
            f"database schema version {found} is newer than this datalog-memory understands "
            f"(up to {latest}); upgrade datalog-memory to open it",
            found=found, supported=latest,
        )
    if found == latest:
        return found
    for migration in migrations:
        steps.begin(conn)
        try:
            conn.execute(BOOTSTRAP)
            version = steps.version(conn)
            if migration.version <= version:
                conn.execute("COMMIT")
                continue
            if version == 0 and migration is not migrations[0]:
                raise StorageError(f"this schema starts at migration {migrations[0].version}, not {migration.version}")
            steps.apply(conn, migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                (migration.version, migration.name, migration.checksum, utc_now(getattr(conn, "clock", SYSTEM_CLOCK))),
            )
            conn.execute("COMMIT")
        except BaseException:
            steps.rollback(conn)
            raise
    return latest
