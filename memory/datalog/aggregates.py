"""Aggregates: aggregate_all(count|sum|max|min|bag|set) over the complete relation of the goal."""

from __future__ import annotations

from collections import Counter
from itertools import islice
from operator import itemgetter

from ..terms import NIL, Compound, Float, Term, make_list
from .builtins import BINARY, UNARY, evaluate, from_number, order_key, to_number
from .program import Agg
from .relations import RELEASE_SLICE, Relations, build_index, key_function
from .rows import MISSING, Step, bind_result, term_getter


def aggregate_groups(agg: Agg, rels: Relations, budget=None) -> dict:
    """Group key -> aggregated value, over the (complete) auxiliary relation of the goal."""
    position = {v: i for i, v in enumerate(agg.goal.args)}
    if agg.kind == "count" and not agg.group:  # the relation's size: its tuples need not exist as Python tuples
        size = rels.size(agg.goal.pred)
        return {(): size} if size else {}
    if agg.kind == "count":
        return _counts(rels.settled(agg.goal.pred), tuple(position[v] for v in agg.group), budget)
    template = term_getter(agg.template, position) if agg.template is not None else None
    buckets = build_index(rels.settled(agg.goal.pred), tuple(position[v] for v in agg.group), budget)
    out = {}
    for n, (key, members) in enumerate(buckets.items()):
        out[key] = aggregate_value(agg.kind, members, template)
        if budget is not None and (len(members) > 0x3FFF or not n & 0xFFF):
            budget.check()
    return out


def _counts(relation: dict, columns: tuple, budget=None) -> dict:
    """count in bulk: the size of each group, counted in C a slice at a time (no index of the members: counting
    500,500 tuples must cost a small fraction of deriving them)."""
    if not columns:
        return {(): len(relation)} if relation else {}
    key = key_function(columns)
    counts: Counter = Counter()
    tuples = iter(relation)
    while chunk := list(islice(tuples, RELEASE_SLICE)):
        counts.update(map(key, chunk))
        if budget is not None:
            budget.check()
    return dict(counts)


def aggregate_value(kind: str, members: list, template) -> Term:
    """count/sum/max/min/bag/set over the goal's solutions (bag and set in standard order).

    sum, max and min read their template as an arithmetic expression, evaluated per solution (as
    SWI-Prolog's `S is S0 + E`): `sum(X*2)` adds numbers, `max(-X)` compares them. max and min also take
    templates that are not arithmetic (atoms, strings, other compounds) and pick by standard order, where
    SWI-Prolog raises a type error."""
    if kind == "count":
        return len(members)
    values = [template(u) for u in sorted(members, key=lambda u: tuple(order_key(x) for x in u))]
    if kind == "sum":
        return from_number(sum(to_number(evaluated(v)) for v in values))
    if kind in ("max", "min"):
        values = [evaluated(v) if type(v) is Compound and _arithmetic(v) else v for v in values]
        pick = max if kind == "max" else min
        if all(type(v) is int or type(v) is Float for v in values):
            return pick(values, key=to_number)
        return pick(values, key=order_key)
    if kind == "bag":  # every solution's value, duplicates kept, in standard order (solutions have no order here)
        return make_list(sorted(values, key=order_key))
    unique = {order_key(v): v for v in values}
    return make_list([unique[k] for k in sorted(unique)])


def evaluated(term: Term) -> Term:
    """A template's value as a number: numbers as they are, a compound evaluated as an arithmetic expression
    (typed errors as for `is`), anything else left for `to_number` to refuse."""
    if type(term) is Compound:
        return from_number(evaluate(term))
    return term


def _arithmetic(term: Compound) -> bool:
    """Whether a compound's principal functor is an arithmetic function (then it is evaluated)."""
    n = len(term.args)
    return n == 2 and term.functor in BINARY or n == 1 and term.functor in UNARY


EMPTY_AGGREGATE = {"count": 0, "sum": 0, "bag": NIL, "set": NIL}


def compile_aggregate(agg: Agg, varmap: dict, width: int, rels: Relations, budget=None) -> Step:
    groups = aggregate_groups(agg, rels, budget)
    default = EMPTY_AGGREGATE.get(agg.kind, MISSING)
    if agg.group:
        key = itemgetter(*[varmap[v] for v in agg.group])
        value_of = lambda r: groups.get(key(r), default)
    else:
        value = groups.get((), default)
        value_of = lambda r: value
    return bind_result(agg.result, value_of, varmap, width)
