"""The unit of work: one transaction on the store, with a repository per table family inside it."""

from __future__ import annotations

from contextlib import contextmanager
from functools import cached_property
from typing import Any, Iterator

from ...clock import Clock
from ..interface import MemoryStore
from .audit import Audit
from .derived import Derived
from .entities import Entities
from .facts import Facts
from .formations import Formations
from .fulltext import FullText
from .invariants import Invariants
from .memory_projections import MemoryProjections
from .memory_search import MemorySearch
from .memory_words import MemoryWords
from .observation_scans import ObservationScans
from .observations import Observations
from .projects import Projects
from .rules import Rules
from .segments import Segments
from .snapshots import Snapshots
from .source_memories import SourceMemoryRows
from .supports import Supports
from .tokens import Tokens
from .vectors import Vectors


class Transaction:
    """Everything read or written through one of these is one transaction: all of it commits, or none."""

    def __init__(self, conn) -> None:
        self._conn = conn

    @cached_property
    def segments(self) -> Segments:
        return Segments(self._conn)

    @cached_property
    def facts(self) -> Facts:
        return Facts(self._conn)

    @cached_property
    def supports(self) -> Supports:
        return Supports(self._conn)

    @cached_property
    def rules(self) -> Rules:
        return Rules(self._conn)

    @cached_property
    def audit(self) -> Audit:
        return Audit(self._conn)

    @cached_property
    def derived(self) -> Derived:
        return Derived(self._conn)

    @cached_property
    def snapshots(self) -> Snapshots:
        return Snapshots(self._conn)

    @cached_property
    def invariants(self) -> Invariants:
        return Invariants(self._conn)

    @cached_property
    def tokens(self) -> Tokens:
        return Tokens(self._conn)

    @cached_property
    def projects(self) -> Projects:
        return Projects(self._conn)

    @cached_property
    def vectors(self) -> Vectors:
        return Vectors(self._conn)

    @cached_property
    def fulltext(self) -> FullText:
        return FullText(self._conn)

    @cached_property
    def source_memories(self) -> SourceMemoryRows:
        return SourceMemoryRows(self._conn)

    @cached_property
    def memory_projections(self) -> MemoryProjections:
        return MemoryProjections(self._conn)

    @cached_property
    def memory_words(self) -> MemoryWords:
        return MemoryWords(self._conn)

    @cached_property
    def memory_search(self) -> MemorySearch:
        return MemorySearch(self._conn)

    @cached_property
    def observations(self) -> Observations:
        return Observations(self._conn)

    @cached_property
    def observation_scans(self) -> ObservationScans:
        return ObservationScans(self._conn)

    @cached_property
    def entities(self) -> Entities:
        return Entities(self._conn)

    @cached_property
    def formations(self) -> Formations:
        return Formations(self._conn)

    @property
    def clock(self) -> Clock:
        """The clock this store stamps rows with (and a read's "now" comes from)."""
        return self._conn.clock

    @property
    def connection(self) -> Any:
        """The store's own connection, for what still takes one: the namespace lookups of memory/access, the
        check of the observations' hash chain, and code handed a connection that opens these families on it
        (`Transaction(conn)`); they share this transaction. No SQL outside memory/store runs on it."""
        return self._conn

    # --- the store's health, as get_persistence_status reports it ---------------------------------------
    def schema_version(self) -> int:
        return self._conn.schema_version()

    @property
    def dialect(self) -> str:
        """"sqlite" or "postgresql": which store this transaction runs on."""
        return self._conn.dialect

    def journal_mode(self) -> str:
        """SQLite's journal mode ("wal"); "postgresql" on PostgreSQL, whose server keeps its own log."""
        return self._conn.journal_mode()

    def page_size(self) -> int:
        return self._conn.page_size()

    def quick_check(self, limit: int = 20) -> list[str]:
        """The store's own consistency check: ['ok'], or up to `limit` problems."""
        return self._conn.quick_check(limit)


class Repository:
    """The core tables of one store (an SQLite file or a PostgreSQL database): segments, facts, supports, rules, the audit log, derived
    conclusions and snapshots. `read()` is a consistent snapshot; `write()` is all-or-nothing (nested
    writes are savepoints of the enclosing one)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @property
    def clock(self) -> Clock:
        """The clock this store stamps rows with (and a call's "now" comes from)."""
        return self.store.clock

    @contextmanager
    def read(self, *, status: bool = False) -> Iterator[Transaction]:
        """`status`: a health report's read, which sees a database that can never be created as empty."""
        with self.store.read(status=status) as conn:
            yield Transaction(conn)

    @contextmanager
    def write(self) -> Iterator[Transaction]:
        with self.store.write() as conn:
            yield Transaction(conn)
