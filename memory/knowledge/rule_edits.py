"""Removing a rule: forget_rule, one audited transaction, and the conclusions that stopped holding.

Conclusions are not stored facts with supports: they hold while a proof exists. Removing a rule bumps the
segment's generation, so every answer, kept evaluation and materialized row made before is recomputed or
marked stale; what the caller is told is which conclusions of the rule's head predicate no longer hold."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import InvalidArguments, NotFound
from ..store.repository import RuleRow, Transaction
from ..terms import Compound, format_term, parse_term
from .consequences import Consequences, Withdrawn
from .parsing import parse_rule
from .segments import Segment, bump_generation, resolve

if TYPE_CHECKING:
    from .base import KnowledgeBase


@dataclass
class RuleRemoval:
    rule: str
    rule_id: int
    memory: str
    name: str | None
    head: str  # functor/arity
    withdrawn: Withdrawn = field(default_factory=Withdrawn)  # the conclusions that stopped holding


def forget_rule(kb: KnowledgeBase, memory: str | None, *, rule: str | None = None, rule_id: int | None = None,
                name: str | None = None) -> RuleRemoval:
    """Remove one rule, named by its text (`Head :- Body`), its id or its name: exactly one of them."""
    given = [key for key, value in (("rule", rule), ("rule_id", rule_id), ("name", name)) if value is not None]
    if len(given) != 1:
        raise InvalidArguments("name the rule by exactly one of rule, rule_id or name"
                               + (f" (got {', '.join(given)})" if given else ""), arguments=given)
    with kb.repository.read() as tx:
        segment = resolve(tx, memory, write=True)
        row = _find(tx, segment, rule, rule_id, name)
    consequences = Consequences(kb, segment.name, {(row.head_functor, row.head_arity)})
    with kb.repository.write() as tx:
        segment = resolve(tx, memory, write=True)
        current = _find(tx, segment, rule, rule_id, name)  # still there, unchanged, in this transaction
        tx.rules.delete(current.id)
        bump_generation(tx, segment)
        tx.audit.record(kb.actor, "forget_rule", segment.name, {
            "rule": current.text, "rule_id": current.id, "name": current.name})
    return RuleRemoval(current.text, current.id, segment.name, current.name,
                       f"{current.head_functor}/{current.head_arity}", consequences.withdrawn())


def _find(tx: Transaction, segment: Segment, rule: str | None, rule_id: int | None, name: str | None) -> RuleRow:
    if rule is not None:
        text = format_term(parse_rule(*_split(rule)))
        found, described = tx.rules.by_text(segment.id, text), f"rule {text}"  # an index probe, as define_rule
    else:
        rows = tx.rules.all(segment.id)
        if rule_id is not None:
            found, described = next((r for r in rows if r.id == rule_id), None), f"rule id {rule_id}"
        else:
            found, described = next((r for r in rows if r.name == name), None), f"rule named {name}"
    if found is None:
        raise NotFound(f"No {described} in memory '{segment.name}' (list_rules shows its rules and their ids)",
                       memory=segment.name)
    return found


def _split(rule: str) -> tuple[str, str]:
    """`Head :- Body` as the two texts parse_rule checks, without splicing: the parser finds the neck."""
    term = parse_term(rule.strip())
    if not (isinstance(term, Compound) and term.functor == ":-" and len(term.args) == 2):
        raise InvalidArguments("'rule' must be a rule Head :- Body, as list_rules prints it", argument="rule")
    return format_term(term.args[0]), format_term(term.args[1])
