"""Facts with their supports and rules: remembered, forgotten, imported, listed."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog import Normalizer, analyze
from ..errors import Conflict, InvalidArguments, NotFound
from ..store.repository import IMPORT_BATCH, NewFact, new_fact
from typing import Callable, Iterable

from ..terms import Term, format_term, indicator
from ..validation import require_name
from .parsing import parse_fact, parse_rule
from .segments import bump_generation, resolve

from .core import KnowledgeCore, _check_page


@dataclass
class FactChange:
    fact: str
    memory: str
    created: bool  # a new fact row (it was not believed before)
    removed: bool = False  # forgetting removed its last support
    supports: list[str] = field(default_factory=list)  # what still supports it
    added: bool = True  # remembering added its 'asserted' support (False: it was asserted already)


@dataclass
class RuleChange:
    rule: str
    memory: str
    created: bool
    rule_id: int
    name: str | None = None
    confidence: float = 1.0
    warnings: list[str] = field(default_factory=list)  # body calls that nothing defines


@dataclass
class Page:
    items: list[dict]
    total: int
    limit: int
    offset: int

    @property
    def truncated(self) -> bool:
        return self.offset + len(self.items) < self.total


def _why_not_stored(tx, segment_id: int, term: Term) -> str:
    """What a forget of a conclusion should do instead: it goes with what it rests on. Nothing for any other fact
    that is not stored (the reference's message says it as it is)."""
    functor, arity = indicator(term)
    if arity in tx.rules.head_arities(segment_id, functor):
        return (f" ({functor}/{arity} is defined by rules: a conclusion is not stored; forget a stored fact it "
                "rests on (explain_why lists them) or the rule (forget_rule))")
    return ""


class FactsAndRules(KnowledgeCore):
    """Writes and listings of facts and rules."""

    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            seen = self.visibility(tx)
            fact_id, created, added = tx.facts.support(segment.id, new_fact(term), "asserted", "", self.actor, seen)
            if added:  # remembering what is already asserted writes nothing
                bump_generation(tx, segment)  # a new support can make the fact visible to someone
                tx.audit.record(self.actor, "remember_fact", segment.name, {"fact": text, "created": created})
            supports = tx.supports.of(fact_id, seen)
        return FactChange(text, segment.name, created, supports=supports, added=added)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            seen = self.visibility(tx)
            fact_id = tx.facts.find(segment.id, text, seen)
            if fact_id is None:
                raise NotFound(f"No matching clause found for: {text}{_why_not_stored(tx, segment.id, term)}",
                               fact=text, memory=segment.name, plain=True)
            dropped = tx.supports.remove(fact_id, "asserted")
            supports = tx.facts.release(fact_id, seen)
            removed = not supports
            if dropped or removed:  # what other callers see may change with any support
                bump_generation(tx, segment)
            tx.audit.record(self.actor, "forget_fact", segment.name,
                            {"fact": text, "removed": removed, "remaining_supports": supports})
        return FactChange(text, segment.name, False, removed=removed, supports=supports)

    def add_facts(self, terms: Iterable[Term | NewFact], memory: str | None = None, operation: str = "import_facts",
                  batch: int = IMPORT_BATCH, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Assert many checked facts in one transaction with one audit row; returns (new, already there).

        `terms` are checked facts, as terms or already in stored form (knowledge/parsing.py plain_row). They
        are read as they are stored, `batch` at a time (memory/store/repository/facts.py assert_all), so a
        file's rows stream through in bounded memory; an error it raises part-way changes nothing."""
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            rows = (t if isinstance(t, NewFact) else new_fact(t) for t in terms)  # a reader may give stored forms
            added, read = tx.facts.assert_all(segment.id, rows, self.actor, self.visibility(tx), batch, progress)
            if added:
                bump_generation(tx, segment)
            tx.audit.record(self.actor, operation, segment.name, {"facts": read, "added": added})
        return added, read - added

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            seen = self.visibility(tx)
            total = tx.facts.count(segment.id, seen, functor, arity)
            rows = tx.facts.listing(segment.id, seen, functor, arity, limit, offset)  # type: ignore[arg-type]
        items = [{"id": r.id, "fact": r.text, "created_at": r.created_at, "supports": r.supports} for r in rows]
        return Page(items, total, limit, offset)  # type: ignore[arg-type]

    def define_rule(self, head: str, body: str, memory: str | None = None, name: str | None = None,
                    confidence: float | None = None) -> RuleChange:
        """Add a rule; `name` (an atom, unique in the segment) and `confidence` in (0, 1] are what the
        evidence tools report and weigh it by."""
        clause = parse_rule(head, body)
        text = format_term(clause)
        if name is not None:
            name = require_name("name", name)
        if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                                       or not 0 < confidence <= 1):
            raise InvalidArguments("'confidence' must be a number in (0, 1]", argument="confidence")
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            if name is not None:
                other = tx.rules.text_named(segment.id, name, text)
                if other is not None:
                    raise Conflict(f"Rule name '{name}' is already used by: {other}", name=name)
            row = tx.rules.by_text(segment.id, text)
            if row is not None:  # already defined: only a new name or confidence is written
                rule_id, old_name, old_confidence = row.id, row.name, row.confidence
                new_name = old_name if name is None else name
                new_confidence = old_confidence if confidence is None else float(confidence)
                if (new_name, new_confidence) != (old_name, old_confidence):
                    tx.rules.set_options(rule_id, new_name, new_confidence)
                    tx.audit.record(self.actor, "define_rule", segment.name, {
                        "rule": text, "created": False, "rule_id": rule_id, "name": new_name,
                        "confidence": new_confidence})
                warnings = self.undefined_calls(tx, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
                return RuleChange(text, segment.name, False, rule_id, new_name, new_confidence, warnings)
            program = self.build_program(tx, segment)
            normalizer = Normalizer(program)
            normalizer.add_clause(clause, text)
            analyze(program)  # the whole program must stay safe and stratified
            warnings = self.undefined_calls(tx, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
            functor, arity = indicator(clause.args[0])  # type: ignore[union-attr]
            rule_id = tx.rules.add(segment.id, functor, arity, text, name,
                                   1.0 if confidence is None else float(confidence))
            bump_generation(tx, segment)
            tx.audit.record(self.actor, "define_rule", segment.name, {
                "rule": text, "created": True, "rule_id": rule_id, "name": name, "confidence": confidence})
        return RuleChange(text, segment.name, True, rule_id, name, 1.0 if confidence is None else float(confidence),
                          warnings)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            total = tx.rules.count(segment.id)
            rows = tx.rules.page(segment.id, limit, offset)  # type: ignore[arg-type]
        items = [{"id": r.id, "rule": r.text, "head": f"{r.head_functor}/{r.head_arity}", "created_at": r.created_at,
                  "name": r.name, "confidence": r.confidence} for r in rows]
        return Page(items, total, limit, offset)  # type: ignore[arg-type]
