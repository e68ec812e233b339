"""`Memory`: the library's front door, with methods named after the tools they back."""

from __future__ import annotations

import os

from .datalog import Budget
from .knowledge import Explanation, FactChange, KnowledgeBase, Materialization, Page, QueryResult, RuleChange
from .knowledge import beliefs, edits, inspect, programs, refactor
from .knowledge.edits import EditResult
from .store import IN_MEMORY, Store, resolve_db_path


def default_actor() -> str:
    return os.environ.get("DATALOG_MEMORY_PRINCIPAL") or os.environ.get("USER") or "local"


class Memory:
    """A knowledge base in one SQLite file (or `":memory:"`)."""

    def __init__(self, path: str = IN_MEMORY, *, actor: str | None = None, budget: Budget | None = None) -> None:
        self.path = path
        self.store = Store(path)
        self.actor = actor or default_actor()
        self.knowledge = KnowledgeBase(self.store, self.actor, budget or Budget.from_env())

    @classmethod
    def open(cls, db: str | None = None, **kwargs) -> "Memory":
        """Open the database named by `db`, `$DATALOG_MEMORY_DB`, or the project default."""
        return cls(resolve_db_path(db), **kwargs)

    def init(self) -> str:
        self.store.ensure_created()
        return self.path

    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self.knowledge.remember_fact(fact, memory)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self.knowledge.forget_fact(fact, memory)

    def define_rule(self, head: str, body: str, memory: str | None = None) -> RuleChange:
        return self.knowledge.define_rule(head, body, memory)

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        return self.knowledge.list_facts(memory, functor, arity, limit, offset)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        return self.knowledge.list_rules(memory, limit, offset)

    def query_logic(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0) -> QueryResult:
        return self.knowledge.query_logic(goal, memory, limit, offset)

    def explain_why(self, fact: str, max_depth: int | None = None, memory: str | None = None) -> Explanation:
        return self.knowledge.explain_why(fact, max_depth, memory)

    def materialize(self, memory: str | None = None) -> Materialization:
        return self.knowledge.materialize(memory)

    def add_facts(self, facts: list[str], memory: str | None = None) -> tuple[int, int]:
        """Assert many facts (text) in one transaction; returns (new, already there)."""
        from .knowledge.parsing import parse_fact

        return self.knowledge.add_facts([parse_fact(f) for f in facts], memory)

    def import_program(self, text: str, memory: str | None = None) -> dict:
        return programs.import_program(self.knowledge, text, memory)

    def export_program(self, memory: str | None = None) -> str:
        return programs.export_program(self.knowledge, memory)

    # --- snapshots and persistence -------------------------------------------------------
    def save_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.save_snapshot(self.knowledge, name, memory)

    def restore_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.restore_snapshot(self.knowledge, name, memory)

    def list_snapshots(self, memory: str | None = None) -> dict:
        return programs.list_snapshots(self.knowledge, memory)

    def export_snapshot(self, name: str, memory: str | None = None) -> str:
        return programs.snapshot_content(self.knowledge, name, memory)

    def import_snapshot(self, name: str, content: str, memory: str | None = None) -> dict:
        """Store Prolog text as a snapshot (without restoring it)."""
        return programs.save_snapshot(self.knowledge, name, memory, content)

    def get_persistence_status(self, check_integrity: bool = False) -> dict:
        return programs.persistence_status(self.knowledge, check_integrity)

    # --- fact edits, inspection and refactoring (zpm parity) ------------------------
    def clear_context(self, category: str, memory: str | None = None) -> EditResult:
        return edits.clear_context(self.knowledge, category, memory)

    def update_fact(self, old_fact: str, new_fact: str, memory: str | None = None) -> EditResult:
        return edits.update_fact(self.knowledge, old_fact, new_fact, memory)

    def upsert_fact(self, fact: str, memory: str | None = None) -> EditResult:
        return edits.upsert_fact(self.knowledge, fact, memory)

    def trace_dependency(self, start_node: str, memory: str | None = None) -> dict:
        return inspect.trace_dependency(self.knowledge, start_node, memory)

    def verify_consistency(self, scope: str | None = None, memory: str | None = None) -> dict:
        return inspect.verify_consistency(self.knowledge, scope, memory)

    def get_knowledge_schema(self, memory: str | None = None) -> dict:
        return inspect.knowledge_schema(self.knowledge, memory)

    def get_kb_overview(self, sample_size: int | None = None) -> dict:
        return inspect.kb_overview(self.knowledge, sample_size)

    def find_predicate_references(self, functor: str, arity: int | None = None, memory: str | None = None,
                                  include_cross_memory_refs: bool = True) -> dict:
        return refactor.find_references(self.knowledge, functor, arity, memory, include_cross_memory_refs)

    def rename_predicate(self, old_functor: str, new_functor: str, arity: int | None = None,
                         memory: str | None = None, dry_run: bool = False,
                         propagate_cross_memory_refs: bool = False) -> dict:
        return refactor.rename_predicate(self.knowledge, old_functor, new_functor, arity, memory, dry_run,
                                         propagate_cross_memory_refs)

    # --- truth maintenance ----------------------------------------------------------
    def assume_fact(self, fact: str, assumption: str, memory: str | None = None) -> dict:
        return beliefs.assume_fact(self.knowledge, fact, assumption, memory)

    def get_belief_status(self, fact: str, memory: str | None = None) -> dict:
        return beliefs.belief_status(self.knowledge, fact, memory)

    def get_justification(self, assumption: str, memory: str | None = None) -> dict:
        return beliefs.justification(self.knowledge, assumption, memory)

    def list_assumptions(self, memory: str | None = None) -> dict:
        return beliefs.assumptions(self.knowledge, memory)

    def retract_assumption(self, assumption: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumption(self.knowledge, assumption, memory)

    def retract_assumptions(self, pattern: str, memory: str | None = None) -> beliefs.Retraction:
        return beliefs.retract_assumptions(self.knowledge, pattern, memory)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
