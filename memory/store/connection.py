"""The apsw connection: pragmas, lazy creation, and the transaction helper every write uses."""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import apsw

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import StorageError
from .location import IN_MEMORY, is_url
from .migrations import migrate

BUSY_TIMEOUT_MS = 10_000


class Connection(apsw.Connection):
    """An apsw connection that carries the clock of the store that opened it: code that holds only the
    connection (the audit log, a helper inside a transaction) stamps rows with that clock."""

    clock: Clock = SYSTEM_CLOCK
    dialect = "sqlite"  # which SQL the statements run as (memory/store/dialect.py)

    def quick_check(self, limit: int = 20) -> list[str]:
        """SQLite's own consistency check: ['ok'], or up to `limit` problems."""
        return [r[0] for r in self.execute(f"PRAGMA quick_check({int(limit)})")]

    def page_size(self) -> int:
        return self.execute("PRAGMA page_size").fetchone()[0]


def open_connection(path: str, *, create: bool = True, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                    clock: Clock = SYSTEM_CLOCK) -> Connection:
    """Open (and migrate) a database with the pragmas every connection needs."""
    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    try:
        if path != IN_MEMORY and create:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = Connection(path, flags=flags)
    except (apsw.Error, OSError) as exc:  # e.g. a file where the database's folder should be
        raise StorageError(f"cannot open database {path}: {type(exc).__name__}: {exc}") from exc
    conn.clock = clock
    conn.setbusytimeout(busy_timeout_ms)
    if path != IN_MEMORY:
        try:  # the first statement reads the header: a file that is not SQLite fails here
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except apsw.NotADBError as exc:
            conn.close()
            raise StorageError(f"{path} is not a datalog-memory database (not an SQLite file)") from exc
        except apsw.Error as exc:
            conn.close()
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        if mode.lower() != "wal":
            raise StorageError(f"cannot switch {path} to WAL mode (got {mode})")
    # FULL: an acknowledged commit is on disk even if the machine loses power, not only the process.
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    # Deleted content is overwritten with zeros, so an erased memory leaves no bytes in free space.
    conn.execute("PRAGMA secure_delete=ON")
    migrate(conn)
    return conn


def _unable_to_store(folder: Path) -> str | None:
    """Why the file system of `folder` cannot hold files, where permission bits cannot tell (they let root
    write anywhere): mounted read-only, or a file system without storage such as /proc or /sys."""
    try:
        info = os.statvfs(folder)
    except OSError as exc:
        return f"{folder} cannot be inspected ({exc.strerror or exc})"
    if info.f_flag & os.ST_RDONLY:
        return f"{folder} is on a read-only file system"
    if info.f_blocks == 0:
        return f"{folder} is on a pseudo file system that stores no files"
    return None


