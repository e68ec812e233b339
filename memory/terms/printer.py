"""Canonical printing: one text per term, which parses back to the same term."""

from __future__ import annotations

from .lexer import SYMBOL_CHARS
from .model import LIST_FUNCTOR, NIL, Compound, Float, String, Term, Var, list_items, variables
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
    if type(term) is not Compound:  # the common case (an answer's value): no walk needed
        return _fmt_leaf(term, False, frozenset())
    seen: set = set()
    shared: set = set()
    for v in variables(term):
        if v.name == "_":
            (shared if v in seen else seen).add(v)
    return _fmt(term, 1200, False, shared)


def _fmt(term: Term, max_prec: int, operand: bool, shared: set = frozenset()) -> str:  # type: ignore[assignment]
    """Post-order with an explicit stack: a compound's text is joined once its arguments' texts are done, so
    a term nested thousands deep (the engine can build one) prints without recursion."""
    done: list[str] = []
    stack: list = [(term, max_prec, operand, None)]
    while stack:
        node, prec, is_operand, join = stack.pop()
        if join is not None:  # all of node's parts are formatted: combine them
            count = join[0]
            parts = done[len(done) - count:] if count else []
            del done[len(done) - count:]
            done.append(join[1](parts))
            continue
        if type(node) is not Compound:
            done.append(_fmt_leaf(node, is_operand, shared))
            continue
        parts, combine = _compound_layout(node, prec)  # type: ignore[arg-type]
        stack.append((node, prec, is_operand, (len(parts), combine)))
        stack.extend((part, part_prec, part_operand, None) for part, part_prec, part_operand in reversed(parts))
    return done[0]


def _fmt_leaf(term: Term, operand: bool, shared: set) -> str:
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
    raise TypeError(f"not a term: {term!r}")


def plain_call(functor: str, arity: int) -> bool:
    """Whether every compound of this name and arity prints as `name(Arg, ...)`: not as a list, braces or an
    operator (a prefix minus before a number prints either way, so it counts as an operator here)."""
    return not ((functor == LIST_FUNCTOR and arity == 2) or (functor == "{}" and arity == 1)
                or (arity == 2 and functor in INFIX and functor != "|") or (arity == 1 and functor in PREFIX))


def call_prefix(functor: str, leading: tuple) -> str:
    """The text every `functor(...)` whose first arguments are the ground terms `leading` starts with, up to the
    end of the last of them (`edge(5` for `edge(5, X)`): for a name `plain_call` accepts."""
    return format_atom(functor) + "(" + ", ".join(_fmt(arg, 999, False) for arg in leading)


def continued_range(prefix: str) -> tuple[str, str]:
    """The half-open range [low, high) of texts that go on from a `call_prefix` with more arguments: every
    text starting with `edge(5, ` lies in ["edge(5, ", "edge(5,!"), since "!" follows " " in byte order and
    nothing lies between them. For a store's ordered text index."""
    return prefix + ", ", prefix + ",!"


def _plain_layout(functor: str, args: tuple):
    return [(a, 999, False) for a in args], lambda texts: format_atom(functor) + "(" + ", ".join(texts) + ")"


def _compound_layout(term: Compound, max_prec: int):
    """The parts of a compound's text, each (subterm, max priority, is an operand), and how to join their texts."""
    functor, args = term.functor, term.args
    if plain_call(functor, len(args)):
        return _plain_layout(functor, args)
    if functor == LIST_FUNCTOR and len(args) == 2:
        items, tail = list_items(term)
        parts = [(item, 999, False) for item in items]
        if tail != NIL:
            parts.append((tail, 999, False))

            def join_list(texts: list[str]) -> str:
                return "[" + ", ".join(texts[:-1]) + "|" + texts[-1] + "]"
            return parts, join_list
        return parts, lambda texts: "[" + ", ".join(texts) + "]"
    if functor == "{}" and len(args) == 1:
        return [(args[0], 1200, False)], lambda texts: "{" + texts[0] + "}"
    if len(args) == 2 and functor in INFIX and functor != "|":
        priority, kind = INFIX[functor]
        left_max, right_max = infix_argument_limits(priority, kind)

        def join_infix(texts: list[str]) -> str:
            left, right = texts
            if functor == ",":
                text = f"{left}, {right}"
            elif functor == ":" and left[-1] not in SYMBOL_CHARS and right[0] not in SYMBOL_CHARS:
                text = f"{left}:{right}"
            else:
                text = f"{left} {functor} {right}"
            return f"({text})" if priority > max_prec else text
        return [(args[0], left_max, True), (args[1], right_max, True)], join_infix
    if len(args) == 1 and functor in PREFIX and not (functor in ("-", "+") and type(args[0]) in (int, Float)):
        priority, kind = PREFIX[functor]

        def join_prefix(texts: list[str]) -> str:
            text = f"{functor} {texts[0]}"
            return f"({text})" if priority > max_prec else text
        return [(args[0], prefix_argument_limit(priority, kind), True)], join_prefix
    return _plain_layout(functor, args)
