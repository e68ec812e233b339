"""The apsw connection: pragmas, lazy creation, and the transaction helper every write uses.

Storage that fails under a running process is named, never hidden: a database file removed or replaced
while it is open refuses every later read and write (`database_removed`: a commit into a file that is gone
is not acknowledged); a full disk, a read-only file or file system and I/O failures are `storage_error`
with a `reason` (`disk_full`, `read_only`, `io_error`); an existing database on a read-only file or file
system opens read-only (reads, queries, proofs and exports work; writes are refused, saying why)."""

from __future__ import annotations

import logging
import os
import threading
import urllib.parse
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import apsw

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import StorageError
from .dialect import SQLITE, insert_into
from .location import IN_MEMORY
from .migrations import current_version, load_migrations, migrate

BUSY_TIMEOUT_MS = 10_000
log = logging.getLogger("datalog-memory")

# What a failure of the storage itself is called (`StorageError.details["reason"]`), by apsw's error class.
REASONS = (("FullError", "disk_full"), ("ReadOnlyError", "read_only"), ("IOError", "io_error"),
           ("CantOpenError", "cannot_open"), ("CorruptError", "corrupt"), ("NotADBError", "corrupt"),
           ("BusyError", "busy"), ("LockedError", "busy"))


def storage_reason(exc: BaseException) -> str | None:
    """The storage failure an apsw error reports (None for one that is not about storage: SQL, constraints)."""
    for name, reason in REASONS:
        kind = getattr(apsw, name, None)
        if kind is not None and isinstance(exc, kind):
            return reason
    return None


def storage_error(exc: BaseException, what: str) -> StorageError:
    """`exc` (an apsw error) as the typed error every surface reports: `what` failed, and why."""
    reason = storage_reason(exc)
    hint = {"disk_full": " (free space on that disk; nothing of this call was stored)",
            "read_only": " (the database or its folder cannot be written now; nothing of this call was stored)"}
    return StorageError(f"{what}: {exc}{hint.get(reason, '')}", reason=reason or "database_error")


