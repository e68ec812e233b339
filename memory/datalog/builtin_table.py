"""Every built-in predicate, declared once: name, arity, how it reads its arguments, what it means, and the
binding modes it can run in.

Safety analysis (`bound_variables`, `check_safety`), join planning (`order_body`), the demand rewrite,
the compiled evaluation inside a rule pipeline (`compile_builtin`) and the proof check (`check_builtin`)
all read this table, so they cannot disagree about a builtin. Adding one is one entry here (plus its
tests: `tests/test_builtin_table.py` checks every entry against all of those readers).

A builtin reads each argument either as a term or as an arithmetic expression (evaluated to a number).
With every argument bound it is a test: `relation(*values read)`. A binding mode lets it run with only
some arguments bound: it reads its `needs` arguments, computes a value from them (`value`; without one,
the single needed argument's own value) and unifies it with its `binds` argument, which may be unbound,
bound (then it is compared) or a partly bound pattern. A negated builtin is always a test: it needs all
its variables and binds none.
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
    """A way to run with only some arguments bound: the arguments at `needs` (all their variables bound) are
    read, and `value` of what was read is unified with the argument at `binds`."""

    needs: tuple[int, ...]
    binds: int
    value: Callable[..., Term] | None = None  # from the values read to the term bound (None: the one value itself)


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
    BuiltinPredicate("is", 2, (TERM, NUMBER), _is, (Mode(needs=(1,), binds=0, value=from_number),),
                     inputs="arithmetic input"),
    # Unification with one side bound: the other side takes its value (or is matched against it).
    BuiltinPredicate("=", 2, (TERM, TERM), _equal, (Mode(needs=(1,), binds=0), Mode(needs=(0,), binds=1))),
    BuiltinPredicate("\\=", 2, (TERM, TERM), _different),  # on ground terms: not unifiable means different
    BuiltinPredicate("==", 2, (TERM, TERM), _equal),
    BuiltinPredicate("\\==", 2, (TERM, TERM), _different),
]}


def builtin(name: str, arity: int) -> BuiltinPredicate | None:
    """The builtin with this name and arity, or None."""
    entry = BUILTINS.get(name)
    return entry if entry is not None and entry.arity == arity else None


# --- analysis and planning ---------------------------------------------------

def _vars(term: Term) -> set:
    return set(variables(term))


def _vars_at(args: tuple, positions: tuple) -> set:
    return set().union(*(_vars(args[i]) for i in positions))


def _modes(lit) -> tuple[Mode, ...]:
    return () if lit.negated else BUILTINS[lit.op].modes


def runnable(lit, bound: set) -> bool:
    """Whether the literal can run once the variables in `bound` are: as a test (all bound) or in a mode."""
    args = lit.args
    if all(_vars(a) <= bound for a in args):
        return True
    return any(_vars_at(args, m.needs) <= bound for m in _modes(lit))


def binds(lit, bound: set) -> set:
    """The variables the literal binds when it runs with `bound` bound (none for a test)."""
    args = lit.args
    out: set = set()
    for mode in _modes(lit):
        if _vars_at(args, mode.needs) <= bound:
            out |= _vars(args[mode.binds])
    return out


def unbound_inputs(lit, bound: set) -> set:
    """Why the literal cannot run: the variables that would have to be bound first (empty when it can)."""
    if runnable(lit, bound):
        return set()
    args = lit.args
    modes = _modes(lit)
    if not modes:
        return _vars_at(args, tuple(range(len(args)))) - bound
    return set().union(*(_vars_at(args, m.needs) for m in modes)) - bound


# --- compiled evaluation -------------------------------------------------------

def _reader(kind: str, term: Term, varmap: dict) -> Callable:
    return number_getter(term, varmap) if kind == NUMBER else term_getter(term, varmap)


def compile_builtin(lit, varmap: dict, width: int) -> Step:
    """The literal as a step of a rule pipeline, its inputs bound in `varmap` (the planner saw to that)."""
    entry = BUILTINS[lit.op]
    args = lit.args
    for mode in _modes(lit):
        if all(v in varmap for i in mode.needs for v in variables(args[i])):
            readers = [_reader(entry.reads[i], args[i], varmap) for i in mode.needs]
            compute = mode.value
            if len(readers) == 1:
                read = readers[0]
                # bound now (default arguments): the loop moves on only after returning
                value_of = read if compute is None else (lambda r, compute=compute, read=read: compute(read(r)))
            else:
                value_of = lambda r, compute=compute, readers=readers: compute(*[read(r) for read in readers])
            return bind_result(args[mode.binds], value_of, varmap, width)
    relation = entry.relation
    readers = [_reader(kind, arg, varmap) for kind, arg in zip(entry.reads, args)]
    if len(readers) == 2:  # every builtin so far: no argument list built per row
        a, b = readers
        if lit.negated:
            return Step(lambda rows, _d=None: [r for r in rows if not relation(a(r), b(r))], varmap, width)
        return Step(lambda rows, _d=None: [r for r in rows if relation(a(r), b(r))], varmap, width)
    test = lambda r: relation(*[read(r) for read in readers])  # noqa: E731
    if lit.negated:
        return Step(lambda rows, _d=None: [r for r in rows if not test(r)], varmap, width)
    return Step(lambda rows, _d=None: [r for r in rows if test(r)], varmap, width)


# --- proof check ----------------------------------------------------------------

def check_builtin(lit, binding: dict, compiled: dict | None = None) -> tuple[bool, dict, str]:
    """Evaluate the literal under a binding that binds its inputs to ground terms: (holds, the binding
    extended by what it binds, the literal's text with its values).

    It runs the literal's compiled step on one row holding the bound variables' values, so a proof checks
    a builtin exactly as the evaluation ran it. `compiled` caches the steps (per literal and bound
    variables) for a caller that checks many bindings."""
    known = tuple(v for v in dict.fromkeys(v for a in lit.args for v in variables(a))
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
    values = tuple(resolve(a, trial) for a in lit.args)
    text = format_term(Compound(lit.op, values) if values else lit.op)
    return bool(rows), trial, ("\\+ " + text if lit.negated else text)
