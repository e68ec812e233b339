"""SWI-Prolog (with tabling) and clingo as reference systems for the differential law, where installed.

SWI-Prolog answers many programs in one process: each program's predicates carry their own prefix and are
tabled, and every query runs under a time limit, its answers sorted and printed as one term per line.
clingo computes each program's stable model (a stratified program has exactly one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from memory.terms import Compound, parse_term

SWIPL = shutil.which("swipl")

try:
    import clingo  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the machine
    clingo = None

DRIVER = r"""
:- style_check(-singleton).
:- style_check(-discontiguous).
run :- forall(q(I, J, T, G),
              ( catch(call_with_time_limit(10, findall(T, G, L)), E, (L = error)),
                ( L == error -> S = error ; sort(L, S) ),
                writeq(a(I, J, S)), nl )).
"""


def swi_answers(programs: list) -> dict:
    """{(program index, query index): set of answer tuples, or "error"} for programs given as
    (prefix, tabled predicates [(name, arity)], stored predicates, clause text, [(variables, goal text)])."""
    parts = [":- use_module(library(time)).", DRIVER]
    for index, (prefix, tabled, stored, text, queries) in enumerate(programs):
        parts.append(":- dynamic " + ", ".join(f"{prefix}{name}/{arity}" for name, arity in stored) + ".")
        parts.append(":- table " + ", ".join(f"{prefix}{name}/{arity}" for name, arity in tabled) + ".")
        parts.append(text)
        for j, (names, goal) in enumerate(queries):
            parts.append(f"q({index}, {j}, [{', '.join(names)}], ({goal})).")
    with tempfile.NamedTemporaryFile("w", suffix=".pl", delete=False) as f:
        f.write("\n".join(parts) + "\n")
        path = f.name
    try:
        done = subprocess.run([SWIPL, "-q", "-g", "run", "-t", "halt", path], capture_output=True, text=True,
                              timeout=600, check=False)
    finally:
        os.unlink(path)
    out: dict = {}
    for line in done.stdout.splitlines():
        term = parse_term(line)
        i, j, value = term.args
        out[(i, j)] = "error" if value == "error" else {tuple(_items(row)) for row in _items(value)}
    if not out and done.returncode:
        raise RuntimeError(f"swipl failed: {done.stderr[-2000:]}")
    return out


def _items(term) -> list:
    items = []
    while type(term) is Compound and term.functor == "." and len(term.args) == 2:
        items.append(term.args[0])
        term = term.args[1]
    return items


def clingo_model(text: str) -> dict:
    """{(name, arity): set of tuples} of the program's one stable model (integers as ints)."""
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], text)
    ctl.ground([("base", [])])
    models: list = []
    ctl.solve(on_model=lambda m: models.append(m.symbols(atoms=True)))
    assert len(models) == 1, f"{len(models)} stable models"
    out: dict = {}
    for symbol in models[0]:
        out.setdefault((symbol.name, len(symbol.arguments)), set()).add(
            tuple(a.number for a in symbol.arguments))
    return out
