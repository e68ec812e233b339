"""Every built-in predicate, declared once: name, arity, how it reads its arguments, what it means, and the
binding modes it can run in.

Safety analysis (`bound_variables`, `check_safety`), join planning (`order_body`), the demand rewrite,
the compiled evaluation inside a rule pipeline (`compile_builtin`) and the proof check (`check_builtin`)
all read this table, so they cannot disagree about a builtin. Adding one is one entry here (plus its
tests: `tests/test_builtin_table.py` checks every entry against all of those readers).

A builtin reads each argument either as a term or as an arithmetic expression (evaluated to a number).
With every argument bound it is a test: `relation(left, right)` on the values read. A binding mode
lets it run with only some arguments bound: it evaluates its `needs` argument and unifies the value
(through `value`, when the value is not the argument itself) with its `binds` argument, which may be
unbound, bound (then it is compared) or a partly bound pattern. A negated builtin is always a test:
it needs all its variables and binds none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..terms import Compound, Term, format_term, is_ground, variables
from .builtins import NUMERIC_COMPARE, ORDER_COMPARE, from_number, order_key, resolve
from .rows import Step, bind_result, number_getter, term_getter

TERM, NUMBER = "term", "number"  # how an argument is read


@dataclass(frozen=True)
class Mode:
    """A way to run with only some arguments bound: `needs` (argument positions whose variables must be
    bound) are evaluated, and the result is unified with the argument at `binds`."""

    needs: int
    binds: int
    value: Callable[[object], Term] | None = None  # from the value read to the term bound (None: itself)


@dataclass(frozen=True)
class BuiltinPredicate:
    name: str
    arity: int
    reads: tuple[str, ...]  # TERM or NUMBER, per argument
    relation: Callable[..., bool]  # on the values read, when every argument is bound
    modes: tuple[Mode, ...] = ()  # binding modes, tried in order
    inputs: str = "variable"  # what a safety error calls its unbound inputs


def _numeric(name: str) -> BuiltinPredicate:
    return BuiltinPredicate(name, 2, (NUMBER, NUMBER), NUMERIC_COMPARE[name], inputs="arithmetic input")


def _ordered(name: str) -> BuiltinPredicate:
    compare = ORDER_COMPARE[name]
    return BuiltinPredicate(name, 2, (TERM, TERM), lambda a, b: compare(order_key(a), order_key(b)))


def _equal(a: Term, b: Term) -> bool:
    return a == b


def _different(a: Term, b: Term) -> bool:
    return a != b


def _is(a: Term, b) -> bool:
    return a == from_number(b)


BUILTINS: dict[str, BuiltinPredicate] = {entry.name: entry for entry in [
    *(_numeric(name) for name in ("<", ">", "=<", ">=", "=:=", "=\\=")),
    *(_ordered(name) for name in ("@<", "@>", "@=<", "@>=")),
    BuiltinPredicate("is", 2, (TERM, NUMBER), _is, (Mode(needs=1, binds=0, value=from_number),),
                     inputs="arithmetic input"),
    # Unification with one side bound: the other side takes its value (or is matched against it).
    BuiltinPredicate("=", 2, (TERM, TERM), _equal, (Mode(needs=1, binds=0), Mode(needs=0, binds=1))),
    BuiltinPredicate("\\=", 2, (TERM, TERM), _different),  # on ground terms: not unifiable means different
    BuiltinPredicate("==", 2, (TERM, TERM), _equal),
    BuiltinPredicate("\\==", 2, (TERM, TERM), _different),
]}


def builtin(name: str, arity: int) -> BuiltinPredicate | None:
    """The builtin with this name and arity, or None."""
    entry = BUILTINS.get(name)
    return entry if entry is not None and entry.arity == arity else None


# --- analysis and planning ---------------------------------------------------

def _args(lit) -> tuple:
    return (lit.left, lit.right)


def _vars(term: Term) -> set:
    return set(variables(term))


def _modes(lit) -> tuple[Mode, ...]:
    return () if lit.negated else BUILTINS[lit.op].modes


def runnable(lit, bound: set) -> bool:
    """Whether the literal can run once the variables in `bound` are: as a test (all bound) or in a mode."""
    args = _args(lit)
    if all(_vars(a) <= bound for a in args):
        return True
    return any(_vars(args[m.needs]) <= bound for m in _modes(lit))


def binds(lit, bound: set) -> set:
    """The variables the literal binds when it runs with `bound` bound (none for a test)."""
    args = _args(lit)
    out: set = set()
    for mode in _modes(lit):
        if _vars(args[mode.needs]) <= bound:
            out |= _vars(args[mode.binds])
    return out


def unbound_inputs(lit, bound: set) -> set:
    """Why the literal cannot run: the variables that would have to be bound first (empty when it can)."""
    if runnable(lit, bound):
        return set()
    args = _args(lit)
    modes = _modes(lit)
    if not modes:
        return set().union(*(_vars(a) for a in args)) - bound
    return set().union(*(_vars(args[m.needs]) for m in modes)) - bound


# --- compiled evaluation -------------------------------------------------------

def _reader(kind: str, term: Term, varmap: dict) -> Callable:
    return number_getter(term, varmap) if kind == NUMBER else term_getter(term, varmap)


def compile_builtin(lit, varmap: dict, width: int) -> Step:
    """The literal as a step of a rule pipeline, its inputs bound in `varmap` (the planner saw to that)."""
    entry = BUILTINS[lit.op]
    args = _args(lit)
    for mode in _modes(lit):
        if all(v in varmap for v in variables(args[mode.needs])):
            read, convert = _reader(entry.reads[mode.needs], args[mode.needs], varmap), mode.value
            value_of = read if convert is None else (lambda r: convert(read(r)))
            return bind_result(args[mode.binds], value_of, varmap, width)
    relation = entry.relation
    a, b = (_reader(kind, arg, varmap) for kind, arg in zip(entry.reads, args))
    if lit.negated:
        return Step(lambda rows, _d=None: [r for r in rows if not relation(a(r), b(r))], varmap, width)
    return Step(lambda rows, _d=None: [r for r in rows if relation(a(r), b(r))], varmap, width)


# --- proof check ----------------------------------------------------------------

def check_builtin(lit, binding: dict, compiled: dict | None = None) -> tuple[bool, dict, str]:
    """Evaluate the literal under a binding that binds its inputs to ground terms: (holds, the binding
    extended by what it binds, the literal's text with its values).

    It runs the literal's compiled step on one row holding the bound variables' values, so a proof checks
    a builtin exactly as the evaluation ran it. `compiled` caches the steps (per literal and bound
    variables) for a caller that checks many bindings."""
    known = tuple(v for v in dict.fromkeys((*variables(lit.left), *variables(lit.right)))
                  if not v.anonymous and is_ground(resolve(v, binding)))
    key = (lit, known)
    step = compiled.get(key) if compiled is not None else None
    if step is None:
        step = compile_builtin(lit, {v: i for i, v in enumerate(known)}, len(known))
        if compiled is not None:
            compiled[key] = step
    rows = step.run([tuple(resolve(v, binding) for v in known)])
    trial = binding
    if rows and not lit.negated:
        trial = dict(binding)
        for v, i in step.varmap.items():
            if i >= len(known):
                trial[v] = rows[0][i]
    text = format_term(Compound(lit.op, (resolve(lit.left, trial), resolve(lit.right, trial))))
    return bool(rows), trial, ("\\+ " + text if lit.negated else text)
