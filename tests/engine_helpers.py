"""Build programs and evaluate them in memory, without a database."""

from memory.datalog import Pred, Program, analyze, evaluate, explain, parse_program, solve
from memory.terms import parse_term


def as_pred(key: tuple) -> Pred:
    """A test's shorthand for a predicate: (name, arity), or (name, arity, segment) for another segment's."""
    name, arity, *segment = key
    return Pred.in_segment(name, arity, *segment) if segment else Pred.stored(name, arity)


def program(text: str) -> Program:
    p = parse_program(text)
    analyze(p)
    return p


def loader(facts: dict):
    """facts: {(name, arity): [tuple, ...]} -> an EDB loader for solve/explain."""
    by_pred = {as_pred(key): tuples for key, tuples in facts.items()}
    return lambda preds: {p: list(by_pred.get(p, [])) for p in preds}


def answers(prog: Program, goal: str, facts: dict, demand: bool = True, **kw) -> list:
    return solve(prog, parse_term(goal), loader(facts), demand=demand, **kw).rows


def model_of(prog: Program, facts: dict):
    return evaluate(prog, {as_pred(k): list(v) for k, v in facts.items()})


def proof(prog: Program, fact: str, facts: dict, **kw):
    return explain(prog, parse_term(fact), loader(facts), **kw)
