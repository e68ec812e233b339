"""From parsed clauses to the engine's rules: body normalization into literals.

A source clause `H :- B` becomes one or more internal `Rule`s: disjunctions are
expanded (one rule per alternative), and negated conjunctions and aggregate
goals become auxiliary predicates whose names start with `$` (which user
predicates may not use). Every internal rule remembers the source clause it came
from, so proofs always speak of the rule the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Union

from ..errors import InvalidProgram
from ..terms import Compound, Float, String, Term, Var, format_term, indicator, variables
from . import builtin_table
from .builtin_table import BUILTINS, builtin
from .builtins import resolve
from .predicates import Pred, is_reserved

BUILTIN_OPS = frozenset(BUILTINS)  # the builtins' names (`builtin(name, arity)` says whether a call is one)
AGGREGATES = frozenset({"count", "sum", "max", "min", "bag", "set"})
MAX_ALTERNATIVES = 256

# Prolog constructs that take goals (or control how goals run) and that this engine does not run: a call is
# refused with the reason, and no fact or rule head may use the name (it could never be queried). Every other
# Prolog built-in name (open, write, assert, halt, ...) is a plain predicate here: the engine does no I/O and
# never changes the knowledge base, so `open(issue_42)` is a fact like any other (see reserved_reason).
UNSUPPORTED = {
    "!": "cut has no meaning in Datalog", "->": "if-then-else is not supported; use two rules",
    "*->": "soft-cut is not supported", "call": "call/N is not supported: write the goal directly",
    "findall": "use aggregate_all(bag(T), Goal, L)", "bagof": "use aggregate_all(bag(T), Goal, L)",
    "setof": "use aggregate_all(set(T), Goal, S)", "forall": "use \\+ (Cond, \\+ Action)",
    "catch": "exceptions are not part of Datalog", "throw": "exceptions are not part of Datalog",
}
# Control constructs the normalizer itself reads, whatever their arity.
CONTROL_NAMES = frozenset({",", ";", "\\+", "not", "->", ":-", "|"})
CONTROL_ATOMS = frozenset({"true", "fail", "false"})


def reserved_reason(name: str, arity: int) -> str | None:
    """Why `name/arity` cannot be a user predicate (a fact, a rule head, a rename target), or None when it can.

    The one rule every write and every query applies: a name is reserved when the engine evaluates it itself
    (a builtin of builtin_table at that arity, a control construct, aggregate_all/3, true/fail/false) or refuses
    it in a query (UNSUPPORTED, any arity). Anything else is a predicate like any other, stored and queried."""
    if is_reserved(name):
        return "predicate names starting with '$' are reserved"
    if name in UNSUPPORTED:
        return f"{name} is a Prolog construct this engine does not run ({UNSUPPORTED[name]})"
    if name in CONTROL_NAMES:
        return f"{name} is a control construct"
    if builtin(name, arity) is not None or name == "aggregate_all" and arity == 3 \
            or name in CONTROL_ATOMS and arity == 0:
        return f"{name}/{arity} is a built-in the engine evaluates"
    return None


@dataclass(frozen=True, slots=True)
class Lit:
    """A relational literal: predicate key and argument terms."""

    pred: Pred
    args: tuple


@dataclass(frozen=True, slots=True)
class Inline:
    """An auxiliary predicate evaluated per caller row instead of as a relation: its rules, run with `params`
    (the variables its caller binds) bound. Used where a guard from the caller (see `_guard`) would make the
    auxiliary depend on its caller's recursive head: `c(Z) :- c(Z), \\+ (f(U), U < Z)`."""

    params: tuple
    rules: tuple


