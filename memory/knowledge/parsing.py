"""Turning argument text into checked facts, rules and goals."""

from __future__ import annotations

from itertools import repeat

from ..datalog.program import check_user_predicate
from ..errors import InvalidArguments, InvalidProgram, TermSyntaxError
from ..terms import Compound, Term, Var, format_term, map_leaves, parse_term, variables
from ..store.repository import NewFact
from ..terms.plain import is_plain_atom, plain_block_forms, plain_cell_forms, plain_forms
from ..validation import MAX_TEXT_CHARS, require_text


def _predicate_term(text: object, argument: str, example: str) -> Term:
    """An atom or compound term naming a user predicate (not a rule, not a builtin)."""
    return _check_predicate_term(parse_term(require_text(argument, text)), argument, example)


def _check_predicate_term(term: Term, argument: str, example: str) -> Term:
    if type(term) is Compound and term.functor == ":-":
        raise InvalidArguments(f"{argument} must not contain rule syntax (use define_rule for rules)", argument=argument)
    if type(term) not in (str, Compound):
        raise InvalidArguments(f"'{argument}' must be {example}, not {format_term(term)}", argument=argument)
    try:
        check_user_predicate(term, "fact")
    except InvalidProgram as exc:
        raise InvalidArguments(exc.message, argument=argument) from None
    return term


FACT_EXAMPLE = "an atom or compound term such as human(socrates)"


def parse_fact(text: object, argument: str = "fact") -> Term:
    """A ground atom or compound term that is a user predicate."""
    return check_fact(_predicate_term(text, argument, FACT_EXAMPLE), argument)


def plain_fact(name: str, args: list) -> Term | None:
    """`name(args...)` as a fact when the name and the arguments are plain (memory.terms.plain): exactly what
    parse_fact gives for its canonical text, built without printing and parsing it. None when it is not plain
    or not acceptable (the caller then takes the general way, which says why)."""
    forms = plain_forms(name, args) if _plain_predicate(name, len(args)) else None
    return None if forms is None or len(forms[0]) > MAX_TEXT_CHARS else Compound(name, tuple(args))


def plain_row(name: str, cells: list[str]) -> NewFact | None:
    """The fact `name(cells...)` of a CSV row, already in the form the store keeps (new_fact's), when its
    cells are plain atoms' names and plain integers' canonical digits: what printing and parsing the fact,
    then encoding it, give, built straight from the text as read. None otherwise (the general way)."""
    forms = plain_cell_forms(cells) if _plain_predicate(name, len(cells)) else None
    if forms is None:
        return None
    text = f"{name}({forms[0]})"
    return NewFact(name, len(cells), text, forms[1]) if len(text) <= MAX_TEXT_CHARS else None


def plain_rows(name: str, width: int, body: str) -> list[NewFact] | None:
    """plain_row for each line of `body` (CSV lines of `width` cells joined by `\n`, none after the last) at
    once, or None unless every line is plain."""
    forms = plain_block_forms(name, body, width) if _plain_predicate(name, width) else None
    if forms is None or max(map(len, forms[0])) > MAX_TEXT_CHARS:
        return None
    # tuple.__new__ builds each NewFact without a Python-level call (what NewFact._make does, minus the frame)
    return list(map(tuple.__new__, repeat(NewFact), zip(repeat(name), repeat(width), *forms)))


_PLAIN_PREDICATES: dict[tuple[str, int], bool] = {}


def _plain_predicate(name: str, arity: int) -> bool:
    """Whether facts `name/arity` with plain arguments may be built directly: a plain name that
    check_user_predicate accepts (remembered: an import asks once per row)."""
    key = (name, arity)
    known = _PLAIN_PREDICATES.get(key)
    if known is None:
        known = arity > 0 and is_plain_atom(name)
        if known:
            try:
                check_user_predicate(Compound(name, (0,) * arity), "fact")
            except InvalidProgram:
                known = False
        if len(_PLAIN_PREDICATES) >= 1024:  # names come from input: keep the memo small
            _PLAIN_PREDICATES.clear()
        _PLAIN_PREDICATES[key] = known
    return known


def check_fact(term: Term, argument: str = "fact") -> Term:
    """An already parsed term as a fact (program text, snapshots): the checks of parse_fact, without
    printing and re-parsing it (its canonical text may be longer than an argument may be)."""
    term = _check_predicate_term(term, argument, FACT_EXAMPLE)
    unbound = sorted({v.name for v in variables(term)})
    if unbound:
        raise InvalidArguments(
            f"a fact must be ground, but '{argument}' contains variable {', '.join(unbound)}", argument=argument
        )
    return term


def parse_pattern(text: object, argument: str) -> Term:
    """A fact pattern: like a fact, but variables are wildcards."""
    return _predicate_term(text, argument, "a pattern such as project(beta, _)")


def parse_name(text: object, argument: str) -> str:
    """A predicate name: the atom the text denotes (quoted or not), never an operator expression."""
    source = require_text(argument, text, max_chars=1024)
    try:
        term = parse_term(source)
    except TermSyntaxError as exc:
        raise InvalidArguments(f"'{argument}' must be a plain atom such as task_status ({exc.message})",
                               argument=argument) from None
    if type(term) is not str:
        raise InvalidArguments(f"'{argument}' must be an atom such as task_status, not {format_term(term)}",
                               argument=argument)
    return term


def _shift_anonymous(term: Term, offset: int) -> Term:
    return map_leaves(term, lambda t: Var("_", t.serial + offset) if type(t) is Var and t.anonymous else t)


def parse_rule(head: object, body: object) -> Term:
    """`Head :- Body` from separately parsed parts (never spliced into one text)."""
    head_term = parse_term(require_text("head", head))
    body_term = parse_term(require_text("body", body))
    if type(head_term) is Compound and head_term.functor == ":-":
        raise InvalidArguments("'head' must be a single goal, not a rule", argument="head")
    if type(body_term) is Compound and body_term.functor == ":-":
        raise InvalidArguments("'body' must not contain ':-'", argument="body")
    return Compound(":-", (head_term, _shift_anonymous(body_term, 1_000_000)))


def parse_goal(text: object, argument: str = "goal") -> Term:
    goal = parse_term(require_text(argument, text))
    if type(goal) is Compound and goal.functor == ":-":
        raise InvalidArguments(f"'{argument}' must be a goal, not a rule", argument=argument)
    return goal
