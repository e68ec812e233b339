"""The knowledge base: facts and their supports, rules, queries, proofs, materialization."""

from .base import Explanation, FactChange, KnowledgeBase, Materialization, Page, QueryResult, RuleChange

__all__ = ["Explanation", "FactChange", "KnowledgeBase", "Materialization", "Page", "QueryResult", "RuleChange"]
