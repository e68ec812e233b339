"""The ways a rule's body holds in an evaluated model: the one backtracking matcher.

Proofs ask it for one derivation of a tuple whose premises all have smaller stamps (which
always exists and always ends, even for cyclic rules); confidence-weighted reasoning asks it
for every way a rule's body holds. A match is a list of premises in body order:
("lit", literal, tuple) for a relational literal and (kind, literal, text) for the others,
kind being "negation", "builtin" or "aggregate".
"""

from __future__ import annotations

from typing import Iterator

from ..terms import Compound, format_term, is_ground
from .aggregates import EMPTY_AGGREGATE, aggregate_value
from .builtin_table import check_builtin
from .builtins import order_key, resolve, unify
from .planner import order_body
from .program import Builtin, Lit, Neg, Rule, aggregate_term, literal_term
from .relations import RULE_BITS, build_index, index_key
from .rows import MISSING, match_pattern, term_getter


class BodyMatcher:
    """Matches rule bodies against relations {pred: {tuple: provenance code}}."""

    def __init__(self, relations: dict, budget=None, indexes: dict | None = None) -> None:
        """`indexes`: pred -> {columns: index} already built over those very relations (an evaluation's, kept
        warm with a stored relation); indexes built here are filed there too."""
        self.relations = relations
        self.budget = budget  # checked at every step: a search can backtrack a long time
        self.indexes: dict = {} if indexes is None else indexes
        self.ready: dict = {}  # (rule, remaining literals, bound variables) -> the literal to try next
        self.compiled: dict = {}  # builtin steps, per literal and bound variables (see `check_builtin`)

    @classmethod
    def over(cls, model, budget=None) -> "BodyMatcher":
        """A matcher over an evaluated model's relations."""
        return cls(model.relations.rel, budget, model.relations.indexes)

    def candidates(self, pred, args: tuple, binding: dict):
        """The tuples of `pred` that agree with the arguments bound under `binding` (a superset for
        arguments that are partly bound compound terms: unification decides)."""
        relation = self.relations.get(pred, {})
        key_cols, key = [], []
        for j, a in enumerate(args):
            value = resolve(a, binding)
            if is_ground(value):
                key_cols.append(j)
                key.append(value)
        if len(key_cols) == len(args):
            t = tuple(key)
            return [t] if t in relation else []
        if not key_cols:
            return relation.keys()  # a view: only the literal chosen is copied, when filtered by stamp
        cols = tuple(key_cols)
        per_pred = self.indexes.get(pred)
        if per_pred is None:
            per_pred = self.indexes[pred] = {}
        idx = per_pred.get(cols)
        if idx is None:
            idx = per_pred[cols] = build_index(relation, cols)
        return idx.get(index_key(tuple(key)), [])

    def derivation(self, rule: Rule, head: tuple, stamp: int) -> list | None:
        """Premises for one derivation of the tuple `head` by `rule`, each with a stamp below `stamp`:
        relational literals are tried most-selective first (fewest candidates under the current binding),
        candidates oldest first, other literals once their inputs are bound. None when there is none."""
        binding: dict = {}
        if not all(unify(pattern, value, binding) for pattern, value in zip(rule.head.args, head)):
            return None
        found = next(self._solve(rule, binding, stamp), None)
        return None if found is None else found[0]

    def matches(self, rule: Rule) -> Iterator[tuple[list, tuple]]:
        """Every way the rule's body holds, in the order of a join plan over the relations' sizes: the premises
        and the head tuple they derive."""
        order = order_body(rule, set(), lambda p: len(self.relations.get(p, ())))
        for premises, binding in self._solve(rule, {}, None, order):
            yield premises, tuple(resolve(a, binding) for a in rule.head.args)

    def _solve(self, rule: Rule, binding: dict, stamp: int | None,
               order: list | None = None) -> Iterator[tuple[list, dict]]:
        """The backtracking search: literals in the fixed `order` when given, else chosen at each step."""
        body = rule.body
        premises: list = [None] * len(body)

        def step(remaining: list, binding: dict) -> Iterator[tuple[list, dict]]:
            if not remaining:
                yield [p for p in premises if p is not None], binding
                return
            if self.budget is not None:
                self.budget.check()
            if order is not None:
                i = remaining[0]
                lit = body[i]
                cands = self.candidates(lit.pred, lit.args, binding) if isinstance(lit, Lit) else None
            else:
                i, cands = self._choose(rule, remaining, binding)
                lit = body[i]
            rest = [j for j in remaining if j != i]
            if isinstance(lit, Lit):
                if stamp is not None:
                    rel = self.relations.get(lit.pred, {})
                    cands = [t for t in cands if (rel[t] >> RULE_BITS) < stamp]
                    if len(cands) > 1:
                        cands.sort(key=lambda t: (rel[t] >> RULE_BITS, tuple(order_key(x) for x in t)))
                for t in cands:
                    trial = dict(binding)
                    if all(unify(a, v, trial) for a, v in zip(lit.args, t)):
                        premises[i] = ("lit", lit, t)
                        yield from step(rest, trial)
                return
            ok, trial, text, kind = self.check(lit, binding)
            if ok:
                premises[i] = (kind, lit, text)
                yield from step(rest, trial)

        return step(list(range(len(body))) if order is None else list(order), binding)

    def _choose(self, rule: Rule, remaining: list, binding: dict):
        """The literal to match next, and its candidates when it is relational."""
        key = (id(rule), tuple(remaining), frozenset(binding))
        ready = self.ready.get(key)
        if ready is None:  # the order depends only on which literals remain and which variables are bound
            ready = self.ready[key] = order_body(
                Rule(rule.head, tuple(rule.body[i] for i in remaining), rule.source), set(binding), lambda p: 0)[0]
        i = remaining[ready]
        if not isinstance(rule.body[i], Lit):
            return i, None
        best = None
        for j in remaining:
            other = rule.body[j]
            if isinstance(other, Lit):
                cands = self.candidates(other.pred, other.args, binding)
                if best is None or len(cands) < len(best[1]):
                    best = (j, cands)
        return best

    @staticmethod
    def _matches(args: tuple, t: tuple) -> bool:
        """Whether a tuple matches a negated literal's arguments: one set of bindings for all of them, so
        `\\+ e(X, X)` is matched only by tuples whose two columns are equal."""
        fresh: dict = {}
        return all(match_pattern(a, v, (), {}, fresh) for a, v in zip(args, t))

    def _inline_solutions(self, inline, binding: dict, first: bool = False) -> set:
        """The head tuples of an inline auxiliary's rules with its parameters bound as in `binding` (with
        `first`, as soon as there is one)."""
        start = {p: resolve(p, binding) for p in inline.params}
        found: set = set()
        for rule in inline.rules:
            for _, solution in self._solve(rule, dict(start), None):
                found.add(tuple(resolve(a, solution) for a in rule.head.args))
                if first:
                    return found
        return found

    def check(self, lit, binding: dict):
        """Evaluate a non-relational literal under a binding: (holds, extended binding, text, kind)."""
        if isinstance(lit, Neg):
            args = tuple(resolve(a, binding) for a in lit.lit.args)
            if lit.inline is not None:
                holds = not self._inline_solutions(lit.inline, binding, first=True)
            else:
                holds = not any(self._matches(args, t) for t in self.candidates(lit.lit.pred, args, {}))
            if lit.shown is not None:  # a negated conjunction: the user's goal, not its auxiliary predicate
                text = format_term(Compound("\\+", (resolve(lit.shown, binding),)))
            else:
                text = "\\+ " + goal_text(lit.lit.pred, args)
            return holds, binding, text, "negation"
        if isinstance(lit, Builtin):
            return (*check_builtin(lit, binding, self.compiled), "builtin")
        # aggregate
        position = {v: i for i, v in enumerate(lit.goal.args)}
        template = term_getter(lit.template, position) if lit.template is not None else None
        if lit.inline is not None:
            members = list(self._inline_solutions(lit.inline, binding))
        else:
            members = [t for t in self.relations.get(lit.goal.pred, {})
                       if all(t[position[v]] == resolve(v, binding) for v in lit.group)]
        value = aggregate_value(lit.kind, members, template) if members else EMPTY_AGGREGATE.get(lit.kind, MISSING)
        if value is MISSING:
            return False, binding, "", "aggregate"
        trial = dict(binding)
        holds = unify(lit.result, value, trial)
        text = format_term(aggregate_term(lit, trial))
        return holds, trial, text, "aggregate"


def goal_text(pred, args: tuple) -> str:
    return format_term(literal_term(Lit(pred, args)))
