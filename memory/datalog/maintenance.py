"""Incremental maintenance: an evaluated model brought up to date with its base facts' changes.

Delete and rederive (DRed; Gupta, Mumick and Subrahmanian, 1993), one strongly connected component at a time:

1. Over-delete, on the model as it was: every tuple with some derivation that uses a removed base tuple or
   an over-deleted one (more than is really gone; never less).
2. Remove those, and let the base changes take effect.
3. Rederive and insert, component by component: an over-deleted tuple that one rule still derives from what
   remains comes back; then semi-naive rounds from everything new (rederived tuples, new base tuples, the
   new tuples of the components below) continue the fixpoint, as evaluation does.

A component whose rules read a changed predicate through negation or an aggregate cannot be maintained that
way (more input can mean fewer conclusions): it is recomputed whole from its base tuples, and so is everything
above it that reads it. Every tuple added gets a stamp above the model's stamps, so a stamp stays greater
than the stamps of its derivation's premises and proofs keep working on the maintained model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .analysis import Strata, dependency_graph
from .budget import Budget
from .engine import Model, evaluate_component, guarded, seeded_variants, semi_naive_rounds
from .matching import BodyMatcher
from .predicates import Pred
from .program import Rule, rules_by_head
from .relations import RULE_BITS, StoredRelation


@dataclass
class BaseChange:
    """How a stored predicate's base tuples changed since the model read them."""

    added: list = field(default_factory=list)  # new tuples (a tuple the model already has is harmless)
    removed: set = field(default_factory=set)  # tuples gone
    relation: StoredRelation | None = None  # the relation to read from now on, when it is a new object


def base_copies(rules: list[Rule]) -> dict[Pred, list[Pred]]:
    """The demand rewrite's adorned copies of each predicate that rules define: they start from its base facts
    too (see `queries._evaluate_for`)."""
    copies: dict = {}
    for rule in rules:
        head = rule.head.pred
        if head.is_adorned and head not in copies.get(head.original, ()):
            copies.setdefault(head.original, []).append(head)
    return copies


def maintain(model: Model, strata: Strata, changes: dict[Pred, BaseChange], budget: Budget) -> set[Pred]:
    """Bring `model` (evaluated from `model.rules` with `strata`) up to date with `changes` to its stored
    predicates, within `budget`; the predicates whose tuples changed. On an error the model is left half
    changed: drop it."""
    return guarded(lambda: _maintain(model, strata, changes, budget.start()), budget)


def _maintain(model: Model, strata: Strata, changes: dict[Pred, BaseChange], budget: Budget) -> set[Pred]:
    rels = model.relations
    rels.hold()
    index_of = {id(rule): i for i, rule in enumerate(model.rules, 1)}
    by_head = rules_by_head(model.rules)
    gone, new_base = _base_effects(model, changes)
    recompute = _recomputed(strata, model.rules, set(gone) | set(new_base))

    # 1. Over-delete, reading the model as it was.
    doomed: dict = {pred: dict(tuples) for pred, tuples in gone.items()}
    for component in strata.components:
        rules = [rule for pred in component for rule in by_head.get(pred, ())]
        if not rules:
            continue
        preds = set(component)
        if component[0] in recompute:
            for pred in preds:  # every derived tuple goes; recomputing brings back what holds
                doomed.setdefault(pred, {}).update((t, c) for t, c in rels.rel.get(pred, {}).items() if c)
            continue
        below = {p for p, tuples in doomed.items() if tuples and p not in preds}
        delta = {pred: {} for pred in preds}
        _over_delete(seeded_variants(rules, below, rels, index_of, budget), doomed, doomed, delta, rels, budget)
        for pred in preds:
            delta[pred].update(doomed.get(pred, {}))
        variants = seeded_variants(rules, preds, rels, index_of, budget)
        while any(delta.values()):
            for pred, tuples in delta.items():
                doomed.setdefault(pred, {}).update(tuples)
            seeds, delta = delta, {pred: {} for pred in preds}
            _over_delete(variants, seeds, doomed, delta, rels, budget)

    # 2. Remove them; the base changes take effect.
    for pred, change in changes.items():
        if change.relation is not None and pred in rels.shared:
            rels.replace(pred, change.relation)
    for pred, tuples in doomed.items():
        if tuples and pred not in rels.shared:
            rels.remove(pred, tuples)
    added: dict = {}  # per predicate: what is in the model now that was not after step 2
    for pred, tuples in new_base.items():
        relation = rels.rel[pred]
        if pred in rels.shared:  # read in place: the new tuples are in it already
            added[pred] = dict.fromkeys(tuples, 0)
            continue
        relation = rels.writable(pred)
        fresh = {}
        for t in tuples:
            if t in relation:
                relation[t] = 0  # a derived tuple now stored as well: a base fact, as evaluation loads it
            else:
                fresh[t] = 0
        rels.add(pred, fresh, budget)
        added[pred] = fresh

    # 3. Rederive and insert, component by component.
    counter = model.iterations
    work: dict = {}
    for component, recursive in zip(strata.components, strata.recursive):
        rules = [rule for pred in component for rule in by_head.get(pred, ())]
        if not rules:
            continue
        preds = set(component)
        if component[0] in recompute:
            before = {pred: set(rels.rel.get(pred, ())) for pred in preds}
            counter = evaluate_component(preds, rules, recursive, rels, index_of, budget, counter)
            for pred in preds:
                added[pred] = {t: c for t, c in rels.rel[pred].items() if t not in before[pred]} | added.get(pred, {})
            continue
        below = {p for p, tuples in added.items() if tuples and p not in preds}
        candidates = {pred: doomed[pred] for pred in preds if doomed.get(pred)}
        if not below and not candidates and not any(added.get(pred) for pred in preds):
            continue
        counter += 1
        first: dict = {pred: {} for pred in preds}
        if candidates:
            _rederive(rules, candidates, first, rels, index_of, budget, counter)
        stamp = counter << RULE_BITS
        for compiled, seed_pred, head, rule_index in seeded_variants(rules, below, rels, index_of, budget):
            budget.tick(compiled.fire(added[seed_pred], known=(rels.rel[head],), into=first[head],
                                      code=stamp | rule_index))
        for pred in preds:
            rels.add(pred, first[pred], budget)
            first[pred].update(added.get(pred, {}))
        collect = {pred: dict(first[pred]) for pred in preds}
        if recursive:
            variants = seeded_variants(rules, preds, rels, index_of, budget)
            counter = semi_naive_rounds(preds, variants, first, rels, budget, counter, work, collect)
        added.update(collect)
    model.iterations = counter
    rels.let_go()
    return {p for p, t in doomed.items() if t} | {p for p, t in added.items() if t}


