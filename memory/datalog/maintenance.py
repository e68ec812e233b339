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

from dataclasses import dataclass, field, replace
from itertools import combinations

from .analysis import Strata, dependency_graph
from .budget import Budget
from .compiler import CompiledRule
from .engine import Model, evaluate_component, guarded, seeded_variants, semi_naive_rounds
from .matching import BodyMatcher
from .predicates import Pred
from .program import Lit, Rule, rules_by_head
from .relations import RULE_BITS, Relations, StoredRelation


# About what rederiving one over-deleted tuple by a search costs, in tuples a component's evaluation derives
# for the same time: past that many candidates per tuple held, the component is evaluated again instead.
REDERIVE_COST = 32


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
    rels.settle(budget=budget)  # maintenance reads the relations as tuples: built within the budget
    gone, new_base = _base_effects(model, changes)
    # Stored relations read in place are read as they are now (changed in place, or replaced here), the model's
    # own relations as they were until step 2.
    for pred, change in changes.items():
        if change.relation is not None and pred in rels.shared:
            rels.replace(pred, change.relation)
    step = _Steps(model, strata, budget, _recomputed(strata, model.rules, set(gone) | set(new_base)))
    doomed = step.over_delete(gone)
    added = step.remove_and_add(doomed, new_base)
    model.iterations = step.rederive_and_insert(doomed, added, model.iterations)
    rels.let_go()
    return {p for p, t in doomed.items() if t} | {p for p, t in added.items() if t}


class _Steps:
    """The three steps over one model, component by component (see the module's docstring)."""

    def __init__(self, model: Model, strata: Strata, budget: Budget, recompute: set) -> None:
        self.rels = model.relations
        self.strata = strata
        self.budget = budget
        self.recompute = recompute  # the predicates recomputed whole (`_recomputed`)
        self.index_of = {id(rule): i for i, rule in enumerate(model.rules, 1)}
        self.by_head = rules_by_head(model.rules)

    def components(self):
        """(predicates, their rules, recursive?) of each component that has rules, dependencies first."""
        for component, recursive in zip(self.strata.components, self.strata.recursive):
            rules = [rule for pred in component for rule in self.by_head.get(pred, ())]
            if rules:
                yield set(component), rules, recursive

    def variants(self, rules: list[Rule], seeds: set) -> list:
        return seeded_variants(rules, seeds, self.rels, self.index_of, self.budget)

    def over_delete(self, gone: dict) -> dict:
        """1. Every tuple with a derivation that used a base tuple `gone` or another over-deleted one, per
        predicate, read from the model as it was."""
        rels = self.rels
        now_gone = {pred: tuples for pred, tuples in gone.items() if pred in rels.shared}
        doomed: dict = {pred: dict(tuples) for pred, tuples in gone.items()}
        for preds, rules, _ in self.components():
            if next(iter(preds)) in self.recompute:
                for pred in preds:  # every derived tuple goes; recomputing brings back what holds
                    doomed.setdefault(pred, {}).update((t, c) for t, c in rels.rel.get(pred, {}).items() if c)
                continue
            below = {p for p, tuples in doomed.items() if tuples and p not in preds}
            delta: dict = {pred: {} for pred in preds}
            variants = self.variants(rules, below) + _gone_together(rules, now_gone, rels, self.index_of, self.budget)
            _over_delete(variants, doomed, doomed, delta, rels, self.budget)
            for pred in preds:
                delta[pred].update(doomed.get(pred, {}))
            variants = self.variants(rules, preds)
            while any(delta.values()):
                for pred, tuples in delta.items():
                    doomed.setdefault(pred, {}).update(tuples)
                seeds, delta = delta, {pred: {} for pred in preds}
                _over_delete(variants, seeds, doomed, delta, rels, self.budget)
        return doomed

    def remove_and_add(self, doomed: dict, new_base: dict) -> dict:
        """2. The over-deleted tuples removed from the model's own relations, the new base tuples added; per
        predicate, what is in the model now that was not after the removal."""
        rels = self.rels
        for pred, tuples in doomed.items():
            if tuples and pred not in rels.shared:
                rels.remove(pred, tuples)
        added: dict = {}
        for pred, tuples in new_base.items():
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
            rels.add(pred, fresh, self.budget)
            added[pred] = fresh
        return added

    def rederive_and_insert(self, doomed: dict, added: dict, counter: int) -> int:
        """3. Per component, the over-deleted tuples that still hold come back and the fixpoint continues from
        everything new (`added` gains each component's new tuples); the last stamp used."""
        rels, budget = self.rels, self.budget
        work: dict = {}
        for preds, rules, recursive in self.components():
            candidates = {pred: doomed[pred] for pred in preds if doomed.get(pred)}
            if next(iter(preds)) in self.recompute or \
                    sum(map(len, candidates.values())) * REDERIVE_COST > sum(len(rels.rel[p]) for p in preds):
                # Its rules over what it holds now (its base tuples, or what survived): one evaluation, cheaper
                # than rederiving many tuples one search at a time.
                before = {pred: set(rels.rel.get(pred, ())) for pred in preds}
                counter = evaluate_component(preds, rules, recursive, rels, self.index_of, budget, counter)
                for pred in preds:
                    added[pred] = {t: c for t, c in rels.rel[pred].items() if t not in before[pred]} | \
                        added.get(pred, {})
                continue
            below = {p for p, tuples in added.items() if tuples and p not in preds}
            if not below and not candidates and not any(added.get(pred) for pred in preds):
                continue
            counter += 1
            first: dict = {pred: {} for pred in preds}
            if candidates:
                _rederive(rules, candidates, first, rels, self.index_of, budget, counter)
            stamp = counter << RULE_BITS
            for compiled, seed_pred, head, rule_index in self.variants(rules, below):
                budget.tick(compiled.fire(added[seed_pred], known=(rels.rel[head],), into=first[head],
                                          code=stamp | rule_index))
            for pred in preds:
                rels.add(pred, rels.settle_set(first[pred]), budget)  # read as a dict below
                first[pred].update(added.get(pred, {}))
            collect = {pred: dict(first[pred]) for pred in preds}
            if recursive:
                counter = semi_naive_rounds(preds, self.variants(rules, preds), first, rels, budget, counter, work,
                                            collect)
            added.update(collect)
        return counter


