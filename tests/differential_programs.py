"""Random programs of the whole dialect for the differential law (tests/test_differential_law.py).

A program is layered: stored predicates e/2, f/1, g/2 at layer 0, derived a/2, b/1 at layer 1, c/2, d/1
at 2, h/2, k/1 at 3. A rule's positive literals read its own layer (recursion of every shape: left,
right, non-linear, mutual) or lower ones; its negations and aggregates read lower layers only, so every
program is stratified. Bodies are written in Prolog's order (positive literals, then `is`, comparisons,
negations and aggregates, each with its inputs bound before it), so SWI-Prolog, clingo, the oracle and
the engine must all give the same answers: none may refuse one. `is` appears only in rules that read
lower layers, so every model is finite.

Each program renders as our Prolog text, as SWI-Prolog text with its predicates prefixed (many
programs share one SWI-Prolog process), and as a clingo program (negated conjunctions and negations
with local variables through a guarded auxiliary, aggregates as #count/#sum/#max/#min).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

DOMAIN = (0, 1, 2, 3)
STORED = [("e", 2), ("f", 1), ("g", 2)]
DERIVED = [[("a", 2), ("b", 1)], [("c", 2), ("d", 1)], [("h", 2), ("k", 1)]]
LAYER = {**{p: 0 for p in STORED}, **{p: i + 1 for i, layer in enumerate(DERIVED) for p in layer}}
VARS = ("X", "Y", "Z", "W")
OPS = ("<", ">", "=<", ">=", "=:=", "=\\=")
CLINGO_OPS = {"<": "<", ">": ">", "=<": "<=", ">=": ">=", "=:=": "=", "=\\=": "!="}


@dataclass
class Program:
    rules: list  # (head (name, args), body goals)
    facts: dict  # (name, arity) -> sorted list of tuples
    preds: list  # derived predicates, in layer order
    queries: list = field(default_factory=list)  # goal texts
    swi_queries: list = field(default_factory=list)  # the same, as SWI-Prolog is asked them (see `goal`)
    clingo: bool = True  # whether clingo can state it (it has no set aggregate)

    def text(self, prefix: str = "", swi: bool = False) -> str:
        return "\n".join(_clause(head, body, prefix, swi) for head, body in self.rules)

    def swi_facts(self, prefix: str) -> str:
        return "\n".join(f"{_lit(name, t, prefix)}." for (name, _), ts in self.facts.items() for t in ts)

    def edb(self) -> dict:
        return {key: list(ts) for key, ts in self.facts.items()}


# --- rendering ------------------------------------------------------------------------------------------

def _arg(a) -> str:
    return str(a)


def _lit(name: str, args, prefix: str = "") -> str:
    return f"{prefix}{name}({', '.join(map(_arg, args))})" if args else f"{prefix}{name}"


def expr(e) -> str:
    if type(e) is tuple:
        if e[0] == "neg":
            return f"-({expr(e[1])})"
        return f"({expr(e[1])} {e[0]} {expr(e[2])})"
    return str(e)


def goal(g, prefix: str = "", swi: bool = False) -> str:
    kind = g[0]
    if kind == "lit":
        return _lit(g[1], g[2], prefix)
    if kind == "cmp":
        return f"{expr(g[2])} {g[1]} {expr(g[3])}"
    if kind == "is":
        return f"{g[1]} is {expr(g[2])}"
    if kind == "or":
        left = ", ".join(goal(x, prefix, swi) for x in g[1])
        right = ", ".join(goal(x, prefix, swi) for x in g[2])
        return f"({left} ; {right})"
    if kind == "not":
        inner = ", ".join(goal(x, prefix, swi) for x in g[1])
        return f"\\+ {inner}" if len(g[1]) == 1 else f"\\+ ({inner})"
    _, spec, template, inner, result = g
    inner_text = ", ".join(goal(x, prefix, swi) for x in inner)
    spec_text = spec if template is None else f"{spec}({expr(template)})"
    if swi:
        # SWI-Prolog 9.0's max/min fold starts from the template and the result: of no solutions it answers a
        # compound template unevaluated, and with the result bound (a tabled call c(0, Z)) it succeeds for any
        # value. For it alone: a fresh variable over `is`, and a fresh result unified afterwards.
        if spec in ("max", "min"):
            inner_text, spec_text = f"{inner_text}, T_{result} is {expr(template)}", f"{spec}(T_{result})"
        return f"aggregate_all({spec_text}, ({inner_text}), A_{result}), {result} = A_{result}"
    return f"aggregate_all({spec_text}, ({inner_text}), {result})"


def _clause(head, body, prefix: str = "", swi: bool = False) -> str:
    return f"{_lit(*head, prefix)} :- {', '.join(goal(g, prefix, swi) for g in body)}."


def _goal_vars(g) -> set:
    if g[0] == "lit":
        return {a for a in g[2] if type(a) is str and a != "_"}
    if g[0] == "cmp":
        return _expr_vars(g[2]) | _expr_vars(g[3])
    if g[0] == "is":
        return {g[1]} | _expr_vars(g[2])
    if g[0] == "not":
        return set().union(*(_goal_vars(x) for x in g[1]))
    if g[0] == "or":
        return set().union(*(_goal_vars(x) for x in g[1] + g[2]))
    return set().union(*(_goal_vars(x) for x in g[3])) | _expr_vars(g[2]) | {g[4]}


def _expr_vars(e) -> set:
    if e is None:
        return set()
    if type(e) is tuple:
        return set().union(*(_expr_vars(x) for x in e[1:]))
    return {e} if type(e) is str else set()


def clingo_text(prog: Program) -> str:
    """The program for clingo: one stable model, the same as the Prolog reading of the program."""
    lines = [f"{_lit(name, t)}." for (name, _), ts in prog.facts.items() for t in ts]
    aux = 0
    for head, body in prog.rules:
        parts, before, bound = [], [], set()
        for g in body:
            if g[0] in ("lit", "cmp", "is"):
                text = _clingo_goal(g)
                parts.append(text)
                before.append(text)
                bound |= _goal_vars(g)
            elif g[0] == "not":
                inner_vars = _goal_vars(g)
                if len(g[1]) == 1 and inner_vars <= bound and "_" not in g[1][0][2]:
                    parts.append("not " + _clingo_goal(g[1][0]))
                else:  # negated conjunction, or local variables: a guarded auxiliary (clingo's safety)
                    aux += 1
                    shared = sorted(inner_vars & bound)
                    name = f"neg_aux{aux}"
                    lines.append(f"{_lit(name, shared)} :- {', '.join(before + [_clingo_goal(x) for x in g[1]])}.")
                    parts.append("not " + _lit(name, shared))
            else:
                _, spec, template, inner, result = g
                # one element per alternative, numbered (so each alternative's solutions count, as in Prolog)
                sides = [g0 + inner[1:] for g0 in (inner[0][1], inner[0][2])] if inner[0][0] == "or" else [inner]
                elements, counted = [], []
                for number, side in enumerate(sides):
                    local = sorted(set().union(*(_goal_vars(x) for x in side)))
                    conds = ", ".join(_clingo_goal(x) if x[0] != "not" else "not " + _clingo_goal(x[1][0])
                                      for x in side)
                    terms = ", ".join(local + [str(number)])
                    value = "" if spec == "count" else f"{expr(template)}, "
                    elements.append(f"{value}{terms} : {conds}")
                    counted.append(f"{terms} : {conds}")
                parts.append(f"{result} = #{spec}{{ {' ; '.join(elements)} }}")
                if spec in ("max", "min"):  # clingo's max of nothing is #inf; Prolog's fails
                    parts.append(f"#count{{ {' ; '.join(counted)} }} > 0")
                bound.add(result)
                before.append(parts[-1])
        lines.append(f"{_lit(*head)} :- {', '.join(parts)}.")
    return "\n".join(lines)


def _clingo_goal(g) -> str:
    if g[0] == "lit":
        return _lit(g[1], g[2])
    if g[0] == "cmp":
        return f"{expr(g[2])} {CLINGO_OPS[g[1]]} {expr(g[3])}"
    return f"{g[1]} = {expr(g[2])}"


# --- generation -----------------------------------------------------------------------------------------

class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def program(self) -> Program:
        rng = self.rng
        facts = {}
        for name, arity in STORED:
            n = rng.randint(0, 6 if arity == 2 else 3)
            facts[(name, arity)] = sorted({tuple(rng.choice(DOMAIN) for _ in range(arity)) for _ in range(n)})
        layers = rng.randint(1, 3)
        preds = [p for layer in DERIVED[:layers] for p in layer]
        prog = Program([], facts, preds)
        for pred in preds:
            for _ in range(rng.choice((1, 1, 2, 2, 3))):
                prog.rules.append(self.rule(pred, prog))
        prog.queries, prog.swi_queries = self.queries(prog)
        return prog

    def _args(self, arity: int, pool: list, fresh_ok: bool = True) -> list:
        rng = self.rng
        out = []
        for _ in range(arity):
            r = rng.random()
            if r < 0.12:
                out.append(rng.choice(DOMAIN))
            elif pool and (r < 0.75 or not fresh_ok):
                out.append(rng.choice(pool))
            else:
                out.append(rng.choice(VARS))
        return out

    def rule(self, head_pred, prog: Program):
        rng = self.rng
        layer = LAYER[head_pred]
        lower = [p for p in STORED + prog.preds if LAYER[p] < layer]
        same = [p for p in prog.preds if LAYER[p] == layer]
        body, bound = [], []
        for _ in range(rng.choice((1, 1, 2, 2, 3))):
            pred = rng.choice(same) if rng.random() < 0.35 else rng.choice(lower)
            args = self._args(pred[1], bound)
            body.append(("lit", pred[0], args))
            bound += [a for a in args if type(a) is str and a not in bound]
        recursive = any(LAYER[(g[1], len(g[2]))] == layer for g in body)
        locals_ = iter(f"L{i}" for i in range(1, 20))
        if bound and not recursive and rng.random() < 0.25:
            body.append(("is", "V", self._expr(bound)))
            bound.append("V")
        if bound and rng.random() < 0.3:
            right = rng.choice([rng.choice(DOMAIN), rng.choice(bound), self._expr(bound)])
            body.append(("cmp", rng.choice(OPS), rng.choice(bound), right))
        if rng.random() < 0.35:
            body.append(self._negation(lower, bound, locals_))
        if rng.random() < 0.3:
            agg = self._aggregate(lower, bound, locals_, recursive, prog)
            body.append(agg)
            if agg[1] != "set":  # a list would meet arithmetic downstream: a set's value is checked in proofs
                bound.append(agg[4])
            if agg[1] != "set" and rng.random() < 0.3:
                body.append(("cmp", rng.choice(OPS), agg[4], rng.choice(DOMAIN)))
        head_args = [rng.choice(bound) if bound and rng.random() < 0.9 else rng.choice(DOMAIN)
                     for _ in range(head_pred[1])]
        return (head_pred[0], head_args), body

    def _expr(self, pool: list):
        rng = self.rng
        a = rng.choice(pool)
        shape = rng.randrange(4)
        if shape == 0:
            return ("+", a, rng.choice(DOMAIN))
        if shape == 1:
            return ("-", a, rng.choice(pool))
        if shape == 2:
            return ("*", a, rng.choice((2, 3)))
        return ("neg", a)

    def _negation(self, lower: list, bound: list, locals_):
        rng = self.rng
        pred = rng.choice(lower)
        if rng.random() < 0.35 and bound:  # a negated conjunction over a local variable and a bound one
            local = next(locals_)
            args = [local] + self._args(pred[1] - 1, bound, fresh_ok=False)
            return ("not", [("lit", pred[0], args), ("cmp", rng.choice(OPS), local, rng.choice(bound))])
        args = []
        for _ in range(pred[1]):
            r = rng.random()
            if r < 0.15:
                args.append("_")
            elif r < 0.35:
                args.append("L0")  # a local variable, repeated when it comes twice: e(L0, L0)
            elif r < 0.5 or not bound:
                args.append(rng.choice(DOMAIN))
            else:
                args.append(rng.choice(bound))
        return ("not", [("lit", pred[0], args)])

    def _aggregate(self, lower: list, bound: list, locals_, recursive: bool, prog: Program):
        rng = self.rng
        inner, inner_vars = [], []
        for _ in range(rng.choice((1, 1, 2))):
            pred = rng.choice(lower)
            args = []
            for _ in range(pred[1]):
                r = rng.random()
                if r < 0.3 and bound:
                    args.append(rng.choice(bound))  # a group variable
                elif r < 0.4:
                    args.append(rng.choice(DOMAIN))
                elif inner_vars and r < 0.6:
                    args.append(rng.choice(inner_vars))
                else:
                    local = next(locals_)
                    inner_vars.append(local)
                    args.append(local)
            inner.append(("lit", pred[0], args))
        if inner_vars and rng.random() < 0.25:
            # a disjunction: each alternative's solutions count (a value in both counts twice, as in Prolog)
            pred = rng.choice(lower)
            other = ("lit", pred[0], [rng.choice(inner_vars) if rng.random() < 0.6 else
                                      rng.choice(bound) if bound and rng.random() < 0.5 else rng.choice(DOMAIN)
                                      for _ in range(pred[1])])
            inner = [("or", inner, [other])]
            inner_vars = [v for v in inner_vars if v in other[2]]  # bound in every alternative
        visible = inner_vars + [v for v in bound if v in set().union(*map(_goal_vars, inner))]
        if visible and rng.random() < 0.3:
            inner.append(("cmp", rng.choice(OPS), rng.choice(visible), rng.choice(DOMAIN)))
        if visible and rng.random() < 0.2:
            pred = rng.choice(lower)
            inner.append(("not", [("lit", pred[0], [rng.choice(visible) for _ in range(pred[1])])]))
        spec = rng.choice(("count", "count", "sum", "max", "min", "set"))
        template = None
        if spec != "count":
            if not inner_vars:
                spec = "count"
            else:
                # (a variable from outside only where the rule is not recursive: sum(U * X) could grow forever)
                pool = inner_vars + (list(bound) if not recursive and spec != "set" else [])
                template = rng.choice(inner_vars) if spec == "set" or rng.random() < 0.4 else self._expr(pool)
                if spec != "set" and template not in inner_vars and type(template) is tuple:
                    # the expression must read a local variable (else it is constant over the goal)
                    template = (template[0], rng.choice(inner_vars), *template[2:])
        if spec == "set":
            prog.clingo = False
        return ("agg", spec, template, inner, next(locals_).replace("L", "N"))

    def queries(self, prog: Program) -> list:
        rng = self.rng
        out = []
        for name, arity in prog.preds:  # every derived relation in full, then bound goals
            out.append(_lit(name, VARS[:arity]))
        for _ in range(2):
            name, arity = rng.choice(prog.preds)
            args = [rng.choice(DOMAIN) if rng.random() < 0.6 else v for v in VARS[:arity]]
            out.append(_lit(name, args))
        name, arity = rng.choice([p for p in prog.preds if p[1] == 2])
        other, other_arity = rng.choice(prog.preds + STORED)
        local = ", ".join(["X"] + ["U"] * (other_arity - 1))
        choice = rng.randrange(9)
        asked = [
            f"aggregate_all(count, {name}(X, Y), N)",
            f"aggregate_all(sum(X * Y), {name}(X, Y), S)",
            f"aggregate_all(max(Y - X), {name}(X, Y), M)",
            f"aggregate_all(min(X + Y), {name}(X, Y), M)",
            f"{name}(X, Y), \\+ {other}({local})",
            f"{name}(X, Y), X < Y",
            f"{name}(X, _), aggregate_all(count, {name}(X, Z), N)",
            f"{name}(X, Y), \\+ ({name}(Y, Z), Z > X)",
            f"{name}(X, _), aggregate_all(bag(Y), {name}(X, Y), L)",
        ][choice]
        swi = {2: f"aggregate_all(max(T), ({name}(X, Y), T is Y - X), M)",  # (see `goal`)
               3: f"aggregate_all(min(T), ({name}(X, Y), T is X + Y), M)",
               # SWI-Prolog's bag keeps its solutions' order; ours is the standard order of the same values
               8: f"{name}(X, _), aggregate_all(bag(Y), {name}(X, Y), B), msort(B, L)"}.get(choice, asked)
        return out + [asked], out + [swi]
