"""The knowledge base service: facts with supports, rules, queries, proofs and materialization.

Each job lives in its own module and class; `KnowledgeBase` puts them together over the state they share
(core.py: collaborators, the caller's view, programs and their cache, loaders, budgets)."""

from __future__ import annotations

from .core import MAX_LIMIT, KnowledgeCore
from .explanations import Explanation, Explanations
from .facts_rules import FactChange, FactsAndRules, Page, RuleChange
from .materialization import Materialization, Materializer
from .queries import QueryResult, Queries

__all__ = ["MAX_LIMIT", "Explanation", "FactChange", "KnowledgeBase", "KnowledgeCore", "Materialization", "Page",
           "QueryResult", "RuleChange"]


class KnowledgeBase(FactsAndRules, Queries, Explanations, Materializer):
    """Facts and rules, queries, explanations and materialization over one store, for one caller."""
