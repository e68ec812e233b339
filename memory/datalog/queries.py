"""Goals against a program: answers with pagination, and proofs of single facts."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Callable, Iterator

from ..errors import InvalidArguments, InvalidProgram
from ..terms import Compound, Term, Var, format_term, is_ground, variables
from .analysis import Strata, check_safety, stratify
from .budget import Budget
from .builtins import order_key
from .demand import magic_rewrite
from .engine import EdbLoader, Model, evaluate, guarded, settled
from .maintenance import BaseChange, base_copies, maintain
from .predicates import Pred
from .program import Lit, Normalizer, Program, Rule, SourceRule, body_preds, predicate_key, rules_by_head
from .proofs import ProofBuilder, ProofNode
from .relations import RULE_BITS, release

SORT_RUN = 200_000  # answers sorted in one call at most (about 50 ms)


@dataclass
class Answers:
    variables: list[str]
    rows: list[tuple]  # the page, in standard order of terms
    total: int
    truncated: bool
    iterations: int
    derived: int
    memory: str = ""  # filled in by the service that asked
    goal: str = ""
    warnings: list[str] = field(default_factory=list)  # the service's: calls that nothing defines


def relevant_rules(rules: list[Rule], roots: set) -> list[Rule]:
    """Only the rules the roots depend on."""
    by_head = rules_by_head(rules)
    needed, stack = set(), list(roots)
    while stack:
        pred = stack.pop()
        if pred in needed:
            continue
        needed.add(pred)
        for rule in by_head.get(pred, ()):
            stack.extend(body_preds([rule]))
    return [r for r in rules if r.head.pred in needed]


def answer_variables(goal: Term) -> Iterator[Var]:
    """The variables a query answers with, left to right: as in Prolog, a variable that occurs only
    inside a negation or inside an aggregate's goal is local to it (`aggregate_all(count, p(X), N)`
    answers N alone); an aggregate's result is answered."""
    stack = [goal]
    while stack:
        term = stack.pop()
        if type(term) is Compound:
            name, arity = term.functor, len(term.args)
            if name in ("\\+", "not") and arity == 1:
                continue
            if name == "aggregate_all" and arity == 3:
                stack.append(term.args[2])
                continue
            if name in (",", ";") and arity == 2:
                stack.extend(reversed(term.args))
                continue
        yield from variables(term)


def _with_goal(program: Program, goal: Term) -> tuple[Program, list[Rule], list[Var]]:
    """A copy of the program with the rule `$query(Vars) :- Goal`."""
    names = []
    for v in answer_variables(goal):
        if not v.anonymous and v not in names:
            names.append(v)
    extended = Program(list(program.sources), list(program.rules), program.auxiliaries)
    normalizer = Normalizer(extended)
    text = format_term(goal)
    source = len(extended.sources)
    extended.sources.append(SourceRule(f"?- {text}", goal))
    head = Lit(Pred.auxiliary("query", len(names)), tuple(names))
    before = len(extended.rules)
    normalizer.add_rules(head, goal, source, f"?- {text}")
    for rule in extended.rules[before:]:
        check_safety(rule, extended)
    roots = [r for r in extended.rules[before:] if r.head.pred == head.pred]
    return extended, roots, names


def _demanded(extended: Program, roots: list[Rule], factor: bool, through_aggregates: bool) -> list[Rule]:
    """The magic-set rewrite of the program for the query's root rules, checked to be stratified."""
    head = roots[0].head.pred
    rules: list[Rule] = []
    base = [r for r in extended.rules if r.head.pred != head]
    for root in roots:
        for rule in magic_rewrite(base, root, factor=factor, through_aggregates=through_aggregates):
            if rule not in rules:
                rules.append(rule)
    stratify(extended, rules)  # raises for unstratifiable goals (e.g. through negation)
    return rules


def _evaluate_for(extended: Program, roots: list[Rule], load: EdbLoader, budget: Budget | None,
                  demand: bool, factor: bool) -> tuple[Model, list[Rule]]:
    head = roots[0].head.pred
    if demand:
        try:
            rules = _demanded(extended, roots, factor, through_aggregates=True)
        except InvalidProgram:  # demand into an aggregate closed a cycle through it: compute its goal in full
            rules = _demanded(extended, roots, factor, through_aggregates=False)
    else:
        rules = relevant_rules(extended.rules, {head})
        stratify(extended, rules)  # raises for unstratifiable goals (e.g. through negation)
    wanted = {p.original for p in body_preds(rules) | {r.head.pred for r in rules}}
    edb = load({p for p in wanted if p.is_stored})  # stored facts, never internal predicates
    # Base facts of a predicate that also has rules belong to each adorned copy too.
    for original, copies in base_copies(rules).items():
        if original in edb:
            for copy in copies:
                edb.setdefault(copy, edb[original])
    model = evaluate(extended, edb, rules=rules, budget=budget)
    return model, rules