def _base_effects(model: Model, changes: dict[Pred, BaseChange]) -> tuple[dict, dict]:
    """Per predicate of the model, the base tuples that go (with their codes) and the ones that come: a
    stored predicate's changes apply to it and to its adorned copies. (A stored relation read in place may have
    lost them already.)"""
    rels = model.relations
    copies = base_copies(model.rules)
    gone: dict = {}
    new_base: dict = {}
    for pred, change in changes.items():
        for target in (pred, *copies.get(pred, ())):
            relation = rels.rel.get(target)
            if relation is None:
                continue
            removed = {t: 0 for t in change.removed if target in rels.shared or relation.get(t) == 0}
            if removed:
                gone[target] = removed
            if change.added:
                new_base[target] = change.added
    return gone, new_base


def _gone_together(rules: list[Rule], gone: dict, rels, index_of: dict, budget: Budget) -> list:
    """Variants for the derivations that used several tuples now gone from stored relations read in place: those
    relations no longer hold them, so a variant seeded with one of them would not meet the others. For each
    position calling such a relation, and each set of the other such positions, the rule with those positions
    reading only the gone tuples (a predicate made for each), seeded at the first."""
    variants = []
    for rule in rules:
        positions = [i for i, lit in enumerate(rule.body) if isinstance(lit, Lit) and lit.pred in gone]
        for seed in positions:
            others = [i for i in positions if i != seed]
            for size in range(1, len(others) + 1):
                for chosen in combinations(others, size):
                    view = Relations()
                    view.rel, view.indexes = dict(rels.rel), dict(rels.indexes)  # indexes built are filed as usual
                    body = list(rule.body)
                    for i in chosen:
                        lit = body[i]
                        body[i] = Lit(Pred.auxiliary("gone", lit.pred.arity), lit.args)
                        view.rel[body[i].pred] = gone[lit.pred]
                    compiled = CompiledRule(replace(rule, body=tuple(body)), view, seed, budget)
                    variants.append((compiled, rule.body[seed].pred, rule.head.pred, index_of[id(rule)]))
    return variants


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
