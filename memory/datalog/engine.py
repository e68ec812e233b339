"""Bottom-up semi-naive evaluation, one strongly connected component at a time."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

from .analysis import Strata, stratify
from ..errors import BudgetExceeded, Cancelled
from .budget import Budget, give_back_memory
from .columnar import DispatchingRule
from .predicates import Pred
from .program import Lit, Program, Rule, body_preds, rules_by_head
from .relations import EMPTY, RULE_BITS, RULE_MASK, Relations, release

T = TypeVar("T")
EdbLoader = Callable[[set], dict]  # stored predicates -> {pred: iterable of tuples}


@dataclass(frozen=True, slots=True)
class Provenance:
    """How a tuple came to be: the rule that first derived it (None for a base fact) and its stamp, which is
    greater than the stamps of that derivation's premises (0 for a base fact)."""

    rule: Rule | None
    stamp: int

    @property
    def derived(self) -> bool:
        return self.rule is not None


@dataclass
class Model:
    """The result of an evaluation: relations with provenance, and the rules they cite."""

    relations: Relations
    rules: list[Rule]  # rules[i - 1] produced the tuples whose code has rule index i
    iterations: int
    derived: int = 0  # tuples derived (not counting base facts)

    def tuples(self, pred: Pred):
        """The tuples of a predicate (a set-like view; empty when the model has none)."""
        relation = self.relations.find(pred)
        return relation.keys() if relation is not None else {}.keys()

    def count(self, pred: Pred) -> int:
        """How many tuples the model holds for a predicate (none turned into Python tuples to count them)."""
        return self.relations.size(pred) if pred in self.relations.raw else 0

    def predicates(self) -> list[Pred]:
        """Every predicate the model holds tuples for (or was asked about)."""
        return list(self.relations.raw)

    def provenance(self, pred: Pred, t: tuple) -> Provenance | None:
        """The rule and stamp of a tuple, or None when the model does not hold it."""
        code = (self.relations.find(pred) or {}).get(t)
        return None if code is None else self._provenance(code)

    def derivations(self, pred: Pred) -> Iterator[tuple[tuple, Provenance]]:
        """The derived (not stored) tuples of a predicate with their provenance."""
        decode = self._provenance
        for t, code in (self.relations.find(pred) or {}).items():
            if code:
                yield t, decode(code)

    def _provenance(self, code: int) -> Provenance:
        index = code & RULE_MASK
        return Provenance(self.rules[index - 1] if index else None, code >> RULE_BITS)

    def release(self) -> None:
        """Free the model's relations a slice at a time (see `relations.release`): a big model dropped at
        once would stall the other threads."""
        self.relations.release()


def evaluate_program(program: Program, load: EdbLoader, budget: Budget | None = None) -> Model:
    """The whole model of an analyzed program: every stored predicate its rules mention, read through
    `load`, then evaluated within `budget` (whose clock, once started, also counts the loading)."""
    preds = body_preds(program.rules) | {rule.head.pred for rule in program.rules}
    model = evaluate(program, load({p for p in preds if p.is_stored}), budget=budget)
    return settled(model, None, budget)  # its readers read every relation


def settled(model: Model, pred: Pred | None, budget: Budget | None) -> Model:
    """The model with a pred's deferred tuples (every relation's, without `pred`) turned into tuples within
    `budget`; on a failure the model is freed."""
    try:
        guarded(lambda: model.relations.settle(pred, budget), budget)
    except BaseException:
        model.release()
        raise
    return model


def evaluate(
    program: Program,
    edb: dict,
    rules: list[Rule] | None = None,
    budget: Budget | None = None,
    strata: Strata | None = None,
) -> Model:
    """Compute the least (stratified) model of `rules` over the base tuples in `edb`."""
    return guarded(lambda: _evaluate(program, edb, rules, budget, strata), budget)