@dataclass(frozen=True, slots=True)
class Neg:
    lit: Lit
    # The negated goal as the user wrote it, when `lit` is an auxiliary predicate standing for a conjunction
    # or disjunction: proofs show this goal, never the auxiliary.
    shown: Term | None = field(default=None, compare=False)
    inline: Inline | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Builtin:
    """A call of a builtin (see `builtin_table`), possibly negated."""

    op: str
    args: tuple
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Agg:
    kind: str
    template: Term | None
    goal: Lit  # the auxiliary predicate over all variables of the goal
    group: tuple  # goal variables bound outside the aggregate (the grouping key)
    result: Term
    shown: Term | None = field(default=None, compare=False)  # the goal as the user wrote it (proofs show it)
    inline: Inline | None = field(default=None, compare=False)  # its goal evaluated per group (see Inline)


Literal = Union[Lit, Neg, Builtin, Agg]


@dataclass(eq=False)
class Rule:
    head: Lit
    body: tuple
    source: int  # index into Program.sources
    origin: "Rule | None" = None  # for rewritten rules: the rule whose meaning they carry
    index: int = 0  # position in the evaluated rule list (set by the engine)
    guards: tuple = ()  # an auxiliary rule's leading literals copied from its caller (see `_guard`)
    guarded: frozenset = frozenset()  # the variables its guards are there to bind

    @property
    def meaning(self) -> "Rule":
        return self.origin.meaning if self.origin is not None else self


@dataclass
class SourceRule:
    text: str
    clause: Term
    rule_id: int | None = None  # database id, when the rule is stored


@dataclass
class Program:
    sources: list[SourceRule] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    auxiliaries: int = 0  # auxiliary predicates made so far: numbers their printed names

    def idb(self) -> set:
        return {rule.head.pred for rule in self.rules}


def predicate_key(term: Term, where: str) -> tuple[Pred, tuple]:
    """The predicate key and arguments of a callable term (`seg:goal` keys as `seg:name`)."""
    if type(term) is Compound and term.functor == ":" and len(term.args) == 2:
        module, goal = term.args
        if type(module) is not str:
            raise InvalidProgram(f"a module qualifier must be an atom, not {format_term(module)} ({where})")
        if type(goal) is Compound and goal.functor == ":":
            raise InvalidProgram(f"nested module qualification {format_term(term)} ({where})")
        pred, args = predicate_key(goal, where)
        return Pred.in_segment(pred.name, pred.arity, module), args
    if type(term) is str:
        return Pred.stored(term, 0), ()
    if type(term) is Compound:
        return Pred.stored(term.functor, len(term.args)), term.args
    if type(term) is Var:
        raise InvalidProgram(f"a goal must not be a variable ({where})")
    raise InvalidProgram(f"{format_term(term)} is not a goal ({where})")


def check_user_predicate(term: Term, role: str) -> None:
    """Heads and facts may not use a reserved name (reserved_reason), nor be module-qualified."""
    name, arity = indicator(term)
    reason = reserved_reason(name, arity)
    if reason is not None:
        raise InvalidProgram(reserved_message(name, arity, reason))
    if name == ":" and arity == 2:
        raise InvalidProgram(f"a {role} cannot be module-qualified; write it in its own memory segment")


def reserved_message(name: str, arity: int, reason: str | None = None) -> str:
    """The one refusal of a reserved name, worded the same by every tool that writes one (facts, assumptions,
    rule heads, imports, renames, projections)."""
    return f"{name}/{arity} cannot be a user predicate: {reason or reserved_reason(name, arity)}"


def _dnf(goal: Term, where: str) -> list[list[Term]]:
    if type(goal) is Compound and len(goal.args) == 2:
        if goal.functor == ",":
            left, right = _dnf(goal.args[0], where), _dnf(goal.args[1], where)
            product = [a + b for a in left for b in right]
            if len(product) > MAX_ALTERNATIVES:
                raise InvalidProgram(f"the body expands into more than {MAX_ALTERNATIVES} alternatives ({where})")
            return product
        if goal.functor == ";":
            first = goal.args[0]
            if type(first) is Compound and first.functor in ("->", "*->") and len(first.args) == 2:
                raise InvalidProgram(f"{UNSUPPORTED['->']} ({where})")
            return _dnf(goal.args[0], where) + _dnf(goal.args[1], where)
    return [[goal]]


