"""Rows and the terms evaluated against them: the building blocks of compiled rule bodies.

A row is a flat tuple: the concatenation of every matched tuple plus the values
of computed variables; `varmap` says which position holds each variable. A `Step`
turns a list of rows into a new list, so the inner loops run inside
comprehensions and C-level hashing rather than per-variable Python code.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable

from ..errors import EvaluationError
from ..terms import Compound, Term, Var, is_ground, variables
from .builtins import BINARY, UNARY, evaluate, substitute, to_number

MISSING = object()


# --- getters: terms evaluated against a row --------------------------------

def term_getter(term: Term, varmap: dict) -> Callable:
    """A function row -> the term with its (bound) variables replaced by their values."""
    if type(term) is Var:
        return itemgetter(varmap[term])
    if is_ground(term):
        return lambda r, t=term: t
    if _larger_than(term, BIG_TERM_NODES):  # compiled getters nest one closure per level: substitute instead
        slots = {v: varmap[v] for v in variables(term) if not v.anonymous}
        return lambda r, t=term: substitute(t, {v: r[i] for v, i in slots.items()})
    functor = term.functor  # type: ignore[union-attr]
    parts = [term_getter(a, varmap) for a in term.args]  # type: ignore[union-attr]
    return lambda r: Compound(functor, tuple(p(r) for p in parts))


BIG_TERM_NODES = 200


def _larger_than(term: Term, limit: int) -> bool:
    """More than `limit` nodes (counted with a stack, stopping early)."""
    stack, seen = [term], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if type(node) is Compound:
            stack.extend(node.args)
    return False


def number_getter(expr: Term, varmap: dict) -> Callable:
    """A function row -> Python number for an arithmetic expression."""
    if type(expr) is Var:
        i = varmap[expr]
        return lambda r: to_number(r[i])
    if is_ground(expr):
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
                    raise EvaluationError("float overflow") from None
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
            return itemgetter(slice(regs[0], regs[0] + 1))  # a 1-tuple, built in C
        return lambda r: ()
    getters = [term_getter(a, varmap) for a in args]
    return lambda r: tuple(g(r) for g in getters)


# --- pattern matching for arguments that are compound terms with variables ---

def match_pattern(pattern: Term, value: Term, row: tuple, varmap: dict, fresh: dict) -> bool:
    stack = [(pattern, value)]  # explicit: a pattern can be a 10,000-item list
    while stack:
        pattern, value = stack.pop()
        kind = type(pattern)
        if kind is Var:
            if pattern.anonymous:  # type: ignore[union-attr]
                continue
            if pattern in varmap:
                if row[varmap[pattern]] != value:
                    return False
                continue
            seen = fresh.get(pattern, MISSING)
            if seen is MISSING:
                fresh[pattern] = value
            elif seen != value:
                return False
        elif kind is Compound:
            if type(value) is not Compound or value.functor != pattern.functor or len(value.args) != len(pattern.args):  # type: ignore[union-attr]
                return False
            stack.extend(zip(reversed(pattern.args), reversed(value.args)))  # type: ignore[union-attr]
        elif not (pattern == value and type(pattern) is type(value)):
            return False
    return True


class Step:
    """A compiled literal: `run(rows)` returns the extended rows.

    `fuse(rows, project)`, where a step offers it, joins and projects onto the
    head in one pass, so the last join builds no intermediate row list."""

    def __init__(self, run: Callable, varmap: dict, width: int, fuse: Callable | None = None) -> None:
        self.run = run
        self.varmap = varmap
        self.width = width
        self.fuse = fuse
        self.plain_seed = False  # a seed step that passes the delta through unchanged
        self.lookup = None  # a fused join on one bound column: (the index's get, the row position of its key)


def bind_result(result: Term, value_of: Callable, varmap: dict, width: int) -> Step:
    """Steps whose output is a value: bind it to a fresh variable, or compare it with a bound term."""
    if type(result) is Var and not result.anonymous and result not in varmap:
        new_varmap = dict(varmap)
        new_varmap[result] = width

        def bind(rows, _d=None):
            out = []
            for r in rows:
                v = value_of(r)
                if v is not MISSING:
                    out.append(r + (v,))
            return out
        return Step(bind, new_varmap, width + 1)
    if type(result) is Var and result.anonymous:
        return Step(lambda rows, _d=None: [r for r in rows if value_of(r) is not MISSING], varmap, width)
    if all(v in varmap for v in variables(result)):
        expected = term_getter(result, varmap)
        return Step(lambda rows, _d=None: [r for r in rows if value_of(r) == expected(r)], varmap, width)
    # A partly bound pattern such as `f(X, Y) = Value`: match structurally.
    pattern_vars = [v for v in dict.fromkeys(variables(result)) if not v.anonymous and v not in varmap]
    new_varmap = dict(varmap)
    for k, v in enumerate(pattern_vars):
        new_varmap[v] = width + k

    def match(rows, _d=None):
        out = []
        for r in rows:
            v = value_of(r)
            bound: dict = {}
            if v is not MISSING and match_pattern(result, v, r, varmap, bound):
                out.append(r + tuple(bound[x] for x in pattern_vars))
        return out
    return Step(match, new_varmap, width + len(pattern_vars))
