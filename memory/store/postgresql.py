"""PostgreSQL as the store: a connection with the narrow API the code above uses on SQLite (execute, executemany,
insert_rows, changes, close, clock, and `sql`, PostgreSQL's forms of what the dialects write differently), the store's
transactions, and the PostgreSQL migrations.

`DATALOG_MEMORY_DB=postgresql://...` (or `--db`) selects it; psycopg 3 is imported only then. Statements are the
repository's own (memory/store/dialect.py); only their placeholders are given psycopg's style. The schema is
migrations/postgresql/, generated from the one migration history (memory/store/postgresql_migrations.py).

Write transactions are serialized: each one takes one advisory lock (WRITE_LOCK) before anything else and holds
it to its commit. That is what SQLite's `BEGIN IMMEDIATE` gives, and the change feed needs it: a warm copy reads
"new facts" as the rows above the newest id it has, which holds only if ids become visible in the order they
were given. Without the lock two transactions could take ids 10 and 11 and commit 11 first; a reader between the
two commits would take 11 as its newest and never see 10. Reads are REPEATABLE READ transactions: one snapshot
for all their statements, like a SQLite read transaction.
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import InvalidArguments, StorageError
from .dialect import POSTGRESQL, Placeholders, placeholders
from .location import shown
from .migrations import Migration, MigrationSteps, migrate, numbered_files, shipped

# The advisory lock every write transaction takes first (a constant of this program: "datalog-memory" hashed).
WRITE_LOCK = int.from_bytes(hashlib.sha256(b"datalog-memory write").digest()[:8], "big", signed=True)
# A write transaction that changes at least this many rows of a table (and a tenth of it) refreshes its statistics
# when it commits. Until autovacuum gets to it (a minute or more), PostgreSQL would plan with the old ones: after a
# bulk import into an empty store it took the predicate's 100,000 facts for one row, and each bound lookup read
# the whole predicate (30 ms) instead of one index range (0.03 ms).
BULK_ROWS = 1_000
# SQLSTATE of an index entry (or other value) over the server's size limit.
PROGRAM_LIMIT_EXCEEDED = "54000"


def redacted(url: str) -> str:
    """The URL without its password, for messages and status reports."""
    return shown(url)


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:  # a runtime dependency; only a broken install lacks it
        raise StorageError("PostgreSQL needs psycopg 3: pip install 'psycopg[binary]'") from exc
    return psycopg


class Cursor:
    """The rows of one statement: iterate, fetchone, fetchall (all read at once: a statement is finished
    before the next one runs on the connection, as with apsw)."""

    __slots__ = ("_rows", "_at")

    def __init__(self, rows: list[tuple]) -> None:
        self._rows = rows
        self._at = 0

    def __iter__(self) -> Iterator[tuple]:
        while self._at < len(self._rows):
            self._at += 1
            yield self._rows[self._at - 1]

    def fetchone(self) -> tuple | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[tuple]:
        rows, self._at = self._rows[self._at:], len(self._rows)
        return rows


def _configure(conn) -> None:
    """Values come back as SQLite gives them: booleans as 0/1, numeric (sum of bigints) as int or float; a
    Python bool goes in as 0/1 (the schema's flags are integers) and a str as text."""
    _psycopg()
    from psycopg.adapt import Loader
    from psycopg.types.numeric import IntDumper
    from psycopg.types.string import StrDumper

    class BoolAsInt(Loader):
        def load(self, data):
            return 1 if bytes(data) in (b"t", b"\x01") else 0

    class NumericAsNumber(Loader):
        def load(self, data):
            text = bytes(data).decode()
            try:
                return int(text)
            except ValueError:
                return float(text)

    class BoolDumper(IntDumper):
        def dump(self, obj):
            return b"1" if obj else b"0"

    conn.adapters.register_loader("bool", BoolAsInt)
    conn.adapters.register_loader("numeric", NumericAsNumber)
    conn.adapters.register_dumper(bool, BoolDumper)
    conn.adapters.register_dumper(str, StrDumper)


def _storable(values):
    """`values`, once none is a text PostgreSQL cannot hold: its text type refuses the NUL character, which
    SQLite stores. A clear error about the argument, before the statement, instead of the driver's."""
    for value in values.values() if isinstance(values, dict) else values:
        if type(value) is list:
            _storable(value)
        elif type(value) is str and "\x00" in value:
            raise InvalidArguments("a text holding the NUL character (U+0000) cannot be stored or looked up in "
                                   "a PostgreSQL store (SQLite stores it)")
    return values


class PostgresConnection:
    """One psycopg connection in autocommit mode: the store sends BEGIN/COMMIT itself, as it does on SQLite."""

    dialect = "postgresql"
    sql = POSTGRESQL

    def __init__(self, url: str, clock: Clock = SYSTEM_CLOCK, lock_timeout_ms: int = 10_000) -> None:
        psycopg = _psycopg()
        self.url = url
        self.clock = clock
        try:
            self._conn = psycopg.connect(url, autocommit=True, prepare_threshold=None)
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {redacted(url)}: {exc}".strip()) from exc
        _configure(self._conn)
        self._error = psycopg.Error
        self._changes = 0
        self.written = 0  # rows the statements of the current transaction wrote (the store resets it)
        # A write that waits longer than this for another writer's lock fails (SQLite's busy timeout).
        self._conn.execute(f"SET lock_timeout = {int(lock_timeout_ms)}")
        self._conn.execute("SET TIME ZONE 'UTC'")

    @property
    def error(self) -> type[Exception]:
        return self._error

    @property
    def migration_steps(self) -> "PostgresqlSteps":
        return POSTGRESQL_STEPS

    def execute_script(self, sql: str) -> None:
        """Statements written in PostgreSQL's own dialect (its migrations): run as they are, not translated."""
        self._conn.execute(sql)

    def schema_version(self) -> int:
        return current_version(self)

    def journal_mode(self) -> str:
        """What stands for SQLite's journal mode: the server keeps its own write-ahead log."""
        return "postgresql"

    def grow_cache(self, kib: int) -> None:
        """The page cache is the server's (shared_buffers): nothing to grow per connection."""
        return None

    @staticmethod
    def _params(styled: Placeholders, params) -> Any:
        if params is None:
            return {} if styled.named else ()
        if styled.order is not None:
            params = [params[i] for i in styled.order]
        return _storable(params)

    def execute(self, sql: str, params: Any = None) -> Cursor:
        styled = placeholders(sql)
        cur = self._conn.execute(styled.sql, self._params(styled, params))
        rows = cur.fetchall() if cur.description is not None else []
        self._count_written(cur)
        return Cursor(rows)

    def _count_written(self, cur) -> None:
        """As SQLite's changes(): the rows the last INSERT, UPDATE or DELETE wrote (the server's command tag
        says which command ran; a SELECT leaves the count as it was)."""
        if (cur.statusmessage or "").split(" ", 1)[0] in ("INSERT", "UPDATE", "DELETE"):
            self._changes = max(cur.rowcount, 0)
            self.written += self._changes

    def executemany(self, sql: str, rows) -> None:
        """One statement for many rows."""
        styled = placeholders(sql)
        with self._conn.cursor() as cur:
            cur.executemany(styled.sql, [self._params(styled, r) for r in rows])
            self._changes = max(cur.rowcount, 0)
        self.written += self._changes

    def insert_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
        """Many rows into `table` as COPY, which streams them in one round trip and fires the same triggers and
        checks as an INSERT (a bulk import sends its facts this way: 10,000 rows in 0.05 s instead of 0.6 s).
        Returns how many it wrote."""
        written = 0
        with self._conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(_storable(row))
                written += 1
        self._changes = written
        self.written += written
        return written

    def grown_tables(self) -> list[str]:
        """The tables the current transaction changed by at least BULK_ROWS rows and a tenth of their size (as
        the planner last counted it): their statistics no longer describe them."""
        rows = self._conn.execute(
            "SELECT s.relname FROM pg_stat_xact_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid "
            "WHERE s.schemaname = current_schema() AND s.n_tup_ins + s.n_tup_upd + s.n_tup_del >= %s "
            "AND s.n_tup_ins + s.n_tup_upd + s.n_tup_del >= 0.1 * greatest(c.reltuples, 0) ORDER BY s.relname",
            (BULK_ROWS,)).fetchall()
        return [r[0] for r in rows]

    def analyze(self, tables: list[str]) -> None:
        """Refresh the planner's statistics of these tables, outside any transaction. Only an optimization:
        a role that may not analyze them leaves it to autovacuum."""
        from psycopg import sql
        try:
            self._conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(", ").join(map(sql.Identifier, tables))))
        except self._error:
            pass

    def changes(self) -> int:
        return self._changes

    def close(self) -> None:
        self._conn.close()

    # --- the store's health, as get_persistence_status reports it --------------------------------------------
    def quick_check(self, limit: int = 20) -> list[str]:
        """PostgreSQL's own record of damage: data checksum failures (counted when the cluster was initialized
        with checksums) in this database; ['ok'] when there are none."""
        row = self._conn.execute(
            "SELECT coalesce(checksum_failures, 0), current_setting('data_checksums') FROM pg_stat_database "
            "WHERE datname = current_database()").fetchone()
        failures = row[0] if row else 0
        return ["ok"] if not failures else [f"{failures} data checksum failure(s) in this database"][:limit]

    def page_size(self) -> int:
        return int(self._conn.execute("SHOW block_size").fetchone()[0])


