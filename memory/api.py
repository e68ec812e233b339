"""`Memory`: the library's front door, a small container of the domain's services.

Each tool family's operations live in one typed service (memory/services/): `knowledge` (facts, rules,
queries, proofs, materialization, bulk import and export, edits, inspection, refactoring), `beliefs`,
`snapshots`, `sources` (source memories), `evidence` (observations, reason, prove, verify, detect), `segments`
and `admin`. The tool handlers call them. The methods named after the tools (`Memory.remember_fact`, ...)
are the same operations, kept as the library's stable entry for scripts and tests."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .clock import SYSTEM_CLOCK, Clock
from .datalog import Budget
from .evidence.observations import ObservationRelations, Observations
from .knowledge import KnowledgeBase
from .services.admin import AdminService
from .services.bases import BULK_OPERATIONS, KnowledgeBases
from .services.beliefs import BeliefService
from .services.evidence import EvidenceService
from .services.knowledge import KnowledgeService
from .services.segments import SegmentService
from .services.snapshots import SnapshotService
from .services.sources import SourceService
from .access import CallerContext, CallerVisibility
from .sources import SourceMemories
from .store import IN_MEMORY, DatabaseLocation, global_db_path, open_store, resolve_location
from .store.repository import Repository

__all__ = ["BULK_OPERATIONS", "CallerMemories", "Memory"]


def _entries(service: str, count: int) -> list["_Entry"]:
    return [_Entry(service) for _ in range(count)]


class _Entry:
    """A `Memory` method that is its service's operation of the same name (bound on each access)."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, memory: "Memory | None", owner: type | None = None) -> Any:
        if memory is None:
            return self
        return getattr(getattr(memory, self.service), self.name)


class Memory:
    """One memory (an SQLite file, `":memory:"`, or a PostgreSQL database): the services over it, for one caller."""

    def __init__(self, path: str = IN_MEMORY, *, actor: str | None = None, budget: Budget | None = None,
                 global_path: str | None = None, context: CallerContext | None = None,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        """`context` is who calls (principal, session, project, capabilities); by default it comes from the
        environment (DATALOG_MEMORY_PRINCIPAL, ..._CAPABILITIES). `actor` overrides the principal. `clock` is
        where every recorded instant and every default "now" comes from (memory.clock; tests pass a ManualClock)."""
        self.path = path
        budget = budget or Budget.from_env()
        self.clock = clock
        self.location = DatabaseLocation(path, "given")  # Memory.open says where the path came from
        self.store = open_store(path, busy_timeout_ms=budget.writer_wait_ms(), clock=clock)
        self.repository = Repository(self.store)
        self.context = context or CallerContext.from_env(principal=actor)
        self.actor = self.context.principal
        self.global_path = global_path or global_db_path()
        memories = SourceMemories(self.repository, self.context)
        self.observations = Observations(self.repository, self.context)
        # The project's knowledge base; `bases` adds the global one for mounted global segments.
        self.kb = KnowledgeBase(self.repository, self.actor, budget, visibility=CallerVisibility(self.context),
                                projection_guard=memories.guard_projections, computed=ObservationRelations(),
                                global_source=lambda: self.bases.global_base())
        self.bases = KnowledgeBases(self.kb, self.context, self.global_path, clock)
        self.knowledge = KnowledgeService(self.bases, memories)
        self.beliefs = BeliefService(self.bases)
        self.snapshots = SnapshotService(self.bases)
        self.sources = SourceService(self.bases, memories)
        self.evidence = EvidenceService(self.bases, self.observations, self.repository)
        self.segments = SegmentService(self.bases)
        self.admin = AdminService(self.bases, self.repository, self.context)

    @classmethod
    def open(cls, db: str | None = None, **kwargs: Any) -> "Memory":
        """Open the database named by `db`, `$DATALOG_MEMORY_DB`, or the project default (the global
        database when the working directory cannot hold one); `location` says which and why."""
        location = resolve_location(db)
        memory = cls(location.path, **kwargs)
        memory.location = location
        return memory

    def require_for(self, operation: str, memory: str | None = None) -> KnowledgeBase:
        """Refuse a bulk operation (BULK_OPERATIONS) the caller may not run on `memory` before anything is read
        or written; a surface calls it before it reads the input (see KnowledgeBases.require_for)."""
        return self.bases.require_for(operation, memory)

    def init(self) -> str:
        self.store.ensure_created()
        return self.path

    # The operations by their tool names: the stable entry for scripts and tests.
    remember_fact, forget_fact, define_rule, forget_rule, list_facts, list_rules = _entries("knowledge", 6)
    query_logic, explain_why, materialize, add_facts, add_fact_terms = _entries("knowledge", 5)
    import_program, export_program, clear_context, update_fact, upsert_fact = _entries("knowledge", 5)
    trace_dependency, verify_consistency, get_knowledge_schema, get_kb_overview = _entries("knowledge", 4)
    find_predicate_references, rename_predicate = _entries("knowledge", 2)
    assume_fact, get_belief_status, get_justification, list_assumptions = _entries("beliefs", 4)
    retract_assumption, retract_assumptions = _entries("beliefs", 2)
    save_snapshot, restore_snapshot, list_snapshots, export_snapshot, import_snapshot = _entries("snapshots", 5)
    memory_remember, memory_get, memory_search, memory_recall, memory_forget = _entries("sources", 5)
    remember, remember_observations, forget_observation, recall, reason, prove = _entries("evidence", 6)
    verify, detect = _entries("evidence", 2)
    create_memory, mount_memory, unmount_memory, list_memories = _entries("segments", 4)
    get_persistence_status, check_invariants, create_token, list_tokens, revoke_token = _entries("admin", 5)

    def as_caller(self, context: CallerContext) -> "Memory":
        """The same databases, budget and clock, called by `context` (a server serving many callers)."""
        memory = Memory(self.path, budget=self.kb.budget.copy(), global_path=self.global_path, context=context,
                        clock=self.clock)
        memory.location = self.location
        return memory

    def finish_background_writes(self, timeout: float) -> bool:
        """Before a short-lived process closes this memory: write the meaning vectors of the memories it stored
        or found without one now (they are otherwise written in the background, after the reply), waiting up to
        `timeout` seconds; True when none is left. A later process writes what remains."""
        from .sources.semantic import finish

        return finish(self.store, timeout)

    def close(self) -> None:
        self.store.close()
        self.bases.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CallerMemories:
    """A Memory per caller over one database: `base` for its own caller, others made on first use and kept
    (the most recently used `size`, each with its connection and warm relations). A Memory dropped from the
    cache is closed; a call still holding it reopens its connection, so dropping never fails a call."""

    def __init__(self, base: Memory, size: int = 32) -> None:
        self.base = base
        self.size = size
        self._kept: OrderedDict[CallerContext, Memory] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, context: CallerContext | None) -> Memory:
        if context is None or context == self.base.context:
            return self.base
        with self._lock:
            memory = self._kept.get(context)
            if memory is not None:
                self._kept.move_to_end(context)
                return memory
            memory = self._kept[context] = self.base.as_caller(context)
            dropped = self._kept.popitem(last=False)[1] if len(self._kept) > self.size else None
        if dropped is not None:
            dropped.close()
        return memory

    def close(self) -> None:
        with self._lock:
            kept, self._kept = list(self._kept.values()), OrderedDict()
        for memory in kept:
            memory.close()
