"""Operator-precedence parser for Prolog terms and clauses (fixed standard operator table)."""

from __future__ import annotations

from ..errors import TermSyntaxError
from .lexer import Lexer, Token
from .model import NIL, Compound, Float, String, Term, Var, make_list
from .operators import INFIX, PREFIX, infix_argument_limits, prefix_argument_limit

MAX_NESTING = 1000
# What a level is, said with the refusal: a long flat goal or body nests too (its operators chain to the right).
NESTING_COUNTS = ("each argument, parenthesis and operand after an operator such as ',' or ';' counts a level, "
                  "so a goal or body of more than about 1000 parts is too deep: split it into rules")
_CLOSERS = {")", "]", "}", ",", "|"}
_ARGUMENT_ENDS = frozenset({",", ")", "]", "|"})
_NOT_LEAF = object()


def _describe(token: Token) -> str:
    if token.kind == "eof":
        return "end of input"
    if token.kind == "end":
        return "end of clause '.'"
    if token.kind == "string":
        return "a string"
    if token.kind == "var":
        return f"variable {token.value}"
    return repr(token.value) if token.kind != "qname" else f"'{token.value}'"


class Parser:
    def __init__(self, text: str) -> None:
        self.lexer = Lexer(text)
        self.tokens = self.lexer.tokens()
        self.i = 0
        self.varmap: dict[str, Var] = {}
        self.anon = 0

    # --- token helpers -------------------------------------------------
    def peek(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        token = self.tokens[self.i]
        if token.kind != "eof":
            self.i += 1
        return token

    def error(self, message: str, token: Token) -> TermSyntaxError:
        return self.lexer.error(message, token.offset)

    def expect_punct(self, value: str, context: str) -> None:
        token = self.advance()
        if token.kind != "punct" or token.value != value:
            raise self.error(f"expected '{value}' {context}, found {_describe(token)}", token)

    def at_end(self) -> bool:
        return self.peek().kind == "eof"

    # --- clauses -------------------------------------------------------
    def clause(self, require_end: bool) -> Term:
        self.varmap = {}
        term, _ = self.parse(1200, 0)
        token = self.peek()
        if token.kind == "end":
            self.advance()
        elif require_end or token.kind != "eof":
            expected = "'.'" if require_end else "an operator or the end of the term"
            raise self.error(f"expected {expected}, found {_describe(token)}", token)
        return term

    # --- terms ---------------------------------------------------------
    def parse(self, max_prec: int, depth: int) -> tuple[Term, int]:
        """A term of priority at most max_prec. The grammar is recursive, the parser is not: each rule below
        is a generator that yields `(max_prec, depth)` where it needs a nested term, and this loop keeps the
        pending ones on a list, so nesting costs a list entry, not a Python stack frame."""
        pending = [self._term(max_prec, depth)]
        value = None
        while True:
            try:
                request = pending[-1].send(value)
            except StopIteration as done:
                pending.pop()
                if not pending:
                    return done.value
                value = done.value
                continue
            pending.append(self._term(*request))
            value = None

    def _term(self, max_prec: int, depth: int):
        if depth > MAX_NESTING:
            raise self.error(f"term nested more than {MAX_NESTING} levels deep ({NESTING_COUNTS})", self.peek())
        left, left_prec = yield from self.primary(max_prec, depth)
        while True:
            token = self.peek()
            if token.kind == "name" and token.value in INFIX:
                name = token.value
            elif token.kind == "punct" and token.value in (",", "|"):
                name = token.value
            else:
                break
            priority, kind = INFIX[name]
            if priority > max_prec:
                break
            left_max, right_max = infix_argument_limits(priority, kind)
            if left_prec > left_max:
                break
            self.advance()
            right, _ = yield (right_max, depth + 1)
            left = Compound(";" if name == "|" else name, (left, right))
            left_prec = priority
        return left, left_prec

    def _starts_term(self, token: Token) -> bool:
        if token.kind in ("eof", "end"):
            return False
        if token.kind == "punct":
            return token.value in ("(", "[", "{")
        if token.kind == "name" and token.value in INFIX and token.value not in PREFIX:
            nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else token
            # `- = x` is an atom followed by `=`, but `\+ =(a, b)` applies `\+`.
            return nxt.kind == "punct" and nxt.value == "(" and not nxt.layout_before
        return True

    def primary(self, max_prec: int, depth: int):
        token = self.advance()
        kind = token.kind
        if kind == "int":
            return token.value, 0
        if kind == "float":
            return Float(token.value), 0  # type: ignore[arg-type]
        if kind == "var":
            return self.variable(token.value), 0  # type: ignore[arg-type]
        if kind == "string":
            return String(token.value), 0  # type: ignore[arg-type]
        if kind == "punct":
            if token.value == "(":
                inner, _ = yield (1200, depth + 1)
                self.expect_punct(")", "to close '('")
                return inner, 0
            if token.value == "[":
                return (yield from self.list_rest(depth)), 0
            if token.value == "{":
                nxt = self.peek()
                if nxt.kind == "punct" and nxt.value == "}":
                    self.advance()
                    return (yield from self.after_name("{}", depth))
                inner, _ = yield (1200, depth + 1)
                self.expect_punct("}", "to close '{'")
                return Compound("{}", (inner,)), 0
            raise self.error(f"expected a term, found {_describe(token)}", token)
        if kind in ("name", "qname"):
            name: str = token.value  # type: ignore[assignment]
            nxt = self.peek()
            if nxt.kind == "punct" and nxt.value == "(" and not nxt.layout_before:
                return (yield from self.after_name(name, depth))
            if kind == "name" and name == "-" and nxt.kind in ("int", "float") and not nxt.layout_before:
                self.advance()
                value = nxt.value
                return (-value if nxt.kind == "int" else Float(-value)), 0  # type: ignore[operator]
            if kind == "name" and name in PREFIX and self._starts_term(nxt):
                priority, op_kind = PREFIX[name]
                priority = min(priority, max_prec) if priority > max_prec else priority
                operand, _ = yield (prefix_argument_limit(priority, op_kind), depth + 1)
                return Compound(name, (operand,)), priority
            if kind == "name" and (name in INFIX or name in PREFIX):
                priority = max(INFIX.get(name, (0,))[0], PREFIX.get(name, (0,))[0])
                return name, (priority if priority <= max_prec else 0)
            return name, 0
        raise self.error(f"expected a term, found {_describe(token)}", token)

    def _leaf_argument(self, depth: int):
        """An argument or list item that is one plain token (most are): read it here instead of starting a
        nested term, which is what makes parsing fast. _NOT_LEAF when anything else follows."""
        if depth + 1 > MAX_NESTING:
            return _NOT_LEAF
        tokens, i = self.tokens, self.i
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following is None or following.kind != "punct" or following.value not in _ARGUMENT_ENDS:
            return _NOT_LEAF
        token = tokens[i]
        kind = token.kind
        if kind == "int":
            value = token.value
        elif kind == "var":
            value = self.variable(token.value)  # type: ignore[arg-type]
        elif kind == "qname" or (kind == "name" and token.value not in INFIX and token.value not in PREFIX):
            value = token.value
        elif kind == "float":
            value = Float(token.value)  # type: ignore[arg-type]
        elif kind == "string":
            value = String(token.value)  # type: ignore[arg-type]
        else:
            return _NOT_LEAF
        self.i = i + 1
        return value

    def _argument(self, depth: int):
        """One argument (priority 999) of a compound or list."""
        value = self._leaf_argument(depth)
        if value is _NOT_LEAF:
            value = (yield (999, depth + 1))[0]
        return value

    def after_name(self, name: str, depth: int):
        """A name already read; read `(args)` if they follow directly."""
        nxt = self.peek()
        if not (nxt.kind == "punct" and nxt.value == "(" and not nxt.layout_before):
            return name, 0
        self.advance()
        args = [(yield from self._argument(depth))]
        while True:
            token = self.advance()
            if token.kind == "punct" and token.value == ",":
                args.append((yield from self._argument(depth)))
            elif token.kind == "punct" and token.value == ")":
                return Compound(name, tuple(args)), 0
            else:
                raise self.error(f"expected ',' or ')' in the arguments of {name}, found {_describe(token)}", token)

    def list_rest(self, depth: int):
        nxt = self.peek()
        if nxt.kind == "punct" and nxt.value == "]":
            self.advance()
            term, _ = yield from self.after_name(NIL, depth)
            return term
        items = [(yield from self._argument(depth))]
        tail: Term = NIL
        while True:
            token = self.advance()
            if token.kind == "punct" and token.value == ",":
                items.append((yield from self._argument(depth)))
            elif token.kind == "punct" and token.value == "|":
                tail = yield from self._argument(depth)
                self.expect_punct("]", "to close the list")
                break
            elif token.kind == "punct" and token.value == "]":
                break
            else:
                raise self.error(f"expected ',', '|' or ']' in a list, found {_describe(token)}", token)
        return make_list(items, tail)

    def variable(self, name: str) -> Var:
        if name == "_":
            self.anon += 1
            return Var("_", self.anon)
        var = self.varmap.get(name)
        if var is None:
            var = self.varmap[name] = Var(name)
        return var


def parse_term(text: str) -> Term:
    """Parse exactly one term; a final `.` is optional. Anything after it is a syntax error (never dropped)."""
    parser = Parser(text)
    if parser.at_end():
        raise parser.error("expected a term, found end of input", parser.peek())
    term = parser.clause(require_end=False)
    if not parser.at_end():
        token = parser.peek()
        raise parser.error(f"expected one term, found more text after it: {_describe(token)}", token)
    return term


def parse_clauses(text: str) -> list[Term]:
    """Parse a program: terms each closed by `.`; variables are scoped per clause."""
    parser = Parser(text)
    clauses = []
    while not parser.at_end():
        clauses.append(parser.clause(require_end=True))
    return clauses