class Normalizer:
    """Turns source clauses into internal rules, creating auxiliary predicates as needed."""

    def __init__(self, program: Program) -> None:
        self.program = program

    def add_clause(self, clause: Term, text: str | None = None, rule_id: int | None = None) -> int:
        text = text if text is not None else format_term(clause)
        source = len(self.program.sources)
        self.program.sources.append(SourceRule(text, clause, rule_id))
        if type(clause) is Compound and clause.functor == ":-" and len(clause.args) == 2:
            head, body = clause.args
        else:
            head, body = clause, "true"
        if type(head) is Var or type(head) not in (str, Compound):
            raise InvalidProgram(f"a rule head must be an atom or compound term, not {format_term(head)} (rule: {text})")
        check_user_predicate(head, "rule head")
        pred, args = predicate_key(head, f"rule: {text}")
        self.add_rules(Lit(pred, args), body, source, text)
        return source

    def add_rules(self, head: Lit, body: Term, source: int, where: str) -> None:
        """The rules of `head :- body` (one per alternative of the body, plus those of its auxiliary predicates),
        each auxiliary rule given the guards it needs (see `_guard`)."""
        before = len(self.program.rules)
        self._add_rules(head, body, source, where)
        made = self.program.rules[before:]
        by_aux = rules_by_head(r for r in made if r.head.pred.is_auxiliary)
        # A rule comes after the auxiliary rules its body made: from the last back, every rule is guarded
        # before the rules of the auxiliaries its body calls, so those can take guards from its guards.
        for rule in reversed(made):
            for position, literal in enumerate(rule.body):
                aux = literal.lit if isinstance(literal, Neg) else literal.goal if isinstance(literal, Agg) else None
                if aux is not None and aux.pred in by_aux:
                    for inner in by_aux[aux.pred]:
                        _guard(inner, rule, position)

    def _add_rules(self, head: Lit, body: Term, source: int, where: str) -> None:
        for alternative in _dnf(body, f"rule: {where}"):
            literals = []
            dead = False
            for index, goal in enumerate(alternative):
                rest = [head.args, *alternative[:index], *alternative[index + 1:]]
                converted = self.convert(goal, _vars_of(rest), source, where)
                if converted is False:
                    dead = True
                    break
                if converted is not None:
                    literals.append(converted)
            if not dead:
                self.program.rules.append(Rule(head, tuple(literals), source))

    def convert(self, goal: Term, outside: set, source: int, where: str):
        """One body goal as a literal; None for `true`, False for `fail`."""
        if type(goal) is Var:
            raise InvalidProgram(f"a goal must not be a variable (rule: {where})")
        if type(goal) in (int, Float, String):
            raise InvalidProgram(f"{format_term(goal)} is not a goal (rule: {where})")
        if goal == "true":
            return None
        if goal in ("fail", "false"):
            return False
        name, arity = indicator(goal)
        if name in UNSUPPORTED:
            raise InvalidProgram(f"{name}/{arity} is not supported: {UNSUPPORTED[name]} (rule: {where})")
        if (name in ("\\+", "not")) and arity == 1:
            return self.negation(goal.args[0], outside, source, where)  # type: ignore[union-attr]
        if builtin(name, arity) is not None:
            return Builtin(name, goal.args if type(goal) is Compound else ())  # type: ignore[union-attr]
        if name == "aggregate_all" and arity == 3:
            return self.aggregate(goal, outside, source, where)  # type: ignore[arg-type]
        if name in (",", ";") and arity == 2:
            raise InvalidProgram(f"nested control construct in {format_term(goal)} (rule: {where})")
        pred, args = predicate_key(goal, f"rule: {where}")
        return Lit(pred, args)

    def negation(self, inner: Term, outside: set, source: int, where: str):
        alternatives = _dnf(inner, f"rule: {where}")
        if len(alternatives) == 1 and len(alternatives[0]) == 1:
            converted = self.convert(alternatives[0][0], outside, source, where)
            if converted is None:
                return False  # \+ true
            if converted is False:
                return None  # \+ fail
            if isinstance(converted, Lit):
                return Neg(converted)
            if isinstance(converted, Builtin) and converted.op != "is":
                return Builtin(converted.op, converted.args, not converted.negated)
        shared = tuple(v for v in _ordered_vars(inner) if v in outside)
        aux = self.aux_predicate("neg", shared, inner, source, where)
        return Neg(aux, inner)

    def aggregate(self, goal: Compound, outside: set, source: int, where: str) -> Agg:
        spec, inner, result = goal.args
        if type(spec) is str and spec == "count":
            kind, template = "count", None
        elif type(spec) is Compound and len(spec.args) == 1 and spec.functor in AGGREGATES:
            kind, template = spec.functor, spec.args[0]
        else:
            raise InvalidProgram(
                f"aggregate_all/3 takes count, sum(E), max(E), min(E), bag(E) or set(E), not {format_term(spec)} (rule: {where})"
            )
        shown, inner = inner, _name_anonymous(inner)
        goal_vars = tuple(_ordered_vars(inner))
        if template is not None:
            # A template may also use a variable bound outside (`max(U - X)` with X bound before): the auxiliary
            # carries it as a column, which is the same in every solution of a group.
            outer = tuple(v for v in _ordered_vars(template) if v not in goal_vars and v in outside)
            stray = [v for v in _ordered_vars(template) if v not in goal_vars and v not in outside]
            if stray:
                raise InvalidProgram(
                    f"variable {stray[0].name} of the aggregate template occurs neither in its goal nor elsewhere "
                    f"in the rule (rule: {where})"
                )
            goal_vars += outer
        group = tuple(v for v in goal_vars if v in outside)
        alternatives = _dnf(inner, f"rule: {where}")
        if len(alternatives) == 1:
            return Agg(kind, template, self.aux_predicate("agg", goal_vars, inner, source, where), group, result, shown)
        # Prolog counts a solution once per alternative of a disjunction that gives it (`(p(X) ; q(X))` with p(1)
        # and q(1) counts 2): the auxiliary numbers its alternatives in a last column, so each keeps its own.
        self.program.auxiliaries += 1
        pred = Pred.auxiliary(f"agg{self.program.auxiliaries}", len(goal_vars) + 1)
        template_vars = set(variables(template)) if template is not None else set()
        for number, alternative in enumerate(alternatives):
            # A local variable of another alternative is unbound in this one's solutions: its column holds a
            # placeholder, which only counts (a template reading it would meet an unbound variable in Prolog).
            present = _vars_of(alternative)
            absent = [v for v in goal_vars if v not in present and v not in outside]
            if template_vars & set(absent):
                raise InvalidProgram(
                    f"variable {sorted(v.name for v in template_vars & set(absent))[0]} of the aggregate template "
                    f"does not occur in every alternative of its goal (rule: {where})"
                )
            args = tuple(UNBOUND if v in absent else v for v in goal_vars) + (number,)
            self._add_rules(Lit(pred, args), _conjunction(alternative), source, where)
        return Agg(kind, template, Lit(pred, goal_vars + (ALTERNATIVE,)), group, result, shown)

    def aux_predicate(self, kind: str, head_vars: tuple, body: Term, source: int, where: str) -> Lit:
        self.program.auxiliaries += 1
        pred = Pred.auxiliary(f"{kind}{self.program.auxiliaries}", len(head_vars))
        head = Lit(pred, head_vars)
        self._add_rules(head, body, source, where)
        return head