class Store:
    """One database file. Reads before the file exists see an empty schema; the first write creates it.
    A `postgresql://` URL gives a PostgresStore instead (memory/store/postgresql.py), with the same interface."""

    dialect = "sqlite"

    def __new__(cls, path: str, **kwargs):
        if cls is Store and isinstance(path, str) and is_url(path):
            from .postgresql import PostgresStore
            return PostgresStore(path, **kwargs)
        return super().__new__(cls)

    def __init__(self, path: str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, clock: Clock = SYSTEM_CLOCK) -> None:
        """`busy_timeout_ms`: how long a write waits for another connection's write to finish. `clock`: where
        every instant written to or read against this database comes from."""
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.clock = clock
        self._lock = threading.RLock()
        self._conn: Connection | None = None
        self._placeholder = False
        self._depth = 0

    @property
    def exists(self) -> bool:
        return self.path == IN_MEMORY or Path(self.path).exists()

    @property
    def display(self) -> str:
        """The database as status reports and messages name it."""
        return self.path

    def _connection(self, for_write: bool, status: bool = False) -> Connection:
        if self._placeholder and not for_write and not status:
            self._refuse_if_uncreatable()
        if self._conn is not None and not (for_write and self._placeholder):
            return self._conn
        if self._conn is not None:
            self._conn.close()
            self._conn = None  # never keep a closed connection: a failed open below is retried on the next call
        if for_write or self.exists:
            self._conn = open_connection(self.path, create=True, busy_timeout_ms=self.busy_timeout_ms,
                                         clock=self.clock)
            self._placeholder = False
        else:
            if not status:
                self._refuse_if_uncreatable()
            self._conn = open_connection(IN_MEMORY, clock=self.clock)
            self._placeholder = True
        return self._conn

    def _refuse_if_uncreatable(self) -> None:
        """A database not created yet reads as empty only where a first write could create it: a path that can
        never hold one (under a file, in /proc, a read-only folder) is an error, not an empty store. Checked on
        every read until the file exists, so a fixed folder works again without a restart."""
        problem = self.writable()
        if problem is not None:
            raise StorageError(f"no database at {self.path}, and none can be created there: {problem}",
                               path=self.path)

    def writable(self) -> str | None:
        """Why a write cannot succeed here now (None when it can): checked on the file system, not assumed."""
        if self.path == IN_MEMORY:
            return None
        target = Path(self.path)
        if target.exists():
            if not target.is_file():
                return f"{target} is not a file"
            if not os.access(target, os.W_OK) or not os.access(target.parent, os.W_OK | os.X_OK):
                return f"{target} or its folder is not writable"
            return None
        folder = target.parent
        while not folder.exists():  # the folders a first write would create
            folder = folder.parent
        if not folder.is_dir():
            return f"{folder} is a file where the database's folder should be"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder} is not writable"
        return _unable_to_store(folder)


    def ensure_created(self) -> None:
        with self._lock:
            self._connection(for_write=True)

    @contextmanager
    def read(self, *, status: bool = False) -> Iterator[Connection]:
        """A consistent snapshot for several SELECTs (or the enclosing write transaction). `status`: a health
        report's read, which sees a database that can never be created as empty (and reports it degraded)."""
        with self._lock:
            if self._depth and self._conn is not None:  # inside the enclosing read or write: its connection
                yield self._conn
                return
            if self._placeholder and self.exists and self._conn is not None:
                self._conn.close()  # another process created the file meanwhile: read the real one
                self._conn = None
                self._placeholder = False
            conn = self._connection(for_write=False, status=status)
            conn.execute("BEGIN")
            self._depth += 1
            try:
                yield conn
            finally:
                self._depth -= 1
                conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """All-or-nothing: the outermost block is `BEGIN IMMEDIATE … COMMIT`, inner ones savepoints."""
        with self._lock:
            conn = self._connection(for_write=True)
            depth = self._depth
            try:
                conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            except apsw.Error as exc:  # e.g. still locked by another writer after the busy timeout
                raise StorageError(f"cannot start a write transaction on {self.path}: {exc}") from exc
            self._depth += 1
            try:
                yield conn
            except BaseException as exc:
                self._depth -= 1
                if depth == 0:
                    conn.execute("ROLLBACK")
                else:
                    conn.execute(f"ROLLBACK TO sp{depth}")
                    conn.execute(f"RELEASE sp{depth}")
                if isinstance(exc, apsw.Error):
                    raise StorageError(f"database error in {self.path}: {exc}") from exc
                raise
            self._depth -= 1
            try:
                conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
            except apsw.Error as exc:
                raise StorageError(f"could not commit to {self.path}: {exc}") from exc

    def checkpoint(self) -> tuple[int, int, int] | None:
        """A passive WAL checkpoint (copies what it can without waiting on readers):
        (busy, frames in the WAL, frames checkpointed); None for an in-memory or not yet created file."""
        with self._lock:
            if self.path == IN_MEMORY or not self.exists or self._depth:
                return None
            busy, log, done = self._connection(for_write=False).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            return busy, log, done

    def scrub(self) -> bool | None:
        """After an erase: rebuild the file once if it predates secure_delete (see the `maintenance` table),
        then checkpoint the WAL into the database and truncate it, so no old page image keeps erased bytes.
        True when the WAL was truncated, False when readers in other processes kept it busy (their next
        checkpoint overwrites it); None for an in-memory database."""
        with self._lock:
            if self.path == IN_MEMORY or self._depth:
                return None
            conn = self._connection(for_write=True)
            try:
                if conn.execute("SELECT 1 FROM maintenance WHERE task = 'vacuum_on_erase'").fetchone():
                    conn.execute("VACUUM")
                    conn.execute("DELETE FROM maintenance WHERE task = 'vacuum_on_erase'")
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except apsw.Error as exc:
                raise StorageError(f"could not scrub {self.path} after an erase: {exc}") from exc
            return busy == 0

    def data_version(self) -> int:
        """Changes whenever another connection commits (PRAGMA data_version)."""
        with self._lock:
            return self._connection(for_write=False).execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