PointLookup = Callable[[Pred, tuple], "list[tuple] | None"]  # (stored predicate, leading ground arguments) -> tuples


def _lookup_edb(program: Program, roots: list[Rule], lookup: PointLookup | None) -> dict | None:
    """For a goal that is one call of a stored predicate no rule defines, with its first arguments ground
    (`edge(a, X)`, `edge(a, b)`, `done`): the only tuples it can match, from `lookup` (the store's indexes),
    instead of the whole relation. None when the goal is anything else or the store cannot say."""
    if lookup is None or len(roots) != 1 or len(roots[0].body) != 1 or type(roots[0].body[0]) is not Lit:
        return None
    literal = roots[0].body[0]
    pred = literal.pred
    if not pred.is_stored or any(rule.head.pred is pred for rule in program.rules):
        return None
    leading = []
    for arg in literal.args:
        if not is_ground(arg):
            break
        leading.append(arg)
    if pred.arity and not leading:
        return None
    tuples = lookup(pred, tuple(leading))
    return None if tuples is None else {pred: tuples}


@dataclass
class AllAnswers:
    """Every answer to a goal, in the standard order of terms, and what computing them took."""

    variables: list[str]
    rows: list[tuple]
    iterations: int
    derived: int

    def page(self, limit: int | None = None, offset: int = 0) -> Answers:
        total = len(self.rows)
        end = total if limit is None else offset + limit
        return Answers(self.variables, self.rows[offset:end], total, end < total, self.iterations, self.derived)


@dataclass
class Evaluation:
    """A goal's evaluated model, kept so that the next time the goal is asked it is brought up to date with
    its base facts' changes (`maintenance`) instead of evaluated again."""

    answers: AllAnswers
    model: Model
    strata: Strata
    head: Pred  # the query's answers

    def update(self, changes: dict[Pred, BaseChange], budget: Budget | None = None) -> AllAnswers:
        """The answers after `changes` to the stored predicates. After an error the evaluation is unusable:
        `release` it."""
        if changes and self.head in maintain(self.model, self.strata, changes, budget or Budget()):
            self.answers = _answers(self.answers.variables, settled(self.model, self.head, budget), self.head)
        return self.answers

    def size(self) -> int:
        """Tuples held: the answers and the model's own relations (not the stored ones it reads in place)."""
        rels = self.model.relations
        return len(self.answers.rows) + sum(rels.size(p) for p in rels.raw if p not in rels.shared)

    def release(self) -> None:
        """Free the model (not the answers, which may still be read)."""
        self.model.release()


def solve_all(program: Program, goal: Term, load: EdbLoader, *, budget: Budget | None = None, demand: bool = True,
              lookup: PointLookup | None = None) -> AllAnswers:
    """Every answer to `goal`. `lookup`, when given, answers a single call of a stored predicate with bound first
    arguments from the store's indexes (`_lookup_edb`)."""
    answers, evaluation = solve_kept(program, goal, load, budget=budget, demand=demand, lookup=lookup)
    if evaluation is not None:
        evaluation.release()  # a big model freed gradually, not in one stall of the other threads
    return answers


def solve_kept(program: Program, goal: Term, load: EdbLoader, *, budget: Budget | None = None, demand: bool = True,
               lookup: PointLookup | None = None) -> tuple[AllAnswers, Evaluation | None]:
    """Every answer to `goal` (see `solve_all`), and the evaluation that gave them, for `Evaluation.update`: None
    when the store's indexes answered or there was nothing to evaluate."""
    extended, roots, names = _with_goal(program, goal)
    variables = [v.name for v in names]
    if not roots:
        return AllAnswers(variables, [], 0, 0), None
    edb = _lookup_edb(program, roots, lookup)
    head = roots[0].head.pred
    if edb is not None:
        model = evaluate(extended, edb, rules=roots, budget=budget)
        answers = _answers(variables, model, head)
        model.release()
        return answers, None
    model, rules = _evaluate_for(extended, roots, load, budget, demand, factor=True)
    answers = _columnar_answers(variables, model, head, budget) or _answers(
        variables, settled(model, head, budget), head)  # built within the budget
    model.relations.let_go()  # kept between uses: the stored relations it reads may grow in place meanwhile
    return answers, Evaluation(answers, model, stratify(extended, rules), head)