ALTERNATIVE = Var("$alternative")  # an aggregate goal's column numbering its alternatives (no user variable)
UNBOUND = "$unbound"  # the column of a variable an alternative of an aggregate goal does not bind


def _conjunction(goals: list) -> Term:
    term = goals[-1]
    for goal in reversed(goals[:-1]):
        term = Compound(",", (goal, term))
    return term


def _guard(inner: Rule, outer: Rule, position: int) -> None:
    """Give an auxiliary rule the literals of its caller that bind the variables it shares with the caller.

    `top(X) :- n(X), \\+ (n(Y), Y > X)` makes `$neg(X) :- n(Y), Y > X`, where nothing binds X: on its own the
    auxiliary is unsafe, though the rule is safe (X is bound by n(X) before the negation, as in Prolog). The
    guard copies that binding in, `$neg(X) :- n(X), n(Y), Y > X`: the caller only asks the auxiliary about
    rows where its guard holds, so the answers are the same. Guards come only from the literals before the
    negation or aggregate (what Prolog has bound when it runs); a variable bound only after it is refused by
    `check_safety`, which says why."""
    shared = set(inner.head.args) & _outer_vars(outer, position)
    missing = {v for v in shared if type(v) is Var} - bound_variables(inner.body)
    if not missing:
        return
    context = outer.body[:position]
    needed, chosen = set(missing), set()
    changed = True
    while changed:  # the fewest prefix literals binding what is missing, and what those need in turn
        changed = False
        for j, literal in enumerate(context):
            if j in chosen or isinstance(literal, Neg):
                continue
            if _can_bind(literal) & needed:
                chosen.add(j)
                needed |= literal_vars(literal) if isinstance(literal, Builtin) else (
                    set(literal.group) if isinstance(literal, Agg) else set())
                changed = True
    guards = tuple(context[j] for j in sorted(chosen))
    if missing <= bound_variables(guards):
        inner.body = guards + inner.body
        inner.guards, inner.guarded = guards, frozenset(missing)
    # else: nothing before the negation or aggregate binds them; check_safety reports the caller's rule


