"""`Memory`: the library's front door, with methods named after the tools they back."""

from __future__ import annotations

import os

from .datalog import Budget
from .knowledge import Explanation, FactChange, KnowledgeBase, Materialization, Page, QueryResult, RuleChange
from .store import IN_MEMORY, Store, resolve_db_path


def default_actor() -> str:
    return os.environ.get("DATALOG_MEMORY_PRINCIPAL") or os.environ.get("USER") or "local"


class Memory:
    """A knowledge base in one SQLite file (or `":memory:"`)."""

    def __init__(self, path: str = IN_MEMORY, *, actor: str | None = None, budget: Budget | None = None) -> None:
        self.path = path
        self.store = Store(path)
        self.actor = actor or default_actor()
        self.knowledge = KnowledgeBase(self.store, self.actor, budget)

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

    def import_program(self, text: str, memory: str | None = None) -> tuple[int, int]:
        return self.knowledge.import_program(text, memory)

    def export_program(self, memory: str | None = None) -> str:
        return self.knowledge.export_program(memory)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