def guarded(run: Callable[[], T], budget: Budget | None) -> T:
    """`run()` with the cyclic garbage collector paused, and a failure's memory given back at once.

    Millions of new tuples would trigger the collector over and over, yet tuples of atoms and numbers never
    form cycles. A failure's traceback holds the frames that hold the partial model: it is dropped before the
    memory is given back; running out of memory is reported as the memory budget."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return run()
    except (BudgetExceeded, Cancelled, MemoryError) as exc:
        failure = exc
    finally:
        if was_enabled:
            gc.enable()
    failure.__traceback__ = None
    if isinstance(failure, MemoryError):
        failure = (budget or Budget()).exceeded("memory_mb", "the system refused more memory", None)
    give_back_memory()
    raise failure


def _evaluate(program: Program, edb: dict, rules: list[Rule] | None, budget: Budget | None,
              strata: Strata | None) -> Model:
    rules = list(program.rules if rules is None else rules)
    if len(rules) >= (1 << RULE_BITS) - 1:
        raise ValueError("too many rules")
    budget = (budget or Budget()).start()
    strata = strata or stratify(program, rules)
    rels = Relations()
    for pred, tuples in edb.items():
        rels.load(pred, tuples)
    index_of = {id(rule): i for i, rule in enumerate(rules, 1)}
    by_head = rules_by_head(rules)
    counter = 0
    try:
        for component, recursive in zip(strata.components, strata.recursive):
            comp_rules = [r for pred in component for r in by_head.get(pred, ())]
            if not comp_rules:
                continue
            counter = evaluate_component(set(component), comp_rules, recursive, rels, index_of, budget, counter)
    except BaseException:
        rels.release()  # a failed model is dropped: free it without stalling the other threads
        raise
    if rels.columnar is not None:  # the mirrors served the evaluation; the model keeps its relations' deferred columns
        rels.columnar = rels.columnar.finish()
    return Model(rels, rules, counter, budget.derived)


def evaluate_component(preds: set, rules: list[Rule], recursive: bool, rels: Relations,
                       index_of: dict, budget: Budget, counter: int) -> int:
    """The rules of one component to their fixpoint over `rels`, stamps from `counter` on; the last stamp used."""
    work: dict = {}
    try:
        return _component_rounds(preds, rules, recursive, rels, index_of, budget, counter, work)
    except BaseException:
        release(work)  # the round's sets not yet merged into the relations
        raise


def _component_rounds(preds: set, rules: list[Rule], recursive: bool, rels: Relations,
                      index_of: dict, budget: Budget, counter: int, work: dict) -> int:
    """`work` names the big containers of the round in progress, for `release` after a failure."""
    for pred in preds:
        rels.writable(pred)
    exit_rules: list = []
    recursive_rules: list = []
    for rule in rules:
        recursive_rule = any(isinstance(lit, Lit) and lit.pred in preds for lit in rule.body)
        (recursive_rules if recursive_rule else exit_rules).append(rule)

    counter += 1
    first: dict = {pred: {} for pred in preds}
    work["first"] = first
    for rule in exit_rules:
        head = rule.head.pred
        added = DispatchingRule(rule, rels, None, budget).fire(
            known=(rels.raw[head],), into=first[head], code=(counter << RULE_BITS) | index_of[id(rule)])
        budget.tick(added)
    for pred in preds:
        rels.add(pred, first[pred], budget)
    if not recursive or not recursive_rules:
        return counter

    # Base facts of these predicates count as new in the first round too. A relation holding deferred columns is
    # its own first delta (nothing changes it while a round reads it), seeding columnar firings with its columns.
    delta: dict = {pred: rels.raw[pred] if rels.size(pred) != len(rels.raw[pred]) else dict(rels.raw[pred])
                   for pred in preds}
    variants = seeded_variants(recursive_rules, preds, rels, index_of, budget)
    if len(preds) == 1 and len(variants) == 1:
        return _single_variant_loop(variants[0], delta, rels, budget, counter, work)
    return semi_naive_rounds(preds, variants, delta, rels, budget, counter, work)


def seeded_variants(rules: list[Rule], seeds: set, rels: Relations, index_of: dict, budget: Budget) -> list:
    """Each rule compiled once per body position that calls one of the `seeds` predicates, to fire from that
    predicate's new tuples: (compiled rule, seed predicate, head predicate, rule index)."""
    variants = []
    for rule in rules:
        for position, lit in enumerate(rule.body):
            if isinstance(lit, Lit) and lit.pred in seeds:
                variants.append((DispatchingRule(rule, rels, position, budget), lit.pred, rule.head.pred,
                                 index_of[id(rule)]))
    return variants


