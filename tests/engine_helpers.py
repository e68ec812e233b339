"""Build programs and evaluate them in memory, without a database."""

from memory.datalog import Program, analyze, evaluate, explain, parse_program, solve
from memory.terms import parse_term


def program(text: str) -> Program:
    p = parse_program(text)
    analyze(p)
    return p


def loader(facts: dict):
    """facts: {(name, arity): [tuple, ...]} -> an EDB loader for solve/explain."""
    return lambda preds: {p: list(facts.get(p, [])) for p in preds}


def answers(prog: Program, goal: str, facts: dict, demand: bool = True, **kw) -> list:
    return solve(prog, parse_term(goal), loader(facts), demand=demand, **kw).rows


def model_of(prog: Program, facts: dict):
    return evaluate(prog, {k: list(v) for k, v in facts.items()})


def proof(prog: Program, fact: str, facts: dict, **kw):
    return explain(prog, parse_term(fact), loader(facts), **kw)
