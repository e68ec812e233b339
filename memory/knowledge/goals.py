"""Walking and rewriting the goals of a rule body (through `,` `;` `->` `\\+` `not` and aggregate goals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, cast

from ..terms import Compound, Term

CONTROL = {(",", 2), (";", 2), ("->", 2), ("\\+", 1), ("not", 1)}


@dataclass(frozen=True)
class GoalRef:
    qualifier: str | None  # `seg` in `seg:pred(...)`, else None
    name: str
    arity: int
    args: tuple = field(default=(), compare=False)  # the call's arguments (a call is named by the other three)


def _parts(goal: Term) -> tuple[str | None, Term]:
    if type(goal) is Compound and goal.functor == ":" and len(goal.args) == 2 and type(goal.args[0]) is str:
        return goal.args[0], goal.args[1]
    return None, goal


def goals(body: Term) -> Iterator[GoalRef]:
    """Every predicate call in a body, in order."""
    stack = [body]
    while stack:
        goal = stack.pop()
        if type(goal) is Compound and (goal.functor, len(goal.args)) in CONTROL:
            stack.extend(reversed(goal.args))
            continue
        if type(goal) is Compound and goal.functor == "aggregate_all" and len(goal.args) == 3:
            stack.append(goal.args[1])
            continue
        qualifier, inner = _parts(goal)
        if type(inner) is str:
            yield GoalRef(qualifier, inner, 0)
        elif type(inner) is Compound:
            yield GoalRef(qualifier, inner.functor, len(inner.args), inner.args)


def rewrite(body: Term, change: Callable[[GoalRef], str | None]) -> tuple[Term, int]:
    """Rename calls for which `change` returns a new name; returns the new body and how many changed."""
    count = 0

    def walk(goal: Term) -> Term:
        nonlocal count
        if type(goal) is Compound and (goal.functor, len(goal.args)) in CONTROL:
            return Compound(goal.functor, tuple(walk(a) for a in goal.args))
        if type(goal) is Compound and goal.functor == "aggregate_all" and len(goal.args) == 3:
            spec, inner, result = goal.args
            return Compound("aggregate_all", (spec, walk(inner), result))
        qualifier, inner = _parts(goal)
        if type(inner) not in (str, Compound):
            return goal
        called = cast(Compound, inner)  # when not an atom
        ref = GoalRef(qualifier, inner if type(inner) is str else called.functor,
                      0 if type(inner) is str else len(called.args))
        new_name = change(ref)
        if new_name is None:
            return goal
        count += 1
        renamed = new_name if type(inner) is str else Compound(new_name, called.args)
        return Compound(":", (qualifier, renamed)) if qualifier is not None else renamed

    return walk(body), count
