"""Join planning: the order in which a rule body's literals are evaluated."""

from __future__ import annotations

from typing import Callable

from ..errors import EvaluationError
from ..terms import variables
from . import builtin_table
from .program import Agg, Builtin, Lit, Neg, Rule, literal_vars


def order_body(rule: Rule, bound: set, size: Callable, skip: int | None = None) -> list[int]:
    """Greedy join order: filters as soon as their inputs are bound, then the
    relational literal with the most bound arguments, then the smallest relation."""
    counts: dict = {}
    for part in (rule.head, *rule.body):
        for v in literal_vars(part):
            counts[v] = counts.get(v, 0) + 1
    remaining = [i for i in range(len(rule.body)) if i != skip]
    bound = set(bound)
    order = []
    while remaining:
        best, best_score = None, None
        for i in remaining:
            lit = rule.body[i]
            score = None
            if isinstance(lit, Lit):
                args = lit.args
                n_bound = sum(1 for a in args if all(v in bound for v in variables(a)))
                score = (2, -n_bound if n_bound else 1, size(lit.pred), i)
            elif isinstance(lit, Neg):
                shared = {v for v in literal_vars(lit) if counts.get(v, 0) > 1}
                if shared <= bound:
                    score = (0, 0, 0, i)
            elif isinstance(lit, Builtin):
                if builtin_table.runnable(lit, bound):  # a test first, then a builtin that binds
                    score = (0 if literal_vars(lit) <= bound else 1, 0, 0, i)
            elif isinstance(lit, Agg):
                if set(lit.group) <= bound:
                    score = (1, 0, 0, i)
            if score is not None and (best_score is None or score < best_score):
                best, best_score = i, score
        if best is None:
            raise EvaluationError("no evaluable literal left (an unsafe rule slipped through analysis)")
        order.append(best)
        remaining.remove(best)
        bound |= binds(rule.body[best], bound)
    return order


def binds(lit, bound: set) -> set:
    """The variables a body literal binds when it runs with the variables in `bound` bound."""
    if isinstance(lit, Lit):
        return literal_vars(lit)
    if isinstance(lit, Builtin):
        return builtin_table.binds(lit, bound)
    if isinstance(lit, Agg):
        return set(variables(lit.result))
    return set()