def _base_effects(model: Model, changes: dict[Pred, BaseChange]) -> tuple[dict, dict]:
    """Per predicate of the model, the base tuples that go (with their codes) and the ones that come: a
    stored predicate's changes apply to it and to its adorned copies."""
    rels = model.relations
    copies = base_copies(model.rules)
    gone: dict = {}
    new_base: dict = {}
    for pred, change in changes.items():
        for target in (pred, *copies.get(pred, ())):
            relation = rels.rel.get(target)
            if relation is None:
                continue
            removed = {t: 0 for t in change.removed if relation.get(t) == 0}
            if removed:
                gone[target] = removed
            if change.added:
                new_base[target] = change.added
    return gone, new_base


def _recomputed(strata: Strata, rules: list[Rule], changed: set) -> set:
    """The predicates recomputed whole: those whose rules read, through negation or an aggregate, something
    the changes can reach, and those reading a recomputed one."""
    graph = dependency_graph(rules)
    reached = set(changed)
    recompute: set = set()
    for component in strata.components:
        edges = [edge for pred in component for edge in graph.get(pred, ())]
        if any(negative and target in reached for target, negative, _ in edges) or \
                any(target in recompute for target, _, _ in edges):
            recompute.update(component)
        if any(target in reached for target, _, _ in edges):
            reached.update(component)
    return recompute


def _over_delete(variants: list, seeds: dict, doomed: dict, into: dict, rels, budget: Budget) -> None:
    """The derived tuples the model holds that the `variants` derive from `seeds`, not `doomed` yet (a base
    tuple stays: only its own removal takes it away)."""
    for compiled, seed_pred, head, _ in variants:
        tuples = seeds.get(seed_pred)
        if not tuples:
            continue
        found: dict = {}
        budget.tick(compiled.fire(tuples, known=(), into=found))
        relation = rels.rel.get(head, {})
        already = doomed.get(head, {})
        into[head].update((t, code) for t in found if (code := relation.get(t)) and t not in already)


def _rederive(rules: list[Rule], candidates: dict, into: dict, rels, index_of: dict, budget: Budget,
              counter: int) -> None:
    """The over-deleted tuples that one rule still derives from what remains, stamped `counter`."""
    matcher = BodyMatcher(rels.rel, budget, rels.indexes)
    stamp = counter << RULE_BITS
    for rule in rules:
        head = rule.head.pred
        relation = rels.rel[head]
        for t in candidates.get(head, ()):
            if t not in relation and t not in into[head] and matcher.derivation(rule, t, counter) is not None:
                into[head][t] = stamp | index_of[id(rule)]
