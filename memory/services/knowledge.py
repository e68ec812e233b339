"""Knowledge operations: facts, rules, queries, proofs, materialization, bulk import and export, fact edits,
inspection and refactoring, each on the knowledge base that serves its segment."""

from __future__ import annotations

from typing import Callable, Iterable

from ..knowledge import Explanation, FactChange, Materialization, Page, QueryResult, RuleChange
from ..knowledge import edits, inspect, programs, refactor, rule_edits
from ..knowledge.edits import EditResult
from ..knowledge.parsing import parse_fact
from ..sources import SourceMemories
from ..store.repository import IMPORT_BATCH
from .bases import KnowledgeBases


class KnowledgeService:
    def __init__(self, bases: KnowledgeBases, sources: SourceMemories) -> None:
        self.bases = bases
        self.sources = sources  # a proof's leaves are led back to the source memories behind them

    # --- facts and rules -----------------------------------------------------------------
    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self.bases.serving(memory, write=True).remember_fact(fact, memory)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        return self.bases.serving(memory, write=True).forget_fact(fact, memory)

    def define_rule(self, head: str, body: str, memory: str | None = None, name: str | None = None,
                    confidence: float | None = None) -> RuleChange:
        return self.bases.serving(memory, write=True).define_rule(head, body, memory, name, confidence)

    def forget_rule(self, memory: str | None = None, *, rule: str | None = None, rule_id: int | None = None,
                    name: str | None = None) -> rule_edits.RuleRemoval:
        return rule_edits.forget_rule(self.bases.serving(memory, write=True), memory, rule=rule, rule_id=rule_id,
                                      name=name)

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        return self.bases.serving(memory).list_facts(memory, functor, arity, limit, offset)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        return self.bases.serving(memory).list_rules(memory, limit, offset)

    # --- queries, proofs, materialization --------------------------------------------------
    def query_logic(self, goal: str, memory: str | None = None, limit: int | None = None,
                    offset: int = 0) -> QueryResult:
        return self.bases.serving(memory).query_logic(goal, memory, limit, offset)

    def explain_why(self, fact: str, max_depth: int | None = None, memory: str | None = None,
                    record_proof: bool = False) -> Explanation:
        kb = self.bases.serving(memory, write=record_proof)
        explanation = kb.explain_why(fact, max_depth, memory, record_proof)
        if explanation.proof is not None:
            self.sources.annotate_proof(explanation.proof)
        return explanation

    def materialize(self, memory: str | None = None) -> Materialization:
        return self.bases.serving(memory, write=True).materialize(memory)

    # --- bulk ------------------------------------------------------------------------------
    def add_facts(self, facts: list[str], memory: str | None = None) -> tuple[int, int]:
        """Assert many facts (text) in one transaction; returns (new, already there)."""
        return self.add_fact_terms([parse_fact(f) for f in facts], memory)

    def add_fact_terms(self, terms: Iterable, memory: str | None = None, chunk: int = IMPORT_BATCH,
                       progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Assert parsed facts in one transaction with one audit row; returns (new, already there). `terms` may
        be any iterable (a file's rows as they are read): it is stored `chunk` at a time, and `progress` gets
        each chunk's size."""
        kb = self.bases.require_for("add_fact_terms", memory)
        return kb.add_facts(terms, memory, batch=chunk, progress=progress)

    def import_program(self, text: str, memory: str | None = None) -> dict:
        return programs.import_program(self.bases.require_for("import_program", memory), text, memory)

    def export_program(self, memory: str | None = None) -> str:
        return programs.export_program(self.bases.require_for("export_program", memory), memory)

    # --- fact edits, inspection and refactoring --------------------------------------------
    def clear_context(self, category: str, memory: str | None = None) -> EditResult:
        return edits.clear_context(self.bases.serving(memory, write=True), category, memory)

    def update_fact(self, old_fact: str, new_fact: str, memory: str | None = None) -> EditResult:
        return edits.update_fact(self.bases.serving(memory, write=True), old_fact, new_fact, memory)

    def upsert_fact(self, fact: str, memory: str | None = None) -> EditResult:
        return edits.upsert_fact(self.bases.serving(memory, write=True), fact, memory)

    def trace_dependency(self, start_node: str, memory: str | None = None) -> dict:
        return inspect.trace_dependency(self.bases.serving(memory), start_node, memory)

    def verify_consistency(self, scope: str | None = None, memory: str | None = None) -> dict:
        return inspect.verify_consistency(self.bases.serving(memory), scope, memory)

    def get_knowledge_schema(self, memory: str | None = None) -> dict:
        return inspect.knowledge_schema(self.bases.serving(memory), memory)

    def get_kb_overview(self, sample_size: int | None = None) -> dict:
        return inspect.kb_overview(self.bases.project, sample_size)

    def find_predicate_references(self, functor: str, arity: int | None = None, memory: str | None = None,
                                  include_cross_memory_refs: bool = True) -> dict:
        return refactor.find_references(self.bases.serving(memory), functor, arity, memory, include_cross_memory_refs)

    def rename_predicate(self, old_functor: str, new_functor: str, arity: int | None = None,
                         memory: str | None = None, dry_run: bool = False,
                         propagate_cross_memory_refs: bool = False) -> dict:
        return refactor.rename_predicate(self.bases.serving(memory, write=True), old_functor, new_functor, arity,
                                         memory, dry_run, propagate_cross_memory_refs)