class Connection(apsw.Connection):
    """An apsw connection that carries the clock of the store that opened it: code that holds only the
    connection (the audit log, a helper inside a transaction) stamps rows with that clock."""

    clock: Clock = SYSTEM_CLOCK
    dialect = "sqlite"
    sql = SQLITE  # SQLite's forms of what the dialects write differently (memory/store/dialect.py)
    read_only: str | None = None  # why it was opened read-only (None: it can write)

    def insert_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
        """Many rows into `table` (a name of the schema, never input): one prepared INSERT for all of them.
        Returns how many it wrote."""
        rows = rows if isinstance(rows, list) else list(rows)
        if rows:
            self.executemany(insert_into(table, columns), rows)
        return len(rows)

    def quick_check(self, limit: int = 20) -> list[str]:
        """SQLite's own consistency check: ['ok'], or up to `limit` problems."""
        return [r[0] for r in self.execute(f"PRAGMA quick_check({int(limit)})")]

    def page_size(self) -> int:
        return self.execute("PRAGMA page_size").fetchone()[0]

    def schema_version(self) -> int:
        return current_version(self)

    def grow_cache(self, kib: int):
        """At least `kib` KiB of page cache for a bulk stream; returns what restores the setting."""
        saved = self.execute("PRAGMA cache_size").fetchone()[0]
        if (-saved if saved < 0 else saved * self.page_size() // 1024) >= kib:
            return lambda: None
        self.execute(f"PRAGMA cache_size = -{int(kib)}")
        return lambda: self.execute(f"PRAGMA cache_size = {int(saved)}")

    def journal_mode(self) -> str:
        return self.execute("PRAGMA journal_mode").fetchone()[0]


def read_only_reason(path: str) -> str | None:
    """Why an existing database file can only be read by this process, or None when it can be written: its
    file system is mounted read-only, the file is not writable, or its folder (where SQLite keeps the -wal
    and -shm files beside it) cannot take them."""
    if path == IN_MEMORY:
        return None
    target = Path(path)
    try:
        info = os.statvfs(target.parent)
    except OSError:
        return None  # its folder is gone: the open says so
    if info.f_flag & os.ST_RDONLY:
        return f"{target.parent} is on a read-only file system"
    if target.exists() and not os.access(target, os.W_OK):
        return f"{target} is read-only"
    sidecars = [Path(f"{path}-wal"), Path(f"{path}-shm")]
    if not os.access(target.parent, os.W_OK | os.X_OK) and not all(
            p.exists() and os.access(p, os.R_OK | os.W_OK) for p in sidecars):
        return f"its folder {target.parent} is not writable (SQLite keeps {target.name}-wal and -shm there)"
    return None


def _open_read_only(path: str, reason: str, busy_timeout_ms: int, clock: Clock) -> Connection:
    """An existing database that cannot be written, opened to read. In WAL mode a reader needs the -shm
    index: where it cannot be created, the file is read as immutable, which is exact only when no -wal holds
    commits that are not in the file yet; then the open is refused rather than answering without them."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    conn = None
    try:
        conn = Connection(uri, flags=flags)
        conn.setbusytimeout(busy_timeout_ms)
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except apsw.NotADBError as exc:
        conn.close()
        raise StorageError(f"{path} is not a datalog-memory database (not an SQLite file)", reason="corrupt") from exc
    except apsw.Error:
        if conn is not None:
            conn.close()
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise StorageError(
                f"cannot read {path}: {reason}, and its write-ahead log {wal.name} holds commits that are not in "
                f"the file yet, which SQLite can read only with a {Path(path).name}-shm file it cannot create "
                "there; open it once where it can be written (or copy the folder somewhere writable)",
                reason="read_only", path=path) from None
        try:
            conn = Connection(uri + "&immutable=1", flags=flags)
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except apsw.Error as exc:
            raise StorageError(f"cannot open database {path} to read ({reason}): {exc}", reason="read_only",
                               path=path) from exc
    conn.clock = clock
    conn.read_only = reason
    conn.execute("PRAGMA foreign_keys=ON")
    latest = load_migrations()[-1].version
    found = current_version(conn)
    if found < latest:
        conn.close()
        raise StorageError(f"{path} has schema version {found} and needs migrating to {latest}, which cannot be "
                           f"done while it is read-only ({reason})", reason="read_only", path=path)
    migrate(conn)  # refuses a newer schema; an up-to-date one is only read
    log.info("%s opened read-only: %s (reads, queries, proofs and exports work; writes are refused)", path, reason)
    return conn


def open_connection(path: str, *, create: bool = True, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                    clock: Clock = SYSTEM_CLOCK) -> Connection:
    """Open (and migrate) a database with the pragmas every connection needs; an existing one that this
    process cannot write opens read-only (`Connection.read_only` says why)."""
    if path != IN_MEMORY and os.path.isfile(path):
        reason = read_only_reason(path)
        if reason is not None:
            return _open_read_only(path, reason, busy_timeout_ms, clock)
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
    try:
        migrate(conn)
    except apsw.Error as exc:
        conn.close()
        raise storage_error(exc, f"cannot bring {path} up to the current schema") from exc
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


def _full(folder: Path) -> str | None:
    """Why the file system of `folder` cannot take one more page: no space left for this process."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return None
    if info.f_blocks and info.f_bavail * info.f_frsize < 64 * 1024:
        return f"the file system holding {folder} is full ({info.f_bavail * info.f_frsize} bytes free)"
    return None


class Store:
    """One SQLite database file (or ":memory:"). Reads before the file exists see an empty schema; the first
    write creates it. `open_store` (memory/store/interface.py) chooses this or PostgreSQL's store by location."""

    dialect = "sqlite"
    synchronous = "full"  # PRAGMA synchronous=FULL: an acknowledged commit is on disk
    keeps_schema_text = True

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
        # The file the connection has open (st_dev, st_ino), checked before and after every write and before
        # every read: a database removed or replaced under a running process is found, not written into.
        self._identity: tuple[int, int] | None = None
        # Whether a database is known to live at `path` (this process opened it, or its server says so): if it
        # is missing later, that is a loss to report, never an empty memory to start silently.
        self.expected = False
        self._lost: str | None = None  # why the database is gone (then every read and write is refused)
        self.last_failure: dict | None = None  # the last write refused by the storage: {"reason", "message"}

    @property
    def exists(self) -> bool:
        return self.path == IN_MEMORY or Path(self.path).exists()

    @property
    def is_file(self) -> bool:
        return self.path != IN_MEMORY

    @property
    def display(self) -> str:
        """The database as status reports and messages name it."""
        return self.path

    def _connection(self, for_write: bool, status: bool = False) -> Connection:
        if not status:
            self._refuse_if_lost()
        if self._placeholder and not for_write and not status:
            self._refuse_if_uncreatable()
        if self._conn is not None and not (for_write and self._placeholder):
            return self._conn
        if self._conn is not None:
            self._conn.close()
            self._conn = None  # never keep a closed connection: a failed open below is retried on the next call
        if for_write or self.exists:
            created = not self.exists
            self._conn = open_connection(self.path, create=True, busy_timeout_ms=self.busy_timeout_ms,
                                         clock=self.clock)
            self._placeholder = False
            self._identity = self._file_identity()
            self.expected = True
            if created and self.path != IN_MEMORY:
                log.info("created a new, empty database at %s", self.path)
        else:
            if not status:
                self._refuse_if_uncreatable()
            self._conn = open_connection(IN_MEMORY, clock=self.clock)
            self._placeholder = True
        return self._conn

    def _file_identity(self) -> tuple[int, int] | None:
        if self.path == IN_MEMORY:
            return None
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def lost(self) -> str | None:
        """Why the database this store had open, or was told to expect, is gone from its path (removed, or
        replaced by another file), or None. Once lost it stays lost: a restart opens whatever is there then."""
        if self._lost is None and self.path != IN_MEMORY and (self._identity is not None or self.expected):
            now = self._file_identity()
            if now is None:
                folder = Path(self.path).parent
                gone = f"its folder {folder} was removed" if not folder.exists() else "the file was removed"
                self._lost = (f"the database {self.path} is gone ({gone}) while this process was using it; "
                              "restart once the database is back (nothing was written since)")
            elif self._identity is not None and now != self._identity:
                self._lost = (f"the database {self.path} was replaced by another file while this process was using "
                              "it; restart to use the new file (nothing was written to either since)")
            if self._lost is not None:
                log.error("%s", self._lost)
        return self._lost

    def _refuse_if_lost(self) -> None:
        problem = self.lost()
        if problem is not None:
            raise StorageError(f"refused: {problem}", reason="database_removed", path=self.path)

    def _refuse_if_uncreatable(self) -> None:
        """A database not created yet reads as empty only where a first write could create it: a path that can
        never hold one (under a file, in /proc, a read-only folder) is an error, not an empty store. Checked on
        every read until the file exists, so a fixed folder works again without a restart."""
        problem = self.writable()
        if problem is not None:
            raise StorageError(f"no database at {self.path}, and none can be created there: {problem}",
                               path=self.path)

    def writable(self) -> str | None:
        """Why a write cannot succeed here now (None when it can): checked on the file system, not assumed (a
        lost database, a read-only file or file system, a full disk)."""
        return self.health()[1]

    def health(self) -> tuple[str | None, str | None]:
        """(reason, problem): why a write cannot succeed here now, as a stable code (`database_removed`,
        `read_only`, `disk_full`, `cannot_create`) and in words; (None, None) when it can."""
        if self.path == IN_MEMORY:
            return None, None
        lost = self.lost()
        if lost is not None:
            return "database_removed", lost
        target = Path(self.path)
        if target.exists():
            if not target.is_file():
                return "cannot_create", f"{target} is not a file"
            read_only = read_only_reason(self.path)
            if read_only is not None:
                return "read_only", f"the database is open read-only: {read_only}"
            full = _full(target.parent)
            if full is not None:
                return "disk_full", full
            if not os.access(target, os.W_OK) or not os.access(target.parent, os.W_OK | os.X_OK):
                return "read_only", f"{target} or its folder is not writable"
            return None, None
        folder = target.parent
        while not folder.exists():  # the folders a first write would create
            folder = folder.parent
        if not folder.is_dir():
            return "cannot_create", f"{folder} is a file where the database's folder should be"
        if not os.access(folder, os.W_OK | os.X_OK):
            return "cannot_create", f"{folder} is not writable"
        problem = _unable_to_store(folder)
        return ("cannot_create" if problem else None), problem

    def storage_state(self) -> dict:
        """What a health report adds about the storage, only what applies: `reason` (the stable code of why it is
        degraded, see `health`), `read_only` (true when the database is open read-only), `last_failure` (the last
        write the storage refused, while no write has succeeded since: {"reason", "message"})."""
        reason, _ = self.health()
        state: dict = {}
        if reason is not None:
            state["reason"] = reason
        if self._conn is not None and not self._placeholder and self._conn.read_only is not None:
            state["read_only"] = True
        if self.last_failure is not None:
            state["last_failure"] = dict(self.last_failure)
        return state

    def startup_warning(self) -> str | None:
        """What a server starting on this store must say out loud: that it starts an empty memory (no file
        yet: created at the first write), or that it can only read the file; None when neither."""
        if self.path == IN_MEMORY:
            return None
        if not self.exists:
            return (f"no database at {self.path}: starting with an empty memory, created there at the first write "
                    "(if a database was expected there, stop and restore it from a backup: docs/durability.md)")
        reason = read_only_reason(self.path)
        if reason is not None:
            return f"{self.path} can only be read ({reason}): serving it read-only, writes are refused"
        return None

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
            try:
                conn.execute("BEGIN")
            except apsw.Error as exc:
                raise storage_error(exc, f"cannot read {self.path}") from exc
            self._depth += 1
            try:
                yield conn
            finally:
                self._depth -= 1
                conn.execute("COMMIT")

    def _writer(self) -> Connection:
        """The connection to write with: refused when the database was lost or can only be read now (one
        opened read-only whose file became writable again is reopened)."""
        conn = self._connection(for_write=True)
        if conn.read_only is not None and self._depth == 0:
            reason = read_only_reason(self.path)
            if reason is None:  # writable again (remounted, permissions restored): write through a new connection
                conn.close()
                self._conn = None
                conn = self._connection(for_write=True)
            else:
                raise self._failed(StorageError(
                    f"cannot write to {self.path}: {reason}. The database is open read-only: reads, queries, proofs "
                    "and exports work, writes are refused", reason="read_only", path=self.path))
        if conn.read_only is not None:
            raise self._failed(StorageError(f"cannot write to {self.path}: {conn.read_only}", reason="read_only",
                                            path=self.path))
        return conn

    def _failed(self, error: StorageError) -> StorageError:
        self.last_failure = {"reason": error.details.get("reason"), "message": error.message}
        return error

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """All-or-nothing: the outermost block is `BEGIN IMMEDIATE … COMMIT`, inner ones savepoints. The outermost
        commit is acknowledged only once the file it went to is still the database at `path`."""
        with self._lock:
            conn = self._writer()
            depth = self._depth
            try:
                conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            except apsw.Error as exc:  # e.g. still locked by another writer after the busy timeout
                raise self._failed(storage_error(exc, f"cannot start a write transaction on {self.path}")) from exc
            self._depth += 1
            try:
                yield conn
            except BaseException as exc:
                self._depth -= 1
                try:
                    if depth == 0:
                        if conn.in_transaction:  # SQLite rolls back by itself on some failures (a full disk)
                            conn.execute("ROLLBACK")
                    else:
                        conn.execute(f"ROLLBACK TO sp{depth}")
                        conn.execute(f"RELEASE sp{depth}")
                except apsw.Error as rollback:
                    log.warning("rolling back on %s failed too: %s", self.path, rollback)
                    if not isinstance(exc, apsw.Error):
                        raise self._failed(storage_error(rollback, f"could not roll back on {self.path}")) from exc
                if isinstance(exc, apsw.Error):
                    if storage_reason(exc) is not None:
                        raise self._failed(storage_error(exc, f"could not write to {self.path}")) from exc
                    raise StorageError(f"database error in {self.path}: {exc}", reason="database_error") from exc
                raise
            self._depth -= 1
            try:
                conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
            except apsw.Error as exc:
                if depth == 0 and conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except apsw.Error:
                        pass
                raise self._failed(storage_error(exc, f"could not commit to {self.path}")) from exc
            if depth == 0:
                lost = self.lost()  # removed while it was written: the commit went to a file nobody will open
                if lost is not None:
                    raise self._failed(StorageError(f"this write was not stored: {lost}", reason="database_removed",
                                                    path=self.path))
                self.last_failure = None

    def checkpoint(self) -> tuple[int, int, int] | None:
        """A passive WAL checkpoint (copies what it can without waiting on readers):
        (busy, frames in the WAL, frames checkpointed); None for an in-memory or not yet created file."""
        with self._lock:
            if self.path == IN_MEMORY or not self.exists or self._depth or self.lost() is not None:
                return None
            conn = self._connection(for_write=False)
            if conn.read_only is not None:
                return None  # nothing can be copied into a file that cannot be written
            try:
                busy, frames, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except apsw.Error as exc:  # a full disk: the status reports the disk, the checkpoint waits for space
                if storage_reason(exc) is None:
                    raise storage_error(exc, f"could not checkpoint {self.path}") from exc
                self.last_failure = {"reason": storage_reason(exc), "message": f"checkpoint: {exc}"}
                return None
            return busy, frames, done

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

    def change_marker(self) -> tuple[int, int] | None:
        """Differs whenever anything was committed to the database since it was last asked, by this
        connection or another: (PRAGMA data_version, this connection's count of changed rows)."""
        with self._lock:
            return self.data_version(), self._connection(for_write=False).total_changes()

    @contextmanager
    def while_open(self) -> Iterator[bool]:
        """The store's lock held, and whether its connection is open: a background task reads and writes only
        then, and never reopens a store its owner closed."""
        with self._lock:
            yield self._conn is not None

    def data_version(self) -> int:
        """Changes whenever another connection commits (PRAGMA data_version)."""
        with self._lock:
            return self._connection(for_write=False).execute("PRAGMA data_version").fetchone()[0]

    def schema_text(self) -> str:
        """The live schema as SQLite keeps it (what `sqlite3 memory.db .schema` prints): tables, then indexes,
        then views and triggers, each by name."""
        with self.read() as conn:
            rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                                "ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name").fetchall()
        return "".join(f"{sql};\n" for (sql,) in rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