def load_postgresql_migrations(directory: Path | None = None) -> list[Migration]:
    """migrations/postgresql/NNNN_name.sql (generated: memory/store/postgresql_migrations.py), in order. The first
    one stands for several SQLite versions (the schema PostgreSQL started at); after it the numbers follow
    SQLite's one by one."""
    directory = directory or _migrations_dir()
    found = numbered_files(directory)
    versions = [m.version for m in found]
    if not found or versions != list(range(versions[0], versions[0] + len(found))):
        raise StorageError(f"PostgreSQL migrations in {directory} are not numbered N..M without gaps: {versions}")
    return found


def _migrations_dir() -> Path:
    return shipped("_migrations/postgresql", "migrations/postgresql")


def current_version(conn: PostgresConnection) -> int:
    if conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0] == 0:
        return 0
    return conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]


class PostgresqlSteps(MigrationSteps):
    """The migration runner's steps on PostgreSQL (memory/store/migrations.py:migrate)."""

    def history(self) -> list[Migration]:
        return load_postgresql_migrations()

    def version(self, conn) -> int:
        return current_version(conn)

    def begin(self, conn) -> None:
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))  # the lock every writer takes first

    def apply(self, conn, sql: str) -> None:
        conn.execute_script(sql)

    def rollback(self, conn) -> None:
        conn.execute("ROLLBACK")