def drop_guards(inner: Rule, unwanted) -> bool:
    """Take the guard literals `unwanted(literal)` names out of an auxiliary rule, if the others still bind
    what the guards are for (the caller's literals recursive with its head: see `analysis.stratify`)."""
    kept = [g for g in inner.guards if not unwanted(g)]
    if len(kept) == len(inner.guards):
        return False
    runnable = False
    while not runnable:  # without the dropped literals, a kept builtin or aggregate may lack its inputs
        runnable = True
        for g in kept:
            others = bound_variables([k for k in kept if k is not g])
            if isinstance(g, Builtin) and builtin_table.unbound_inputs(g, others) or \
                    isinstance(g, Agg) and not set(g.group) <= others:
                kept.remove(g)
                runnable = False
                break
    kept = tuple(kept)
    if not inner.guarded <= bound_variables(kept):
        return False
    inner.body = kept + inner.body[len(inner.guards):]
    inner.guards = kept
    return True


def _outer_vars(rule: Rule, position: int) -> set:
    """The variables of a rule outside one body literal."""
    out = literal_vars(rule.head)
    for j, literal in enumerate(rule.body):
        if j != position:
            out |= literal_vars(literal)
    return out


def _can_bind(literal: Literal) -> set:
    """The variables a literal may bind when it runs."""
    if isinstance(literal, Lit):
        return literal_vars(literal)
    if isinstance(literal, Builtin):  # what its binding modes bind (a comparison binds nothing)
        if literal.negated:
            return set()
        return _vars_of([literal.args[mode.binds] for mode in BUILTINS[literal.op].modes])
    if isinstance(literal, Agg):
        return _vars_of([literal.result])
    return set()


def _name_anonymous(term: Term) -> Term:
    """Give each `_` in an aggregate goal a name: every solution counts, so they are columns."""
    if type(term) is Var and term.anonymous:
        return Var("_Anon", term.serial)
    if type(term) is Compound:
        return Compound(term.functor, tuple(_name_anonymous(a) for a in term.args))
    return term


def _ordered_vars(term: Term) -> list[Var]:
    seen: dict[Var, None] = {}
    for v in variables(term):
        seen.setdefault(v, None)
    return list(seen)


