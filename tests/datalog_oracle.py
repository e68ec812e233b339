"""An in-repository oracle for the differential law: a deliberately naive interpreter of the dialect.

It shares nothing with the engine but the term parser: bodies are solved by backtracking left to right,
as Prolog runs them (a negation or an aggregate sees exactly the variables bound before it), arithmetic
has its own evaluator, and a program's model is its layers' rules iterated naively to a fixpoint, lowest
layer first (the generated programs say which layer each predicate is in, and negation and aggregation
only read lower layers). Slow and obviously right on small programs, which is all it is for.
"""

from __future__ import annotations

from typing import Iterator

from memory.terms import Compound, Term, Var, parse_clauses, parse_term

Model = dict  # (name, arity) -> set of tuples


class OracleError(Exception):
    """A goal the oracle cannot run (Prolog would raise an error there too)."""


def _walk(term: Term, binding: dict) -> Term:
    while type(term) is Var and term in binding:
        term = binding[term]
    return term


def resolve(term: Term, binding: dict) -> Term:
    term = _walk(term, binding)
    if type(term) is Compound:
        return Compound(term.functor, tuple(resolve(a, binding) for a in term.args))
    return term


def unify(a: Term, b: Term, binding: dict) -> bool:
    a, b = _walk(a, binding), _walk(b, binding)
    if type(a) is Var:
        if not a.anonymous and a != b:
            binding[a] = b
        return True
    if type(b) is Var:
        if not b.anonymous:
            binding[b] = a
        return True
    if type(a) is Compound and type(b) is Compound:
        return (a.functor == b.functor and len(a.args) == len(b.args)
                and all(unify(x, y, binding) for x, y in zip(a.args, b.args)))
    return type(a) is type(b) and a == b


def arith(expr: Term, binding: dict) -> int:
    expr = _walk(expr, binding)
    if type(expr) is int:
        return expr
    if type(expr) is Var:
        raise OracleError("instantiation error")
    if type(expr) is Compound:
        args = [arith(a, binding) for a in expr.args]
        if len(args) == 2 and expr.functor in BINARY:
            return BINARY[expr.functor](*args)
        if len(args) == 1 and expr.functor in UNARY:
            return UNARY[expr.functor](args[0])
    raise OracleError(f"not evaluable: {expr!r}")


BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "max": max, "min": min}
UNARY = {"-": lambda a: -a, "abs": abs}
COMPARE = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "=<": lambda a, b: a <= b,
           ">=": lambda a, b: a >= b, "=:=": lambda a, b: a == b, "=\\=": lambda a, b: a != b}


def solve(goal: Term, binding: dict, model: Model) -> Iterator[dict]:
    """Every solution of `goal` extending `binding`, in Prolog's order (one per proof path)."""
    goal = _walk(goal, binding)
    if goal == "true":
        yield binding
        return
    if type(goal) is not Compound:
        yield from _call(goal, (), binding, model)
        return
    name, args = goal.functor, goal.args
    if name == "," and len(args) == 2:
        for first in solve(args[0], binding, model):
            yield from solve(args[1], first, model)
    elif name == ";" and len(args) == 2:
        yield from solve(args[0], binding, model)
        yield from solve(args[1], binding, model)
    elif name in ("\\+", "not") and len(args) == 1:
        if next(solve(args[0], dict(binding), model), None) is None:
            yield binding
    elif name in COMPARE and len(args) == 2:
        if COMPARE[name](arith(args[0], binding), arith(args[1], binding)):
            yield binding
    elif name == "is" and len(args) == 2:
        trial = dict(binding)
        if unify(args[0], arith(args[1], binding), trial):
            yield trial
    elif name == "aggregate_all" and len(args) == 3:
        value = _aggregate(args[0], args[1], binding, model)
        trial = dict(binding)
        if value is not None and unify(args[2], value, trial):
            yield trial
    else:
        yield from _call(name, args, binding, model)


def _call(name: str, args: tuple, binding: dict, model: Model) -> Iterator[dict]:
    for t in tuple(model.get((name, len(args)), ())):
        trial = dict(binding)
        if all(unify(a, v, trial) for a, v in zip(args, t)):
            yield trial


def _aggregate(spec: Term, goal: Term, binding: dict, model: Model):
    solutions = list(solve(goal, dict(binding), model))
    if spec == "count":
        return len(solutions)
    kind, template = spec.functor, spec.args[0]
    if kind == "sum":
        return sum(arith(template, s) for s in solutions)
    if kind in ("max", "min"):
        values = [arith(template, s) for s in solutions]
        return (max if kind == "max" else min)(values) if values else None
    if kind in ("set", "bag"):  # the generator's sets and bags hold integers; a bag keeps duplicates
        instances = [resolve(template, s) for s in solutions]
        values = sorted(set(instances) if kind == "set" else instances)
        out: Term = "[]"
        for v in reversed(values):
            out = Compound(".", (v, out))
        return out
    raise OracleError(f"aggregate {kind} is not in the oracle")


def evaluate(program_text: str, layers: dict, facts: Model) -> Model:
    """The model of a layered program: {(name, arity): tuples}, stored facts included."""
    clauses = parse_clauses(program_text)
    model: Model = {key: set(ts) for key, ts in facts.items()}
    by_layer: dict = {}
    for clause in clauses:
        head, body = clause.args if type(clause) is Compound and clause.functor == ":-" else (clause, "true")
        key = (head.functor, len(head.args)) if type(head) is Compound else (head, 0)
        by_layer.setdefault(layers[key], []).append((key, head, body))
    for layer in sorted(by_layer):
        rules = by_layer[layer]
        changed = True
        while changed:
            changed = False
            for key, head, body in rules:
                found = {tuple(resolve(a, s) for a in head.args) for s in solve(body, {}, model)}
                known = model.setdefault(key, set())
                if not found <= known:
                    known |= found
                    changed = True
    return model


def answers(goal_text: str, variables: list[str], model: Model) -> set:
    """The distinct answers of a query, as tuples of the named variables' values."""
    goal = parse_term(goal_text)
    named = {}
    stack = [goal]
    while stack:
        term = stack.pop()
        if type(term) is Var and not term.anonymous:
            named.setdefault(term.name, term)
        elif type(term) is Compound:
            stack.extend(term.args)
    return {tuple(resolve(named[v], s) for v in variables) for s in solve(goal, {}, model)}


def holds(goal: Term, model: Model) -> bool:
    """Whether a (possibly partly bound) goal has a solution in the model."""
    return next(solve(goal, {}, model), None) is not None
