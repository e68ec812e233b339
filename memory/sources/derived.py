"""Recall through rules: conclusions derived from projections, led back to the memories they rest on.

When rules define the recalled predicate, `memory_recall` also answers it as a query
and keeps each answer whose proof ends in at least one memory the caller may read,
listing those memories, with their exact text when asked or when one of them was
projected lossily."""

from __future__ import annotations

import json

from ..knowledge.proof_view import ProofStep
from ..knowledge.segments import resolve
from ..terms import Compound, Var, format_term
from .memories import SourceMemories
from .projections import to_value

MAX_PROOFS = 200


def _leaf_memories(proof: ProofStep, found: dict) -> None:
    for step in proof.walk():
        for memory in step.memories or ():
            found.setdefault(memory["id"], memory)


def _lossy(sources: SourceMemories, ids: list[str]) -> set[str]:
    """The memories among `ids` with a projection that is lossy or needs context."""
    with sources.store.read() as conn:
        return {r[0] for r in conn.execute(
            "SELECT DISTINCT memory_id FROM memory_projections WHERE quality <> 'exact' "
            "AND memory_id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))}


def derived_recall(kb, sources: SourceMemories, predicate: str, arguments: list | None, include_source: bool,
                   limit: int) -> list[dict]:
    with kb.repository.read() as tx:
        arities = tx.rules.head_arities(resolve(tx, None).id, predicate)
    if arguments is not None:
        arities = [a for a in arities if a == len(arguments)]
    out: list[dict] = []
    for arity in arities:
        pattern = arguments if arguments is not None else [None] * arity
        args = tuple(Var(f"A{i}") if value is None else to_value(value, f"arguments[{i}]")
                     for i, value in enumerate(pattern))
        goal = format_term(Compound(predicate, args) if args else predicate)
        answers = kb.query_terms(goal, limit=MAX_PROOFS)
        for row in answers.rows:
            values = iter(row)
            fact = Compound(predicate, tuple(next(values) if type(a) is Var else a for a in args)) if args else predicate
            explanation = kb.explain_why(format_term(fact))
            if explanation.proof is None:
                continue
            sources.annotate_proof(explanation.proof)
            found: dict = {}
            _leaf_memories(explanation.proof, found)
            if not found:
                continue  # not resting on any memory the caller may read: not a recalled memory
            with_source = include_source or bool(_lossy(sources, list(found)))
            memories = [{"id": m["id"], "namespace": m["namespace"], "status": m["status"],
                         **({"source_text": m["source_text"]} if with_source else {})} for m in found.values()]
            out.append({"fact": explanation.fact, "derived": True, "rule": explanation.proof.rule_applied,
                        "memories": memories, "source_context_included": with_source})
            if len(out) > limit:
                return out
    return out