def _vars_of(terms: Iterable) -> set:
    out: set = set()
    for t in terms:
        if isinstance(t, tuple):
            for a in t:
                out.update(variables(a))
        else:
            out.update(variables(t))
    return out


def bound_variables(body: Iterable, initially: set | None = None) -> set:
    """Variables a body binds, to a fixpoint: positive literals bind all theirs;
    `is`, `=` and aggregates bind their outputs once their inputs are bound."""
    bound = set(initially or ())
    changed = True
    while changed:
        changed = False
        for lit in body:
            new: set = set()
            if isinstance(lit, Lit):
                new = literal_vars(lit)
            elif isinstance(lit, Builtin):
                new = builtin_table.binds(lit, bound)
            elif isinstance(lit, Agg) and set(lit.group) <= bound:
                new = set(variables(lit.result))
            if not new <= bound:
                bound |= new
                changed = True
    return bound


def literal_dependencies(literal: Literal) -> list[tuple]:
    """(predicate read, through negation or aggregation?) for a body literal: none for a builtin, every
    predicate its rules read for an inline negation or aggregate (see `Inline`)."""
    if isinstance(literal, Lit):
        return [(literal.pred, False)]
    if isinstance(literal, (Neg, Agg)):
        if literal.inline is not None:
            return [(pred, True) for rule in literal.inline.rules for lit in rule.body
                    for pred, _ in literal_dependencies(lit)]
        return [(literal.lit.pred if isinstance(literal, Neg) else literal.goal.pred, True)]
    return []


def rules_by_head(rules: Iterable[Rule]) -> dict[Pred, list[Rule]]:
    """The rules of each head predicate, in their order."""
    by_head: dict = {}
    for rule in rules:
        by_head.setdefault(rule.head.pred, []).append(rule)
    return by_head


def body_preds(rules: Iterable) -> set:
    """Every predicate the bodies of these rules read."""
    return {pred for rule in rules for lit in rule.body for pred, _ in literal_dependencies(lit)}


def parse_program(text: str) -> Program:
    """A normalized (not yet analyzed) program from Prolog source text."""
    from ..terms import parse_clauses

    program = Program()
    normalizer = Normalizer(program)
    for clause in parse_clauses(text):
        normalizer.add_clause(clause)
    return program


def literal_vars(literal: Literal) -> set:
    if isinstance(literal, Lit):
        return _vars_of([literal.args])
    if isinstance(literal, Neg):
        return _vars_of([literal.lit.args])
    if isinstance(literal, Builtin):
        return _vars_of([literal.args])
    return set(literal.group) | _vars_of([literal.result])


def literal_term(literal: Lit) -> Term:
    name = literal.pred.name
    goal = Compound(name, literal.args) if literal.args else name
    if literal.pred.segment is not None:
        return Compound(":", (literal.pred.segment, goal))
    return goal


def format_literal(literal: Literal) -> str:
    """A body literal as the user wrote it (auxiliary predicates shown as the goals they stand for)."""
    if isinstance(literal, Lit):
        return format_term(literal_term(literal))
    if isinstance(literal, Neg):
        if literal.shown is not None:
            return format_term(Compound("\\+", (literal.shown,)))
        return "\\+ " + format_literal(literal.lit)
    if isinstance(literal, Builtin):
        text = format_term(Compound(literal.op, literal.args) if literal.args else literal.op)
        return f"\\+ ({text})" if literal.negated else text
    return format_term(aggregate_term(literal))


def aggregate_term(literal: Agg, binding: dict | None = None) -> Term:
    """`aggregate_all(Spec, Goal, Result)` for an aggregate literal, its goal as the user wrote it, with the
    variables `binding` binds replaced by their values."""
    spec = literal.kind if literal.template is None else Compound(literal.kind, (literal.template,))
    goal = literal.shown if literal.shown is not None else literal_term(literal.goal)
    term = Compound("aggregate_all", (spec, goal, literal.result))
    return term if binding is None else resolve(term, binding)