POSTGRESQL_STEPS = PostgresqlSteps()


class PostgresStore:
    """A PostgreSQL database behind the same interface as the SQLite `Store`: `read()` is one snapshot,
    `write()` is all-or-nothing (serialized with every other writer, see the module's docstring), nested writes
    are savepoints. The database must exist (created by its administrator); the schema is created on first use."""

    dialect = "postgresql"
    is_file = False  # a server's database: never "lost" the way a removed file is
    expected = False
    synchronous = "server"  # durability is the server's setting (synchronous_commit)
    keeps_schema_text = False  # psql's \\d shows it; the schema resource is SQLite's text

    def __init__(self, path: str, *, busy_timeout_ms: int = 10_000, clock: Clock = SYSTEM_CLOCK) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.clock = clock
        self._lock = threading.RLock()
        self._conn: PostgresConnection | None = None
        self._depth = 0

    @property
    def exists(self) -> bool:
        return True

    @property
    def display(self) -> str:
        return redacted(self.path)

    def _connection(self) -> PostgresConnection:
        if self._conn is None:
            conn = PostgresConnection(self.path, self.clock, self.busy_timeout_ms)
            try:
                migrate(conn)
            except conn.error as exc:
                conn.close()
                raise StorageError(f"cannot prepare the schema in {self.display}: {exc}") from exc
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def writable(self) -> str | None:
        """Why a write cannot succeed now: the server refuses the connection, or the database is read-only."""
        try:
            with self._lock:
                conn = self._connection()
                if self._depth:
                    return None
                if conn.execute("SELECT current_setting('transaction_read_only') = 'on' "
                                "OR pg_is_in_recovery()").fetchone()[0]:
                    return f"{self.display} is read-only (a standby or default_transaction_read_only)"
        except StorageError as exc:
            return str(exc)
        return None

    def ensure_created(self) -> None:
        with self._lock:
            self._connection()

    @contextmanager
    def read(self, *, status: bool = False) -> Iterator[PostgresConnection]:
        with self._lock:
            if self._depth and self._conn is not None:
                yield self._conn
                return
            conn = self._connection()
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            self._depth += 1
            try:
                yield conn
            finally:
                self._depth -= 1
                try:
                    conn.execute("COMMIT")
                except conn.error:
                    self._discard()

    @contextmanager
    def write(self) -> Iterator[PostgresConnection]:
        with self._lock:
            conn = self._connection()
            depth = self._depth
            try:
                if depth == 0:
                    conn.execute("BEGIN")
                    conn.written = 0
                    try:
                        conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                else:
                    conn.execute(f"SAVEPOINT sp{depth}")
            except conn.error as exc:
                raise StorageError(f"cannot start a write transaction on {self.display}: {exc}") from exc
            self._depth += 1
            try:
                yield conn
            except BaseException as exc:
                self._depth -= 1
                try:
                    if depth == 0:
                        conn.execute("ROLLBACK")
                    else:
                        conn.execute(f"ROLLBACK TO sp{depth}")
                        conn.execute(f"RELEASE sp{depth}")
                except conn.error:
                    if depth == 0:
                        self._discard()
                if isinstance(exc, conn.error) and getattr(exc, "sqlstate", None) == PROGRAM_LIMIT_EXCEEDED:
                    raise InvalidArguments(
                        "too large for a PostgreSQL store: a value this call writes is kept in a B-tree index (the "
                        "text of a fact, rule, conclusion or projection), whose entries hold at most about 2,700 "
                        "bytes after compression; an SQLite store takes the whole 64 KiB a term may have. Nothing "
                        f"was written ({exc})") from exc
                if isinstance(exc, conn.error):
                    raise StorageError(f"database error in {self.display}: {exc}") from exc
                raise
            self._depth -= 1
            try:
                grown = conn.grown_tables() if depth == 0 and conn.written >= BULK_ROWS else []
                conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
            except conn.error as exc:
                if depth == 0:
                    self._discard()
                raise StorageError(f"could not commit to {self.display}: {exc}") from exc
            if grown:
                conn.analyze(grown)

    def _discard(self) -> None:
        """A connection the server dropped: the next call opens a new one."""
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def checkpoint(self) -> None:
        """SQLite's WAL checkpoint has no counterpart here: the server manages its own log."""
        return None

    def scrub(self) -> bool | None:
        """After an erase: rewrite the tables that held the erased content (VACUUM FULL), so no dead row version
        keeps its bytes in the database's files. The server's write-ahead log keeps them until it is recycled
        (docs/team-setup.md); False says so."""
        with self._lock:
            if self._depth:
                return None
            conn = self._connection()
            try:
                conn.execute("VACUUM FULL sources, source_memories, memory_projections, memory_projection_keys, "
                             "memory_fts, memory_words, audit_log, fact_changes, derived, proof_edges")
            except conn.error as exc:
                raise StorageError(f"could not scrub {self.display} after an erase: {exc}") from exc
            return False

    def change_marker(self) -> None:
        """None: PostgreSQL gives no cheap marker of this session's own writes (see data_version), so what
        may have changed is read again."""
        return None

    @contextmanager
    def while_open(self) -> Iterator[bool]:
        """The store's lock held, and whether its connection is open: a background task reads and writes only
        then, and never reopens a store its owner closed."""
        with self._lock:
            yield self._conn is not None

    def data_version(self) -> int:
        """Changes whenever a transaction commits anywhere on the server (the snapshot's bounds and its list
        of running transactions change): a reader that sees the same number has nothing new to read."""
        with self._lock:
            text = self._connection().execute("SELECT pg_current_snapshot()::text").fetchone()[0]
            return int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "big")

    def schema_text(self) -> str:
        from ..errors import SQLiteOnly
        raise SQLiteOnly("the schema resource shows SQLite's schema text; on PostgreSQL read the database with "
                         "psql (\\d) or migrations/postgresql/")

    def close(self) -> None:
        with self._lock:
            self._discard()
