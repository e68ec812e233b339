"""Built-in predicates: arithmetic, comparison, standard order of terms, unification."""

from __future__ import annotations

import math
from typing import Callable

from ..errors import EvaluationError
from ..terms import Compound, Float, String, Term, Var, format_term, is_ground, map_leaves
from ..terms.lexer import MAX_INTEGER_DIGITS

Number = int | float


def to_number(term: Term) -> Number:
    kind = type(term)
    if kind is int:
        return term  # type: ignore[return-value]
    if kind is Float:
        return term.value  # type: ignore[union-attr]
    if kind is Var:
        raise EvaluationError("arguments are not sufficiently instantiated")
    raise EvaluationError(f"type error: a number was expected, found {format_term(term)}")


def from_number(value: Number) -> Term:
    if type(value) is float:
        if math.isnan(value) or math.isinf(value):
            raise EvaluationError("arithmetic result is not a finite number")
        return Float(value)
    return value  # type: ignore[return-value]


# Integers stay below 10 ** 4000 (as the parser's literals do): every one prints in decimal, and no
# single operation on them holds the interpreter for long. Sizes are checked before computing.
INTEGER_LIMIT = 10 ** MAX_INTEGER_DIGITS
MAX_INTEGER_BITS = INTEGER_LIMIT.bit_length()


def _too_large() -> EvaluationError:
    return EvaluationError(f"integer result with more than {MAX_INTEGER_DIGITS} digits")


def _checked(value):
    """Every arithmetic result passes here: a bounded integer or a finite real, never a complex number."""
    kind = type(value)
    if kind is int:
        if -INTEGER_LIMIT < value < INTEGER_LIMIT:
            return value
        raise _too_large()
    if kind is float:
        return value
    if kind is bool:
        return int(value)
    raise EvaluationError("the result is not a real number")


def _arith(fn: Callable) -> Callable:
    """One place where Python's arithmetic failures become typed evaluation errors."""
    def op(*args):
        try:
            return _checked(fn(*args))
        except EvaluationError:
            raise
        except ZeroDivisionError:
            raise EvaluationError("division by zero") from None
        except OverflowError:
            raise EvaluationError("float overflow") from None
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise EvaluationError(f"{exc}") from None
    return op


def _div(a: Number, b: Number) -> Number:
    if b == 0:
        raise EvaluationError("division by zero")
    if type(a) is int and type(b) is int and a % b == 0:
        return a // b
    return a / b


def _int_op(name: str, fn: Callable[[int, int], int]) -> Callable[[Number, Number], Number]:
    def op(a: Number, b: Number) -> Number:
        if type(a) is not int or type(b) is not int:
            raise EvaluationError(f"type error: {name} needs integers")
        if b == 0 and name in ("//", "mod", "rem", "div"):
            raise EvaluationError("division by zero")
        return fn(a, b)
    return op


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _power(a: Number, b: Number) -> Number:
    if type(a) is int and type(b) is int and b >= 0:
        if a not in (0, 1, -1) and (abs(a).bit_length() - 1) * b >= MAX_INTEGER_BITS:
            raise _too_large()
        return a ** b
    if type(a) is int and type(b) is int:
        # A negative integer exponent, as SWI-Prolog answers it by default (prefer_rationals false):
        # 1 and -1 stay integers (their powers are exact), 0 is a division by zero, others give a float.
        if a == 1:
            return 1
        if a == -1:
            return 1 if b % 2 == 0 else -1
        if a == 0:
            raise EvaluationError("division by zero")
    if a < 0 and float(b) != int(b):
        raise EvaluationError("a negative number to a fractional power is not a real number")
    return float(a) ** float(b)


def _shift_left(a: int, b: int) -> int:
    if b > 0 and a and a.bit_length() + b > MAX_INTEGER_BITS:
        raise _too_large()
    return a << b if b >= 0 else a >> -b


def _shift_right(a: int, b: int) -> int:
    return a >> b if b >= 0 else _shift_left(a, -b)


def _float(a: Number) -> float:
    return float(a)


def _round(a: Number) -> int:
    """ISO round/1: the nearest integer, halves away from zero (Python's round() takes halves to even)."""
    if type(a) is int:
        return a
    magnitude = abs(a)
    whole = math.floor(magnitude)
    if magnitude - whole >= 0.5:  # exact: both are floats within a factor of two, or whole is 0
        whole += 1
    return -whole if a < 0 else whole


