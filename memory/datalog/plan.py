"""Join planning and compilation of a rule body into a pipeline of list comprehensions.

A row is a flat tuple: the concatenation of every matched tuple plus the values
of computed variables; `varmap` says which position holds each variable. Each
step turns a list of rows into a new list, so the inner loops run inside
comprehensions and C-level hashing rather than per-variable Python code.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable

from ..errors import BudgetExceeded, EvaluationError
from ..terms import NIL, Compound, Float, Term, Var, make_list, variables
from .builtins import NUMERIC_COMPARE, ORDER_COMPARE, BINARY, UNARY, evaluate, from_number, order_key, to_number
from .program import Agg, Builtin, Lit, Neg, Rule, literal_vars
from .relations import EMPTY, Relations

MISSING = object()


def _is_ground(term: Term) -> bool:
    for _ in variables(term):
        return False
    return True


# --- getters: terms evaluated against a row --------------------------------

def term_getter(term: Term, varmap: dict) -> Callable:
    """A function row -> the term with its (bound) variables replaced by their values."""
    if type(term) is Var:
        return itemgetter(varmap[term])
    if _is_ground(term):
        return lambda r, t=term: t
    functor = term.functor  # type: ignore[union-attr]
    parts = [term_getter(a, varmap) for a in term.args]  # type: ignore[union-attr]
    return lambda r: Compound(functor, tuple(p(r) for p in parts))


def number_getter(expr: Term, varmap: dict) -> Callable:
    """A function row -> Python number for an arithmetic expression."""
    if type(expr) is Var:
        i = varmap[expr]
        return lambda r: to_number(r[i])
    if _is_ground(expr):
        value = evaluate(expr) if type(expr) is not str else None
        if value is None:
            return lambda r, e=expr: evaluate(e)
        return lambda r, v=value: v
    if type(expr) is Compound:
        fn, args = expr.functor, expr.args
        if len(args) == 2 and fn in BINARY:
            op, a, b = BINARY[fn], number_getter(args[0], varmap), number_getter(args[1], varmap)
            def binary(r):
                try:
                    return op(a(r), b(r))
                except OverflowError:
                    raise EvaluationError("evaluation error: float overflow") from None
            return binary
        if len(args) == 1 and fn in UNARY:
            op1, a1 = UNARY[fn], number_getter(args[0], varmap)
            return lambda r: op1(a1(r))
    get = term_getter(expr, varmap)
    return lambda r: evaluate(get(r))


def head_projection(args: tuple, varmap: dict) -> Callable:
    if all(type(a) is Var for a in args):
        regs = [varmap[a] for a in args]
        if len(regs) >= 2:
            return itemgetter(*regs)
        if len(regs) == 1:
            i = regs[0]
            return lambda r: (r[i],)
        return lambda r: ()
    getters = [term_getter(a, varmap) for a in args]
    return lambda r: tuple(g(r) for g in getters)


# --- pattern matching for arguments that are compound terms with variables ---

def _match(pattern: Term, value: Term, row: tuple, varmap: dict, fresh: dict) -> bool:
    kind = type(pattern)
    if kind is Var:
        if pattern.anonymous:  # type: ignore[union-attr]
            return True
        if pattern in varmap:
            return row[varmap[pattern]] == value
        seen = fresh.get(pattern, MISSING)
        if seen is MISSING:
            fresh[pattern] = value
            return True
        return seen == value
    if kind is Compound:
        if type(value) is not Compound or value.functor != pattern.functor or len(value.args) != len(pattern.args):  # type: ignore[union-attr]
            return False
        return all(_match(p, v, row, varmap, fresh) for p, v in zip(pattern.args, value.args))  # type: ignore[union-attr]
    return pattern == value and type(pattern) is type(value)


# --- literal steps -----------------------------------------------------------

class Step:
    """A compiled literal: `run(rows)` returns the extended rows.

    `fuse(rows, project)`, where a step offers it, joins and projects onto the
    head in one pass, so the last join builds no intermediate row list."""

    def __init__(self, run: Callable, varmap: dict, width: int, fuse: Callable | None = None) -> None:
        self.run = run
        self.varmap = varmap
        self.width = width
        self.fuse = fuse


# --- ordering ----------------------------------------------------------------

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
                lv, rv = set(variables(lit.left)), set(variables(lit.right))
                if lit.negated or lit.op not in ("is", "="):
                    if lv | rv <= bound:
                        score = (0, 0, 0, i)
                elif lit.op == "is" and rv <= bound:
                    score = (0 if lv <= bound else 1, 0, 0, i)
                elif lit.op == "=" and (lv <= bound or rv <= bound):
                    score = (0 if lv | rv <= bound else 1, 0, 0, i)
            elif isinstance(lit, Agg):
                if set(lit.group) <= bound:
                    score = (1, 0, 0, i)
            if score is not None and (best_score is None or score < best_score):
                best, best_score = i, score
        if best is None:
            raise EvaluationError("no evaluable literal left (an unsafe rule slipped through analysis)")
        order.append(best)
        remaining.remove(best)
        bound |= _binds(rule.body[best], bound)
    return order


def _binds(lit, bound: set) -> set:
    if isinstance(lit, Lit):
        return literal_vars(lit)
    if isinstance(lit, Builtin) and not lit.negated and lit.op in ("is", "="):
        return set(variables(lit.left)) | set(variables(lit.right))
    if isinstance(lit, Agg):
        return set(variables(lit.result))
    return set()


class CompiledRule:
    """A rule ready to fire: optionally seeded from a delta at one body position."""

    def __init__(self, rule: Rule, rels: Relations, seed: int | None, budget) -> None:
        self.rule = rule
        self.seed = seed
        self.budget = budget
        size = lambda pred: len(rels.get(pred))
        bound: set = set()
        steps: list[Step] = []
        varmap: dict = {}
        width = 0
        order = order_body(rule, bound, size, skip=seed)
        if seed is not None:
            order = [seed] + order
        needed_after = []
        for k in range(len(order)):
            later = set(literal_vars(rule.head))
            for i in order[k + 1:]:
                later |= literal_vars(rule.body[i]) if not isinstance(rule.body[i], Agg) else (
                    set(rule.body[i].group) | set(variables(rule.body[i].result)))
            needed_after.append(later)
        for k, i in enumerate(order):
            lit = rule.body[i]
            if isinstance(lit, Lit):
                step = compile_positive(lit, varmap, width, rels, needed_after[k], seed=(k == 0 and seed is not None))
            elif isinstance(lit, Neg):
                step = compile_negation(lit, varmap, rels)
                step.width = width
            elif isinstance(lit, Builtin):
                step = compile_builtin(lit, varmap, width)
            else:
                step = compile_aggregate(lit, varmap, width, rels)
            steps.append(step)
            varmap, width = step.varmap, step.width
        self.project = head_projection(rule.head.args, varmap)
        self.seeded = seed is not None
        self.fused = None
        if len(steps) > 1 and steps[-1].fuse is not None:
            self.fused = steps[-1].fuse
            steps = steps[:-1]
        self.steps = [s.run for s in steps]

    def fire(self, delta=None) -> set:
        rows: list = [()]
        limit = self.budget.max_rows
        for k, run in enumerate(self.steps):
            rows = run(rows, delta) if (k == 0 and self.seeded) else run(rows)
            if not rows:
                return set()
            if len(rows) > limit:
                raise BudgetExceeded(
                    f"a join produced more than {limit} intermediate rows",
                    reached=len(rows), limit=limit,
                )
        if self.fused is not None:
            return self.fused(rows, self.project)
        return set(map(self.project, rows))
