"""Canonical printing: one text per term, which parses back to the same term."""

from __future__ import annotations

from .lexer import SYMBOL_CHARS
from .model import LIST_FUNCTOR, NIL, Compound, Float, String, Term, Var, variables
from .operators import ALL_OPERATORS, INFIX, PREFIX, infix_argument_limits, prefix_argument_limit

_SOLO_ATOMS = frozenset({"[]", "{}", "!", ";"})
_QUOTE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\a": "\\a",
                  "\b": "\\b", "\f": "\\f", "\v": "\\v"}


def _escape(text: str, quote: str) -> str:
    out = []
    for ch in text:
        if ch == quote:
            out.append("\\" + quote)
        elif ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):x}\\")
        else:
            out.append(ch)
    return "".join(out)


def atom_needs_quotes(name: str) -> bool:
    if name in _SOLO_ATOMS:
        return False
    if not name:
        return True
    first = name[0]
    if first.islower() and first.isalpha():
        return not all(c.isalpha() or c in "0123456789_" for c in name)
    if all(c in SYMBOL_CHARS for c in name):
        return name.startswith("/*") or name == "."
    return True


def format_atom(name: str) -> str:
    return "'" + _escape(name, "'") + "'" if atom_needs_quotes(name) else name


def format_float(value: float) -> str:
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}e{exponent}"
    return text


def format_term(term: Term) -> str:
    """The canonical text of a term (variables print by name, anonymous ones as `_`)."""
    seen: set = set()
    shared: set = set()
    for v in variables(term):
        if v.name == "_":
            (shared if v in seen else seen).add(v)
    return _fmt(term, 1200, False, shared)


def _fmt(term: Term, max_prec: int, operand: bool, shared: set = frozenset()) -> str:  # type: ignore[assignment]
    kind = type(term)
    if kind is str:
        text = format_atom(term)  # type: ignore[arg-type]
        if term in (",", "|"):
            return "'" + term + "'"  # type: ignore[operator]
        if operand and term in ALL_OPERATORS:
            return f"({text})"
        return text
    if kind is int:
        return str(term)
    if kind is Float:
        return format_float(term.value)  # type: ignore[union-attr]
    if kind is String:
        return '"' + _escape(term.value, '"') + '"'  # type: ignore[union-attr]
    if kind is Var:
        if term.name == "_":  # type: ignore[union-attr]
            # An anonymous variable that occurs twice must keep its identity in the text.
            return f"_G{term.serial}" if term in shared else "_"  # type: ignore[union-attr]
        return term.name if not term.serial else f"{term.name}_{term.serial}"  # type: ignore[union-attr]
    if kind is Compound:
        return _fmt_compound(term, max_prec, shared)  # type: ignore[arg-type]
    raise TypeError(f"not a term: {term!r}")


def _fmt_compound(term: Compound, max_prec: int, shared: set) -> str:
    functor, args = term.functor, term.args
    if functor == LIST_FUNCTOR and len(args) == 2:
        items = []
        while type(term) is Compound and term.functor == LIST_FUNCTOR and len(term.args) == 2:
            items.append(_fmt(term.args[0], 999, False, shared))
            term = term.args[1]  # type: ignore[assignment]
        body = ", ".join(items)
        if term != NIL:
            body += "|" + _fmt(term, 999, False, shared)
        return "[" + body + "]"
    if functor == "{}" and len(args) == 1:
        return "{" + _fmt(args[0], 1200, False, shared) + "}"
    if len(args) == 2 and functor in INFIX and functor != "|":
        priority, kind = INFIX[functor]
        left_max, right_max = infix_argument_limits(priority, kind)
        left = _fmt(args[0], left_max, True, shared)
        right = _fmt(args[1], right_max, True, shared)
        if functor == ",":
            text = f"{left}, {right}"
        elif functor == ":" and left[-1] not in SYMBOL_CHARS and right[0] not in SYMBOL_CHARS:
            text = f"{left}:{right}"
        else:
            text = f"{left} {functor} {right}"
        return f"({text})" if priority > max_prec else text
    if len(args) == 1 and functor in PREFIX and not (functor in ("-", "+") and type(args[0]) in (int, Float)):
        priority, kind = PREFIX[functor]
        text = f"{functor} {_fmt(args[0], prefix_argument_limit(priority, kind), True, shared)}"
        return f"({text})" if priority > max_prec else text
    return format_atom(functor) + "(" + ", ".join(_fmt(a, 999, False, shared) for a in args) + ")"
