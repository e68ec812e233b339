"""`Memory`: the library's front door, with methods named after the tools they back."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable

from .clock import SYSTEM_CLOCK, Clock
from .datalog import Budget
from .knowledge import Explanation, FactChange, KnowledgeBase, Materialization, Page, QueryResult, RuleChange
from .errors import ReadOnly
from .knowledge import beliefs, edits, inspect, integrity, mounts, programs, refactor, rule_edits
from .knowledge.refactor import ALL
from .knowledge.segments import DEFAULT
from .knowledge.edits import EditResult
from .knowledge.consequences import Consequences
from .knowledge.parsing import parse_fact
from .knowledge.segments import resolve
from .sources.memories import FORGET_LISTED, SUPPORT_KIND
from .terms import indicator
from .evidence.observations import ObservationRelations, Observations
from .sources.context import ADMIN, READ, WRITE_GLOBAL, WRITE_KNOWLEDGE, WRITE_OBSERVATIONS
from .sources import CallerContext, CallerVisibility, SourceMemories, recall, search
from .sources.derived import derived_recall
from .sources.tokens import AccessTokens, IssuedToken
from .sources.search import render_recall
from .store import IN_MEMORY, DatabaseLocation, Store, global_db_path, resolve_location
from .store.repository import IMPORT_BATCH, Repository

# The bulk operations surfaces run without a registry tool (the CLI's import and export commands), declared
# once: operation -> (capability, what it is called in a refusal, whether it writes the target segment).
BULK_OPERATIONS: dict[str, tuple[str, str, bool]] = {
    "add_fact_terms": (ADMIN, "Importing facts", True),
    "import_program": (ADMIN, "Importing a program", True),
    "export_program": (READ, "Exporting a program", False),
    "export_snapshot": (READ, "Exporting a snapshot", False),
    "import_snapshot": (WRITE_KNOWLEDGE, "Importing a snapshot", False),  # as save_snapshot: no segment write
    "remember_observations": (WRITE_OBSERVATIONS, "Importing observations", False),
}


class Memory:
    """A knowledge base in one SQLite file (or `":memory:"`)."""

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
        self.store = Store(path, busy_timeout_ms=budget.writer_wait_ms(), clock=clock)
        self.repository = Repository(self.store)
        self.context = context or CallerContext.from_env(principal=actor)
        self.actor = self.context.principal
        self.sources = SourceMemories(self.repository, self.context)
        self.observations = Observations(self.repository, self.context)
        self.global_path = global_path or global_db_path()
        self._global_kb: KnowledgeBase | None = None
        self.knowledge = KnowledgeBase(self.repository, self.actor, budget,
                                       visibility=CallerVisibility(self.context),
                                       projection_guard=self.sources.guard_projections,
                                       computed=ObservationRelations(),
                                       global_source=self._global)

    @classmethod
    def open(cls, db: str | None = None, **kwargs) -> "Memory":
        """Open the database named by `db`, `$DATALOG_MEMORY_DB`, or the project default (the global
        database when the working directory cannot hold one); `location` says which and why."""
        location = resolve_location(db)
        memory = cls(location.path, **kwargs)
        memory.location = location
        return memory

    # --- which database serves a segment -----------------------------------------------
    def _global(self) -> KnowledgeBase:
        if self._global_kb is None:
            budget = self.knowledge.budget
            store = Store(self.global_path, busy_timeout_ms=budget.writer_wait_ms(), clock=self.clock)
            # The global database holds segments only: source memories, their projections and observations
            # all live in the project database, and the global one is never asked for its default segment
            # (`_kb` serves that from the project). So the caller's visibility is kept (it is the same caller,
            # and costs one lookup when no projection is there), while there is nothing for a projection
            # guard to guard, no computed relation joins, and no further global database to reach.
            self._global_kb = KnowledgeBase(Repository(store), self.actor, budget,
                                            visibility=CallerVisibility(self.context))
        return self._global_kb

    def _kb(self, memory: str | None, write: bool = False) -> KnowledgeBase:
        """The project knowledge base, or the global one for a mounted global segment (whose mode,
        recorded with the project's mount, decides whether writes are allowed)."""
        if memory in (None, "", DEFAULT, ALL) or not isinstance(memory, str):
            return self.knowledge
        with self.repository.read() as tx:
            segment = tx.segments.mounted(memory)
        if segment is None or segment.scope != "global":
            return self.knowledge
        if write and segment.mode == "ro":
            raise ReadOnly("Memory is read-only", memory=memory, plain=True)
        if write:  # the global database is shared by every project
            self.context.require(WRITE_GLOBAL, f"Writing the global memory '{memory}'")
        return self._global()

    def require_for(self, operation: str, memory: str | None = None) -> KnowledgeBase:
        """Refuse a bulk operation (BULK_OPERATIONS) the caller may not run on `memory`, before anything is read
        or written; the operation calls it itself, and a surface calls it first, before it reads the input
        (a caller without the capability learns nothing about a file it may not import). Returns the
        knowledge base the operation works on."""
        capability, what, writes = BULK_OPERATIONS[operation]
        self.context.require(capability, what)
        return self._kb(memory, write=writes)

    def init(self) -> str:
        self.store.ensure_created()
        return self.path

    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self._kb(memory, write=True).remember_fact(fact, memory)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self._kb(memory, write=True).forget_fact(fact, memory)

    def define_rule(self, head: str, body: str, memory: str | None = None, name: str | None = None,
                    confidence: float | None = None) -> RuleChange:
        return self._kb(memory, write=True).define_rule(head, body, memory, name, confidence)

    def forget_rule(self, memory: str | None = None, *, rule: str | None = None, rule_id: int | None = None,
                    name: str | None = None) -> rule_edits.RuleRemoval:
        return rule_edits.forget_rule(self._kb(memory, write=True), memory, rule=rule, rule_id=rule_id, name=name)

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        return self._kb(memory).list_facts(memory, functor, arity, limit, offset)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        return self._kb(memory).list_rules(memory, limit, offset)

    def query_logic(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0) -> QueryResult:
        return self._kb(memory).query_logic(goal, memory, limit, offset)

    def explain_why(self, fact: str, max_depth: int | None = None, memory: str | None = None,
                    record_proof: bool = False) -> Explanation:
        explanation = self._kb(memory, write=record_proof).explain_why(fact, max_depth, memory, record_proof)
        if explanation.detailed_tree is not None:
            self.sources.annotate_proof(explanation.detailed_tree)
        return explanation

    def materialize(self, memory: str | None = None) -> Materialization:
        return self._kb(memory, write=True).materialize(memory)

    def add_facts(self, facts: list[str], memory: str | None = None) -> tuple[int, int]:
        """Assert many facts (text) in one transaction; returns (new, already there)."""
        return self.add_fact_terms([parse_fact(f) for f in facts], memory)

    def add_fact_terms(self, terms: Iterable, memory: str | None = None, chunk: int = IMPORT_BATCH,
                       progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Assert parsed facts in one transaction with one audit row; returns (new, already there). `terms` may
        be any iterable (a file's rows as they are read): it is stored `chunk` at a time, and `progress` gets
        each chunk's size."""
        return self.require_for("add_fact_terms", memory).add_facts(terms, memory, batch=chunk, progress=progress)

    def import_program(self, text: str, memory: str | None = None) -> dict:
        return programs.import_program(self.require_for("import_program", memory), text, memory)

    def export_program(self, memory: str | None = None) -> str:
        return programs.export_program(self.require_for("export_program", memory), memory)

    # --- snapshots and persistence -------------------------------------------------------
    def save_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.save_snapshot(self._kb(memory), name, memory)

    def restore_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.restore_snapshot(self._kb(memory, write=True), name, memory)

    def list_snapshots(self, memory: str | None = None) -> dict:
        return programs.list_snapshots(self._kb(memory), memory)

    def export_snapshot(self, name: str, memory: str | None = None) -> str:
        return programs.snapshot_content(self.require_for("export_snapshot", memory), name, memory)

    def import_snapshot(self, name: str, content: str, memory: str | None = None) -> dict:
        """Store Prolog text as a snapshot (without restoring it)."""
        return programs.save_snapshot(self.require_for("import_snapshot", memory), name, memory, content)

    def get_persistence_status(self, check_integrity: bool = False) -> dict:
        status = programs.persistence_status(self.knowledge, check_integrity)
        # The storage's own account (store/connection.py `storage_state`): why it is degraded as a stable code,
        # whether it is open read-only, the last write the storage refused. Only what applies.
        state = getattr(self.store, "storage_state", None)
        return {**status, **(state() if state is not None else {})}

    def check_invariants(self, record: bool = True) -> integrity.CheckReport:
        """Rows that bypass the tools' invariants (see `datalog-memory check`); recorded in the audit log.
        It reads every row, whoever may see it, so it is an admin's check."""
        self.context.require(ADMIN, "Checking invariants")
        return integrity.check(self.repository, self.actor, record)

    # --- fact edits, inspection and refactoring (zpm parity) ------------------------
    def clear_context(self, category: str, memory: str | None = None) -> EditResult:
        return edits.clear_context(self._kb(memory, write=True), category, memory)

    def update_fact(self, old_fact: str, new_fact: str, memory: str | None = None) -> EditResult:
        return edits.update_fact(self._kb(memory, write=True), old_fact, new_fact, memory)

    def upsert_fact(self, fact: str, memory: str | None = None) -> EditResult:
        return edits.upsert_fact(self._kb(memory, write=True), fact, memory)

    def trace_dependency(self, start_node: str, memory: str | None = None) -> dict:
        return inspect.trace_dependency(self._kb(memory), start_node, memory)

    def verify_consistency(self, scope: str | None = None, memory: str | None = None) -> dict:
        return inspect.verify_consistency(self._kb(memory), scope, memory)

    def get_knowledge_schema(self, memory: str | None = None) -> dict:
        return inspect.knowledge_schema(self._kb(memory), memory)

    def get_kb_overview(self, sample_size: int | None = None) -> dict:
        return inspect.kb_overview(self.knowledge, sample_size)

    def find_predicate_references(self, functor: str, arity: int | None = None, memory: str | None = None,
                                  include_cross_memory_refs: bool = True) -> dict:
        return refactor.find_references(self._kb(memory), functor, arity, memory, include_cross_memory_refs)

    def rename_predicate(self, old_functor: str, new_functor: str, arity: int | None = None,
                         memory: str | None = None, dry_run: bool = False,
                         propagate_cross_memory_refs: bool = False) -> dict:
        return refactor.rename_predicate(self._kb(memory, write=True), old_functor, new_functor, arity, memory, dry_run,
                                         propagate_cross_memory_refs)

    # --- truth maintenance ----------------------------------------------------------
    def assume_fact(self, fact: str, assumption: str, memory: str | None = None) -> dict:
        return beliefs.assume_fact(self._kb(memory, write=True), fact, assumption, memory)

    def get_belief_status(self, fact: str, memory: str | None = None) -> dict:
        return beliefs.belief_status(self._kb(memory), fact, memory)

    def get_justification(self, assumption: str, memory: str | None = None) -> dict:
        return beliefs.justification(self._kb(memory), assumption, memory)

    def list_assumptions(self, memory: str | None = None) -> dict:
        return beliefs.assumptions(self._kb(memory), memory)

    def retract_assumption(self, assumption: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumption(self._kb(memory, write=True), assumption, memory)

    def retract_assumptions(self, pattern: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumptions(self._kb(memory, write=True), pattern, memory)

    # --- source memories -------------------------------------------------------------------
    def memory_remember(self, memory: str, scope: str = "auto", retention: str = "long_term", kind: str = "text",
                        projections: list | None = None, idempotency_key: str | None = None,
                        supersedes: list | None = None, valid_from: str | None = None,
                        valid_to: str | None = None) -> dict:
        return self.sources.remember(memory, scope, retention, kind, projections, idempotency_key, supersedes,
                                     valid_from, valid_to)

    def memory_get(self, id: str, as_of: str | None = None) -> dict:
        return self.sources.get(id, as_of)

    def memory_search(self, query: str, scope: str = "all_visible", history: bool = False, limit: int | None = None,
                      kind: str | None = None, as_of: str | None = None, mode: str = "auto") -> dict:
        return search(self.sources, query, scope, history, limit, kind, as_of, mode)

    def memory_recall(self, predicate: str, arguments: list | None = None, include_source: bool = False,
                      limit: int | None = None, as_of: str | None = None, scope: str = "all_visible") -> dict:
        """Projections matching predicate(arguments…); when rules define the predicate, also the conclusions
        they derive from the caller's memories (as they stood at `as_of`, if given), under `derived`."""
        result = recall(self.sources, predicate, arguments, include_source, limit, as_of, scope)
        if scope == "all_visible":
            derived = derived_recall(self.knowledge, self.sources, predicate, arguments, include_source,
                                     result["limit"], result["as_of"])
            result["derived"] = derived[:result["limit"]]
            result["truncated"] = result["truncated"] or len(derived) > result["limit"]
            result["content"] = render_recall(result["memories"], result["pattern"], result["derived"])
            if result["as_of"] is not None and result["derived"]:
                result["content"] += (f"\n\nDerived with the rules as they are now, over the memories current at "
                                      f"{result['as_of']} and the facts that rest on no memory.")
        return result

    def memory_forget(self, ids: list | None = None, query: str | None = None, action: str = "expire",
                      reason: str | None = None, erase: bool = False, dry_run: bool = False,
                      limit: int | None = None, superseded_by: str | None = None) -> dict:
        """Forget memories by id; the result also says which conclusions resting on their projections fell. A
        query only previews (one search): what it lists is then forgotten by id."""
        listed = FORGET_LISTED if limit is None else limit
        if dry_run or query is not None:
            return self.sources.forget(ids, query, action, reason, erase, True, listed, superseded_by)
        plan = self.sources.forget(ids, None, action, reason, erase, True, listed, superseded_by)  # checked
        with self.repository.read() as tx:
            segment = resolve(tx, DEFAULT)
            projected = [text for target in plan["targets"]
                         for text, _ in tx.supports.facts_with(segment.id, SUPPORT_KIND, target["id"])]
        consequences = Consequences(self.knowledge, DEFAULT, {indicator(parse_fact(t)) for t in projected})
        result = self.sources.forget(ids, None, action, reason, erase, False, listed, superseded_by)
        return {**result, **consequences.withdrawn(result["removed_facts"]).to_dict()}

    # --- evidence: observations ---------------------------------------------------------------
    def remember(self, members: list, event_ts: int | None = None, weight: float = 1.0, formation: str = "") -> dict:
        return self.observations.remember(members, event_ts, weight, formation)

    def remember_observations(self, observations: list[dict]) -> dict:
        """Many observations ({members, event_ts?, weight?, formation?}) in one transaction."""
        self.require_for("remember_observations")
        return self.observations.remember_many(observations)

    def forget_observation(self, hedge_tags: list[str], reason: str | None = None) -> dict:
        return self.observations.forget(hedge_tags, reason)

    def recall(self, query: str = "", top_k: int | None = None, now: int | None = None) -> dict:
        from .evidence.recall import recall  # the evidence code loads with its first use

        with self.store.read() as conn:
            return recall(conn, query, top_k, now)

    def reason(self, query: str = "", top_k: int | None = None, memory: str | None = None,
               now: int | None = None) -> dict:
        from .evidence.reasoning import reason

        return reason(self._kb(memory), query, top_k, memory, now)

    def prove(self, query: str = "", goal_pred: str | None = None, top_k: int | None = None,
              memory: str | None = None, now: int | None = None) -> dict:
        from .evidence.reasoning import prove

        return prove(self._kb(memory), query, goal_pred, top_k, memory, now)

    def verify(self, answer: str, query: str = "", require_proof: bool = False, goal_pred: str | None = None,
               top_k: int | None = None, memory: str | None = None, now: int | None = None) -> dict:
        from .evidence.verify import verify

        return verify(self._kb(memory), answer, query, require_proof, goal_pred, top_k, memory, now)

    def detect(self, full_scan: bool = False, window: str | None = None, sensitivity: float | None = None,
               now: int | None = None) -> dict:
        from .evidence.detect import detect

        with self.store.read() as conn:
            return detect(conn, full_scan, window, sensitivity, now)

    # --- memory segments ------------------------------------------------------------------
    def create_memory(self, name: str, scope: str = "project") -> dict:
        return mounts.create_memory(self.knowledge, self._global() if scope == "global" else self._maybe_global(),
                                    name, scope)

    def mount_memory(self, name: str, mode: str = "rw", scope: str | None = None) -> dict:
        return mounts.mount_memory(self.knowledge, self._maybe_global(), name, mode, scope)

    def unmount_memory(self, name: str) -> dict:
        return mounts.unmount_memory(self.knowledge, name)

    def list_memories(self) -> dict:
        return mounts.list_memories(self.knowledge, self._maybe_global())

    def _maybe_global(self) -> KnowledgeBase | None:
        """The global knowledge base when its database exists (reading never creates it)."""
        if self._global_kb is None and not Path(self.global_path).exists():
            return None
        return self._global()

    # --- bearer tokens of the HTTP transport (each needs memory_admin) -------------------------------
    def create_token(self, name: str, principal: str, project_remote: str | None = None,
                     capabilities: list[str] | None = None, source_class: str | None = None) -> IssuedToken:
        tokens = AccessTokens(self.repository, self.context)
        if source_class is None:
            return tokens.create(name, principal, project_remote, capabilities)
        return tokens.create(name, principal, project_remote, capabilities, source_class)

    def list_tokens(self) -> list:
        return AccessTokens(self.repository, self.context).list()

    def revoke_token(self, token_id: str):
        return AccessTokens(self.repository, self.context).revoke(token_id)

    def as_caller(self, context: CallerContext) -> "Memory":
        """The same databases, budget and clock, called by `context` (a server serving many callers)."""
        memory = Memory(self.path, budget=self.knowledge.budget.copy(), global_path=self.global_path, context=context,
                        clock=self.clock)
        memory.location = self.location
        return memory

    def close(self) -> None:
        self.store.close()
        if self._global_kb is not None:
            self._global_kb.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
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
