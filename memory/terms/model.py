"""The term values.

Atoms are plain Python `str` and integers plain `int`: they are most of the data
and hash fastest, which the engine's joins depend on. Floats, strings, variables
and compound terms get small classes so that `1`, `1.0`, `a` and `"a"` stay four
different terms (Python alone would make `1 == 1.0` and collapse them in a set).
"""

from __future__ import annotations

import math
from typing import Iterator, Union

NIL = "[]"
LIST_FUNCTOR = "."


class Float:
    __slots__ = ("value", "_hash")

    def __init__(self, value: float) -> None:
        self.value = float(value)
        # -0.0 is its own term, as its text is (Prolog's `0.0 == -0.0` fails too): the hash tells the zeros apart
        self._hash = hash(("float", "-0.0" if self.value == 0.0 and math.copysign(1.0, self.value) < 0 else self.value))

    def __eq__(self, other: object) -> bool:
        return type(other) is Float and other.value == self.value and (  # type: ignore[union-attr]
            self.value != 0.0 or math.copysign(1.0, self.value) == math.copysign(1.0, other.value))  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return Float, (self.value,)  # a copy in another process hashes with that process's seed

    def __repr__(self) -> str:
        return f"Float({self.value!r})"


class String:
    """A double-quoted string: a value distinct from the atom with the same text."""

    __slots__ = ("value", "_hash")

    def __init__(self, value: str) -> None:
        self.value = value
        self._hash = hash(("string", value))

    def __eq__(self, other: object) -> bool:
        return type(other) is String and other.value == self.value  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return String, (self.value,)

    def __repr__(self) -> str:
        return f"String({self.value!r})"


class Var:
    """A logic variable. Anonymous `_` variables get distinct serials so they never co-refer."""

    __slots__ = ("name", "serial")

    def __init__(self, name: str, serial: int = 0) -> None:
        self.name = name
        self.serial = serial

    @property
    def anonymous(self) -> bool:
        return self.name == "_"

    def __eq__(self, other: object) -> bool:
        return type(other) is Var and other.name == self.name and other.serial == self.serial  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash(("var", self.name, self.serial))

    def __repr__(self) -> str:
        return f"Var({self.name!r})" if not self.serial else f"Var({self.name!r}, {self.serial})"


class Compound:
    __slots__ = ("functor", "args", "_hash")

    def __init__(self, functor: str, args: tuple) -> None:
        self.functor = functor
        self.args = args
        self._hash = hash((functor, args))

    @property
    def arity(self) -> int:
        return len(self.args)

    def __eq__(self, other: object) -> bool:
        # With an explicit stack: comparing two 10,000-item lists must not recurse 10,000 deep.
        stack = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if type(a) is Compound:
                if (type(b) is not Compound or a._hash != b._hash or a.functor != b.functor  # type: ignore[union-attr]
                        or len(a.args) != len(b.args)):  # type: ignore[union-attr]
                    return False
                stack.extend(zip(a.args, b.args))  # type: ignore[union-attr]
            elif type(a) is not type(b) or a != b:
                return False
        return True

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        return Compound, (self.functor, self.args)

    def __repr__(self) -> str:
        return f"Compound({self.functor!r}, {self.args!r})"


Term = Union[str, int, Float, String, Var, Compound]


def make_list(items: list, tail: Term = NIL) -> Term:
    result = tail
    for item in reversed(items):
        result = Compound(LIST_FUNCTOR, (item, result))
    return result


def list_items(term: Term) -> tuple[list, Term]:
    """Split a list term into its items and its tail (`[]` for a proper list)."""
    items = []
    while type(term) is Compound and term.functor == LIST_FUNCTOR and len(term.args) == 2:
        items.append(term.args[0])
        term = term.args[1]
    return items, term


def fold_postorder(term: Term, leaf, node):
    """Combine a term bottom-up with an explicit stack (a 10,000-item list is a 10,000-deep chain of cells):
    `leaf(t)` for each non-compound subterm, `node(compound, results of its arguments)` for each compound,
    called in post-order (the arguments left to right, then the compound)."""
    if type(term) is not Compound:
        return leaf(term)
    done: list = []  # results of finished subterms, in order
    stack: list = [(term, False)]
    while stack:
        current, expanded = stack.pop()
        if type(current) is not Compound:
            done.append(leaf(current))
        elif expanded:
            count = len(current.args)
            args = tuple(done[len(done) - count:]) if count else ()
            del done[len(done) - count:]
            done.append(node(current, args))
        else:
            stack.append((current, True))
            stack.extend((arg, False) for arg in reversed(current.args))
    return done[0]


def map_leaves(term: Term, convert) -> Term:
    """The term with every non-compound subterm replaced by `convert(subterm)`."""
    return fold_postorder(term, convert, lambda compound, args: Compound(compound.functor, args))


def is_number(term: object) -> bool:
    return (type(term) is int) or (type(term) is Float)


def is_atom(term: object) -> bool:
    return type(term) is str


def is_callable(term: object) -> bool:
    return type(term) is str or type(term) is Compound


def indicator(term: Term) -> tuple[str, int]:
    """Name and arity of a callable term."""
    if type(term) is str:
        return term, 0
    if type(term) is Compound:
        return term.functor, len(term.args)
    raise TypeError(f"not callable: {term!r}")


def variables(term: Term) -> Iterator[Var]:
    """Variables of a term, left to right, with repeats."""
    stack = [term]
    while stack:
        t = stack.pop()
        if type(t) is Var:
            yield t
        elif type(t) is Compound:
            stack.extend(reversed(t.args))


def is_ground(term: Term) -> bool:
    kind = type(term)
    if kind is Var:
        return False
    if kind is not Compound:  # atoms and numbers: the common case, no walk needed
        return True
    for _ in variables(term):
        return False
    return True


def variant(a: Term, b: Term) -> bool:
    """True when a and b are equal up to a consistent renaming of variables."""
    forward: dict[Var, Var] = {}
    backward: dict[Var, Var] = {}
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is Var:
            if type(y) is not Var:
                return False
            if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
                return False
        elif type(x) is Compound:
            if type(y) is not Compound or x.functor != y.functor or len(x.args) != len(y.args):
                return False
            stack.extend(zip(x.args, y.args))
        elif type(x) is not type(y) or x != y:
            return False
    return True
