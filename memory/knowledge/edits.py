"""Bulk and in-place fact edits: clear_context, update_fact, upsert_fact.

Each is one transaction with one audit row. They remove the `asserted` support of
the facts they replace; a fact still backed by another support (an assumption, a
source memory) stays believed, and the result lists it under `kept`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog.builtins import unify
from ..errors import NotFound
from ..store.repository import Transaction, Visibility
from ..store.repository import new_fact as storable
from ..terms import Compound, Term, Var, format_term, indicator
from .parsing import parse_fact, parse_pattern
from .segments import Segment, bump_generation, resolve


@dataclass
class EditResult:
    memory: str
    removed: list[str] = field(default_factory=list)  # facts that are gone
    kept: list[str] = field(default_factory=list)  # facts whose asserted support went but that stay believed
    added: str | None = None
    created: bool = False


def _unassert(tx: Transaction, fact_id: int, text: str, result: EditResult, seen: Visibility | None) -> bool:
    """Drop a fact's asserted support; delete the fact if nothing else supports it. True if the caller no
    longer sees it (supports it may not see keep the row, unreported)."""
    tx.supports.remove(fact_id, "asserted")
    if tx.facts.release(fact_id, seen):
        result.kept.append(text)
        return False
    result.removed.append(text)
    return True


def _matching(tx: Transaction, segment: Segment, pattern: Term, seen: Visibility | None) -> list[tuple[int, str]]:
    """The facts the caller sees that unify with the pattern."""
    name, arity = indicator(pattern)
    pattern_args = pattern.args if type(pattern) is Compound else ()
    out = []
    for fact_id, text, values in tx.facts.rows(segment.id, name, arity, seen):
        binding: dict = {}  # shared across arguments, so p(X, X) only matches equal arguments
        if all(unify(p, v, binding) for p, v in zip(pattern_args, values)):
            out.append((fact_id, text))
    return out


def clear_context(kb, category: str, memory: str | None) -> EditResult:
    pattern = parse_pattern(category, "category")
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        result = EditResult(segment.name)
        seen = kb.visibility(tx)
        for fact_id, text in _matching(tx, segment, pattern, seen):
            _unassert(tx, fact_id, text, result, seen)
        if result.removed or result.kept:
            bump_generation(tx, segment)
        tx.audit.record(kb.actor, "clear_context", segment.name,
                        {"pattern": format_term(pattern), "removed": result.removed, "kept": result.kept})
    return result


def update_fact(kb, old_fact: str, new_fact: str, memory: str | None) -> EditResult:
    old = parse_fact(old_fact, "old_fact")
    new = parse_fact(new_fact, "new_fact")
    old_text = format_term(old)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        seen = kb.visibility(tx)
        # Any stored fact the caller sees matches, as for forget_fact: one believed only through an assumption
        # is found too (it keeps that support and is reported under kept).
        fact_id = tx.facts.find(segment.id, old_text, seen)
        if fact_id is None:
            raise NotFound(f"No matching clause for: {old_text}", fact=old_text, memory=segment.name, plain=True)
        result = EditResult(segment.name)
        if format_term(new) != old_text:
            _unassert(tx, fact_id, old_text, result, seen)
        _, result.created, _ = tx.facts.support(segment.id, storable(new), "asserted", "", kb.actor, seen)
        result.added = format_term(new)
        bump_generation(tx, segment)
        tx.audit.record(kb.actor, "update_fact", segment.name,
                        {"old": old_text, "new": result.added, "removed": result.removed, "kept": result.kept})
    return result


def upsert_fact(kb, fact: str, memory: str | None) -> EditResult:
    """Replace the facts with the same predicate and first argument (decided on the parsed term)."""
    term = parse_fact(fact, "fact")
    text = format_term(term)
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        result = EditResult(segment.name)
        seen = kb.visibility(tx)
        if type(term) is Compound:
            key = Compound(term.functor, (term.args[0],) + tuple(Var("_", i) for i in range(1, len(term.args))))
            for fact_id, other in _matching(tx, segment, key, seen):
                if other != text:
                    _unassert(tx, fact_id, other, result, seen)
        _, result.created, _ = tx.facts.support(segment.id, storable(term), "asserted", "", kb.actor, seen)
        result.added = text
        bump_generation(tx, segment)
        tx.audit.record(kb.actor, "upsert_fact", segment.name,
                        {"fact": text, "replaced": result.removed, "kept": result.kept})
    return result