BINARY: dict[str, Callable[[Number, Number], Number]] = {name: _arith(fn) for name, fn in {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _div,
    "//": _int_op("//", _trunc_div),
    "div": _int_op("div", lambda a, b: a // b),
    "mod": _int_op("mod", lambda a, b: a % b),
    "rem": _int_op("rem", lambda a, b: a - b * _trunc_div(a, b)),
    "min": lambda a, b: a if a <= b else b,
    "max": lambda a, b: a if a >= b else b,
    "**": _power,
    "^": _power,
    ">>": _int_op(">>", _shift_right),
    "<<": _int_op("<<", _shift_left),
    "/\\": _int_op("/\\", lambda a, b: a & b),
    "\\/": _int_op("\\/", lambda a, b: a | b),
    "xor": _int_op("xor", lambda a, b: a ^ b),
}.items()}

UNARY: dict[str, Callable[[Number], Number]] = {name: _arith(fn) for name, fn in {
    "-": lambda a: -a,
    "+": lambda a: a,
    "abs": abs,
    "sign": lambda a: (a > 0) - (a < 0) if type(a) is int else math.copysign(1.0, a) if a else 0.0,
    "truncate": lambda a: int(a),
    "round": _round,
    "ceiling": lambda a: math.ceil(a),
    "floor": lambda a: math.floor(a),
    "float": _float,
    "integer": _round,
    "sqrt": lambda a: math.sqrt(a) if a >= 0 else _raise("sqrt of a negative number"),
}.items()}


def _raise(message: str):
    raise EvaluationError(message)


def evaluate(expr: Term) -> Number:
    """The value of a ground arithmetic expression.

    Walked with an explicit stack, so `1+1+...+1` as long as an argument may be never recurses in
    Python; operands are checked before each operation as before."""
    values: list[Number] = []
    pending: list[tuple[Term, bool]] = [(expr, False)]
    while pending:
        node, ready = pending.pop()
        if ready:  # both operands (or the one) are on `values`: apply the function
            fn, args = node.functor, node.args  # type: ignore[union-attr]
            try:
                if len(args) == 2:
                    right = values.pop()
                    values[-1] = BINARY[fn](values[-1], right)
                else:
                    values[-1] = UNARY[fn](values[-1])
            except OverflowError:
                raise EvaluationError("float overflow") from None
            continue
        kind = type(node)
        if kind is int:
            values.append(node)  # type: ignore[arg-type]
        elif kind is Float:
            values.append(node.value)  # type: ignore[union-attr]
        elif kind is Compound:
            fn, args = node.functor, node.args  # type: ignore[union-attr]
            if not (len(args) == 2 and fn in BINARY or len(args) == 1 and fn in UNARY):
                raise EvaluationError(f"type error: {fn}/{len(args)} is not an arithmetic function")
            pending.append((node, True))
            pending.extend((arg, False) for arg in reversed(args))
        elif kind is Var:
            raise EvaluationError("arguments are not sufficiently instantiated")
        elif kind is str and node in ("pi", "e", "inf", "nan", "max_tagged_integer"):
            values.append({"pi": math.pi, "e": math.e}.get(node) or _raise(f"type error: {node} is not supported"))  # type: ignore[arg-type]
        else:
            raise EvaluationError(f"type error: evaluable expected, found {format_term(node)}")
    return values[0]


NUMERIC_COMPARE: dict[str, Callable[[Number, Number], bool]] = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "=<": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "=:=": lambda a, b: a == b,
    "=\\=": lambda a, b: a != b,
}


def order_key(term: Term):
    """A sort key realizing the standard order of terms: Var < Number < Atom < String < Compound.

    Compounds compare by arity, then name, then arguments left to right. The key is the flat preorder
    sequence of the nodes' own keys: each compound's key carries its arity, so no term's sequence is a
    proper prefix of another's and comparing sequences is comparing terms; and a 10,000-item list gives
    a long flat tuple, not a 10,000-deep one."""
    kind = type(term)
    if kind is not Compound:
        return (_node_key(term),)
    keys = []
    stack = [term]
    while stack:
        node = stack.pop()
        keys.append(_node_key(node))
        if type(node) is Compound:
            stack.extend(reversed(node.args))  # type: ignore[union-attr]
    return tuple(keys)


def _node_key(term: Term) -> tuple:
    kind = type(term)
    if kind is int:
        return (1, term, 1)
    if kind is str:
        return (2, term)
    if kind is Float:  # a float before an equal integer, -0.0 before 0.0
        return (1, term.value, 0, math.copysign(1.0, term.value))  # type: ignore[union-attr]
    if kind is String:
        return (3, term.value)  # type: ignore[union-attr]
    if kind is Compound:
        return (4, len(term.args), term.functor)  # type: ignore[union-attr]
    if kind is Var:
        return (0, term.name, term.serial)  # type: ignore[union-attr]
    raise TypeError(f"not a term: {term!r}")


ORDER_COMPARE: dict[str, Callable[[tuple, tuple], bool]] = {
    "@<": lambda a, b: a < b,
    "@>": lambda a, b: a > b,
    "@=<": lambda a, b: a <= b,
    "@>=": lambda a, b: a >= b,
}


def substitute(term: Term, binding: dict) -> Term:
    if type(term) is Compound and is_ground(term):
        return term
    return map_leaves(term, lambda t: binding.get(t, t) if type(t) is Var else t)


def unify(a: Term, b: Term, binding: dict) -> bool:
    """Extend `binding` so that a and b become equal; False (binding possibly extended) if impossible."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        while type(x) is Var and x in binding:
            x = binding[x]
        while type(y) is Var and y in binding:
            y = binding[y]
        if type(x) is Var:
            if x != y:
                binding[x] = y
            continue
        if type(y) is Var:
            binding[y] = x
            continue
        if type(x) is Compound:
            if type(y) is not Compound or x.functor != y.functor or len(x.args) != len(y.args):  # type: ignore[union-attr]
                return False
            stack.extend(zip(x.args, y.args))  # type: ignore[union-attr]
            continue
        if type(x) is not type(y) or x != y:
            return False
    return True


def resolve(term: Term, binding: dict) -> Term:
    """Apply a binding produced by `unify` completely (follows variable chains), without recursing on the
    term's depth (a ground term, however big, is returned as it is)."""
    kind = type(term)
    if kind is Var:
        while type(term) is Var and term in binding:
            term = binding[term]
        return resolve(term, binding) if type(term) is Compound else term
    if kind is Compound:
        if is_ground(term):
            return term
        return map_leaves(term, lambda t: resolve(t, binding) if type(t) is Var else t)
    return term