def _columnar_answers(variables: list[str], model: Model, head: Pred, budget: Budget | None) -> AllAnswers | None:
    """The answers straight from the columns a bulk evaluation derived them as (sorted there, the head's relation
    left as columns); None when they are not columns (the tuple path derived them)."""
    if model.relations.columnar is None:
        return None
    from .columnar.arrays import sorted_rows  # numpy is loaded already: the evaluation went columnar

    try:
        rows = guarded(lambda: sorted_rows(model.relations, head), budget)
    except BaseException:
        model.release()
        raise
    return None if rows is None else AllAnswers(variables, rows, model.iterations, model.derived)


def _answers(variables: list[str], model: Model, head: Pred) -> AllAnswers:
    """The query's answers in a model, in the standard order of terms."""
    return AllAnswers(variables, sort_standard(list(model.tuples(head))), model.iterations, model.derived)


def solve(program: Program, goal: Term, load: EdbLoader, *, limit: int | None = None, offset: int = 0,
          budget: Budget | None = None, demand: bool = True, lookup: PointLookup | None = None) -> Answers:
    """A page of the answers to `goal` in the standard order of terms (see `solve_all`)."""
    everything = solve_all(program, goal, load, budget=budget, demand=demand, lookup=lookup)
    answers = everything.page(limit, offset)
    release(everything.rows)
    return answers


def sort_standard(tuples: list) -> list:
    """Sort answer tuples in the standard order of terms.

    Python's own order equals the standard order among integers and among atoms, and
    comparing anything else (an integer with an atom, floats, strings, compounds)
    raises TypeError; so a plain sort either succeeds with the right order or fails
    and we sort again with the full standard-order key."""
    if len(tuples) > SORT_RUN:
        # One sort call holds the interpreter lock throughout; sorted runs merged in Python let
        # the server's other threads (its protocol loop) in between.
        runs = [sort_standard(tuples[i:i + SORT_RUN]) for i in range(0, len(tuples), SORT_RUN)]
        try:
            return list(heapq.merge(*runs, key=_plain_key(tuples)))
        except TypeError:
            return list(heapq.merge(*runs, key=_standard_key))
    try:
        tuples.sort(key=_plain_key(tuples))
    except TypeError:
        tuples.sort(key=_standard_key)
    return tuples


def _plain_key(tuples: list):
    return itemgetter(0) if tuples and len(tuples[0]) == 1 else None


def _standard_key(t: tuple) -> tuple:
    return tuple(order_key(x) for x in t)


def explain(program: Program, fact: Term, load: EdbLoader, *, max_depth: int | None = None,
            budget: Budget | None = None) -> ProofNode | None:
    """The proof tree of a ground goal, or None when it does not hold."""
    if not is_ground(fact):
        raise InvalidArguments(f"explain needs a ground fact, got {format_term(fact)}")
    if type(fact) not in (str, Compound):
        raise InvalidArguments(f"{format_term(fact)} is not a fact")
    pred, args = predicate_key(fact, "explain")
    extended, roots, _ = _with_goal(program, fact)
    budget = budget or Budget()
    model, rules = _evaluate_for(extended, roots, load, budget, demand=True, factor=False)
    merged, indexes = _by_original(settled(model, None, budget))
    return ProofBuilder(extended, model.rules, merged, budget, indexes).prove(pred, args, 1, max_depth)


def _by_original(model: Model) -> tuple[dict, dict]:
    """The model's relations per original predicate, the demand rewrite's adorned copies merged (a tuple keeps its
    earliest stamp), and the indexes already built over those that needed no merging: a stored relation is read
    in place, indexes and all, not copied."""
    keys: dict = {}
    for key in model.relations.rel:
        keys.setdefault(key.original, []).append(key)
    merged, indexes = {}, {}
    for original, group in keys.items():
        if group == [original]:
            merged[original] = model.relations.rel[original]
            indexes[original] = model.relations.indexes.setdefault(original, {})
            continue
        target = merged[original] = {}
        for key in group:
            for t, code in model.relations.rel[key].items():
                old = target.get(t)
                if old is None or (code >> RULE_BITS) < (old >> RULE_BITS):
                    target[t] = code
    return merged, indexes
