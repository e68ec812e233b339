"""Bulk and in-place fact edits: clear_context, update_fact, upsert_fact.

Each is one transaction with one audit row. They remove the `asserted` support of
the facts they replace; a fact still backed by another support (an assumption, a
source memory) stays believed, and the result lists it under `kept`."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog.builtins import unify
from ..errors import NotFound
from ..store import record_audit
from ..terms import Compound, Term, Var, format_term, indicator
from ..terms.codec import decode_args
from .parsing import parse_fact, parse_pattern
from .rows import release, support_fact, visible_fact
from .segments import Segment, bump_generation, resolve


@dataclass
class EditResult:
    memory: str
    removed: list[str] = field(default_factory=list)  # facts that are gone
    kept: list[str] = field(default_factory=list)  # facts whose asserted support went but that stay believed
    added: str | None = None
    created: bool = False


def _unassert(conn, fact_id: int, text: str, result: EditResult, seen: tuple[str, list]) -> bool:
    """Drop a fact's asserted support; delete the fact if nothing else supports it. True if the caller no
    longer sees it (supports it may not see keep the row, unreported)."""
    conn.execute("DELETE FROM supports WHERE fact_id = ? AND kind = 'asserted'", (fact_id,))
    if release(conn, fact_id, seen):
        result.kept.append(text)
        return False
    result.removed.append(text)
    return True


def _matching(conn, segment: Segment, pattern: Term, visible: tuple[str, list]) -> list[tuple[int, str]]:
    """The facts the caller sees that unify with the pattern."""
    name, arity = indicator(pattern)
    pattern_args = pattern.args if type(pattern) is Compound else ()
    rows = conn.execute(f"SELECT f.id, f.text, f.args FROM facts AS f WHERE f.segment_id = ? AND f.functor = ? "
                        f"AND f.arity = ? AND {visible[0]} ORDER BY f.id",
                        (segment.id, name, arity, *visible[1])).fetchall()
    out = []
    for fact_id, text, args in rows:
        values = decode_args(args)
        binding: dict = {}  # shared across arguments, so p(X, X) only matches equal arguments
        if all(unify(p, v, binding) for p, v in zip(pattern_args, values)):
            out.append((fact_id, text))
    return out


def clear_context(kb, category: str, memory: str | None) -> EditResult:
    pattern = parse_pattern(category, "category")
    with kb.store.write() as conn:
        segment = resolve(conn, memory, write=True)
        result = EditResult(segment.name)
        seen = kb.seen(conn)
        for fact_id, text in _matching(conn, segment, pattern, kb.visible(conn)):
            _unassert(conn, fact_id, text, result, seen)
        if result.removed or result.kept:
            bump_generation(conn, segment)
        record_audit(conn, kb.actor, "clear_context", segment.name,
                     {"pattern": format_term(pattern), "removed": result.removed, "kept": result.kept})
    return result


def update_fact(kb, old_fact: str, new_fact: str, memory: str | None) -> EditResult:
    old = parse_fact(old_fact, "old_fact")
    new = parse_fact(new_fact, "new_fact")
    old_text = format_term(old)
    with kb.store.write() as conn:
        segment = resolve(conn, memory, write=True)
        seen = kb.seen(conn)
        # Any stored fact the caller sees matches, as for forget_fact: one believed only through an assumption
        # is found too (it keeps that support and is reported under kept).
        fact_id = visible_fact(conn, segment, old_text, seen)
        row = None if fact_id is None else (fact_id,)
        if row is None:
            raise NotFound(f"No matching clause for: {old_text}", fact=old_text, memory=segment.name, plain=True)
        result = EditResult(segment.name)
        if format_term(new) != old_text:
            _unassert(conn, row[0], old_text, result, seen)
        _, result.created, _ = support_fact(conn, segment, new, "asserted", "", kb.actor, seen)
        result.added = format_term(new)
        bump_generation(conn, segment)
        record_audit(conn, kb.actor, "update_fact", segment.name,
                     {"old": old_text, "new": result.added, "removed": result.removed, "kept": result.kept})
    return result


def upsert_fact(kb, fact: str, memory: str | None) -> EditResult:
    """Replace the facts with the same predicate and first argument (decided on the parsed term)."""
    term = parse_fact(fact, "fact")
    text = format_term(term)
    with kb.store.write() as conn:
        segment = resolve(conn, memory, write=True)
        result = EditResult(segment.name)
        if type(term) is Compound:
            key = Compound(term.functor, (term.args[0],) + tuple(Var("_", i) for i in range(1, len(term.args))))
            for fact_id, other in _matching(conn, segment, key, kb.visible(conn)):
                if other != text:
                    _unassert(conn, fact_id, other, result, kb.seen(conn))
        _, result.created, _ = support_fact(conn, segment, term, "asserted", "", kb.actor, kb.seen(conn))
        result.added = text
        bump_generation(conn, segment)
        record_audit(conn, kb.actor, "upsert_fact", segment.name,
                     {"fact": text, "replaced": result.removed, "kept": result.kept})
    return result