def semi_naive_rounds(preds: set, variants: list, delta: dict, rels: Relations, budget: Budget, counter: int,
                      work: dict, collect: dict | None = None) -> int:
    """Rounds of the `variants` (see `seeded_variants`) from the new tuples `delta` of `preds` until none are new;
    the last stamp used. `collect`, when given, gathers every tuple added, per predicate."""
    while any(map(rels.count, delta.values())):
        counter += 1
        stamp = counter << RULE_BITS
        acc: dict = {pred: {} for pred in preds}
        work["acc"] = acc
        for compiled, seed_pred, head, rule_index in variants:
            seeds = delta[seed_pred]
            if rels.count(seeds):
                budget.tick(compiled.fire(seeds, known=(rels.raw[head],), into=acc[head], code=stamp | rule_index))
        for pred in preds:
            if collect is not None:
                rels.settle_set(acc[pred])
            rels.add(pred, acc[pred], budget)
            if collect is not None:
                collect[pred].update(acc[pred])
        delta = work["delta"] = acc
    return counter


SMALL_ROUND = 4096  # tuples one seed may yield that a round takes without slicing


def _single_variant_loop(variant, delta: dict, rels: Relations, budget: Budget, counter: int, work: dict) -> int:
    """The same fixpoint for one predicate with one recursive rule, without the bookkeeping
    for several heads: long chains run many small iterations, so per-iteration cost matters."""
    compiled, _, head, rule_index = variant
    fire = compiled.fire
    relation = rels.raw[head]
    indexed = bool(rels.indexes.get(head))
    seeds = delta[head]
    unchecked = 0  # tuples derived since the last budget check
    known = (relation,)
    direct = compiled.direct and not indexed
    fused, project = compiled.fused, compiled.project
    walk = compiled.lookup if direct else None
    count = rels.count
    while count(seeds):
        # The shortcuts below write to the dict itself: not while the relation holds deferred columns.
        chain = direct and len(seeds) == 1 and not rels.size(head) - len(relation)
        if walk is not None and chain:
            # A chain walked one tuple a round while each seed has exactly one match: the fused join's work
            # inline (one index lookup, one projection), none of its set building.
            get, i = walk
            (r,) = seeds
            start, walked = r, counter
            while len(bucket := get(r[i], EMPTY)) == 1:
                t = project(r + bucket[0])
                if t in relation:
                    bucket = EMPTY
                    break
                counter += 1
                relation[t] = (counter << RULE_BITS) | rule_index
                r = t
                if not counter & 1023:
                    budget.derived += counter - walked
                    walked = counter
                    budget.tick(0)
            budget.derived += counter - walked  # one tuple a round
            if not bucket:  # no match, or only a known tuple: the round that finds nothing new ends it
                counter += 1
                break
            if r is not start:  # several matches: the general round below takes the last tuple walked
                seeds = {r: relation[r]}
        counter += 1
        if chain:
            out = fused(seeds, project)
            if len(out) == 1:  # a chain: one new tuple a round, none of the set algebra or slicing
                t = out.pop()
                if t in relation:
                    break
                code = (counter << RULE_BITS) | rule_index
                relation[t] = code
                seeds = {t: code}
                budget.derived += 1
                unchecked += 1
                if not counter & 1023:
                    budget.tick(0)
                    unchecked = 0
                continue
            if not out:
                break
        if chain and len(out) <= SMALL_ROUND:
            new = dict.fromkeys(out.difference(relation), (counter << RULE_BITS) | rule_index)
            added = len(new)
        else:
            new = work["new"] = {}
            added = fire(seeds, known, new, (counter << RULE_BITS) | rule_index)
        if not added:
            break
        rels.add(head, new, budget)
        seeds = new
        budget.derived += added  # counted every round (each firing's room depends on it) ...
        unchecked += added
        if unchecked >= 1024 or not counter & 255:  # ... checked now and then: the clock costs more than a short round
            budget.tick(0)
            unchecked = 0
    budget.tick(0)
    return counter
