"""What a store is: the interface every backend implements (SQLite's `Store`, PostgreSQL's `PostgresStore`).

Domain code holds a `MemoryStore` and the connection its transactions yield (`StoreConnection`); the repository
families (memory/store/repository/) run their statements on that connection. A third backend implements both
Protocols, a `MigrationSteps` for its schema history, and passes the store conformance suite (the tests
parameterized over `STORES` in tests/conftest.py); ARCHITECTURE.md has the recipe. Code above the store asks
these capabilities, never which dialect it runs on."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

from ..clock import Clock
from .dialect import Dialect


@runtime_checkable
class StoreConnection(Protocol):
    """One connection inside a read or write. Statements take `?` (or `?NNN`, `:name`) parameters; where the
    dialects' SQL differs they take the form from `sql` (memory/store/dialect.py). New rows' keys come back
    through `RETURNING`."""

    clock: Clock
    dialect: str  # "sqlite" or "postgresql": the name of `sql`, for what only one dialect has (PRAGMA, FTS5)
    sql: Dialect

    def execute(self, sql: str, params: Any = None) -> Any: ...

    def executemany(self, sql: str, rows: Any) -> Any: ...

    def insert_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
        """Many rows into `table` (a name of the schema, never input), in order: what a bulk write streams
        (SQLite: one prepared INSERT; PostgreSQL: COPY, one round trip). Returns how many it wrote (read that,
        not `changes()`, which the stores leave differently after it)."""
        ...

    def changes(self) -> int: ...

    def schema_version(self) -> int: ...

    def journal_mode(self) -> str: ...

    def page_size(self) -> int: ...

    def quick_check(self, limit: int = 20) -> list[str]: ...

    def grow_cache(self, kib: int) -> Callable[[], None] | None:
        """Give a bulk stream at least `kib` KiB of page cache; returns what restores the setting, or None
        when the backend has nothing to grow (PostgreSQL's buffers are the server's)."""
        ...


@runtime_checkable
class MemoryStore(Protocol):
    """One store: `read()` is a consistent snapshot, `write()` all-or-nothing (nested writes are savepoints)."""

    path: str
    clock: Clock
    busy_timeout_ms: int
    expected: bool  # a database is known to live there: missing later is a loss, never an empty memory

    @property
    def dialect(self) -> str: ...

    @property
    def is_file(self) -> bool:
        """One file on this machine (with a write-ahead log beside it), which can go missing."""
        ...

    @property
    def synchronous(self) -> str:
        """What an acknowledged commit survives: "full" (the file is synced) or "server" (its setting)."""
        ...

    @property
    def keeps_schema_text(self) -> bool:
        """`schema_text()` answers (SQLite's own CREATE statements)."""
        ...

    @property
    def exists(self) -> bool: ...

    @property
    def display(self) -> str: ...

    def read(self, *, status: bool = False) -> AbstractContextManager[Any]: ...

    def write(self) -> AbstractContextManager[Any]: ...

    def ensure_created(self) -> None: ...

    def writable(self) -> str | None: ...

    def checkpoint(self) -> tuple[int, int, int] | None: ...

    def scrub(self) -> bool | None: ...

    def change_marker(self) -> tuple[int, int] | None: ...

    def while_open(self) -> AbstractContextManager[bool]: ...

    def data_version(self) -> int: ...

    def schema_text(self) -> str: ...

    def close(self) -> None: ...


def open_store(path: str, *, busy_timeout_ms: int | None = None, clock: Clock | None = None) -> MemoryStore:
    """The store a location names: a `postgresql://` URL is a PostgreSQL database (psycopg is imported only
    then), anything else an SQLite file or ":memory:"."""
    from .location import is_url

    options: dict[str, Any] = {}
    if busy_timeout_ms is not None:
        options["busy_timeout_ms"] = busy_timeout_ms
    if clock is not None:
        options["clock"] = clock
    if is_url(path):
        from .postgresql import PostgresStore
        return PostgresStore(path, **options)
    from .connection import Store
    return Store(path, **options)
