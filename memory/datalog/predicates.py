"""Predicates as the engine knows them: one small immutable type for every kind of relation.

A predicate is stored (`name/arity`, facts of the evaluated segment), stored in another mounted
segment (`segment:name/arity`), introduced by the demand rewrite (adorned, magic and answer copies
of a predicate for one binding pattern) or auxiliary (a negated conjunction, an aggregate's goal, a
query's answers). Nothing outside this module knows how they are told apart.

Predicates are dict keys wherever the engine keeps relations, so equality and hashing must cost
nothing: equal predicates are the same object (constructors hand out one canonical instance, held
weakly so that names no longer used do not pile up in a long-running server), and equality and
hashing are by identity. Auxiliary predicates are never shared: each one made is a new predicate,
distinct from every other by construction, whatever its printed name.
"""

from __future__ import annotations

import threading
import weakref

RESERVED_PREFIX = "$"  # names starting with it are the engine's; user predicates may not use them

STORED, ADORNED, MAGIC, ANSWER, AUXILIARY = "stored", "adorned", "magic", "answer", "auxiliary"


class Pred:
    """A predicate key: construct with `Pred.stored`, `Pred.in_segment`, `Pred.adorned`, `Pred.magic`,
    `Pred.answer` or `Pred.auxiliary`, never directly."""

    __slots__ = ("kind", "name", "arity", "segment", "base", "adornment", "__weakref__")

    kind: str
    name: str  # the printed name (for demand copies: the base predicate's)
    arity: int
    segment: str | None  # the mounted segment a `segment:name(...)` goal reads; None for this one
    base: "Pred | None"  # the predicate a demand copy stands for
    adornment: str | None  # 'b'/'f' per argument, for demand copies

    # --- constructors --------------------------------------------------------
    @staticmethod
    def stored(name: str, arity: int) -> "Pred":
        """A predicate of the evaluated segment: its stored facts and its rules."""
        return _canonical((STORED, name, arity, None, None, None))

    @staticmethod
    def in_segment(name: str, arity: int, segment: str) -> "Pred":
        """`segment:name/arity`: the stored facts of another mounted segment."""
        return _canonical((STORED, name, arity, segment, None, None))

    @staticmethod
    def adorned(base: "Pred", adornment: str) -> "Pred":
        """`base` computed only for the bindings demanded with this adornment (magic sets)."""
        return _canonical((ADORNED, base.name, base.arity, base.segment, base, adornment))

    @staticmethod
    def magic(base: "Pred", adornment: str) -> "Pred":
        """The demanded bindings (the bound arguments) of `base` under this adornment."""
        return _canonical((MAGIC, base.name, adornment.count("b"), base.segment, base, adornment))

    @staticmethod
    def answer(base: "Pred", adornment: str) -> "Pred":
        """The free arguments of `base`'s answers under this adornment (factored right-linear recursion)."""
        return _canonical((ANSWER, base.name, adornment.count("f"), base.segment, base, adornment))

    @staticmethod
    def auxiliary(label: str, arity: int) -> "Pred":
        """A new internal predicate, equal to no other predicate ever made; `label` (e.g. `neg3`) only names it
        in messages."""
        return _new((AUXILIARY, RESERVED_PREFIX + label, arity, None, None, None))

    # --- properties ----------------------------------------------------------
    @property
    def is_stored(self) -> bool:
        """Stored facts may exist for it (in this segment or a mounted one): loaders are asked for these."""
        return self.kind is STORED

    @property
    def is_local(self) -> bool:
        """A user predicate of the evaluated segment (stored facts and rules of its own)."""
        return self.kind is STORED and self.segment is None

    @property
    def is_adorned(self) -> bool:
        return self.kind is ADORNED

    @property
    def is_magic(self) -> bool:
        return self.kind is MAGIC

    @property
    def is_auxiliary(self) -> bool:
        """Made by the engine (auxiliary or demand copy): no user predicate, never stored."""
        return self.kind is not STORED

    @property
    def original(self) -> "Pred":
        """The predicate a demand copy answers for (adorned and answer copies: their base); itself otherwise."""
        return self.base if self.kind is ADORNED or self.kind is ANSWER else self  # type: ignore[return-value]

    @property
    def indicator(self) -> tuple[str, int]:
        """(name, arity), the way facts and rules are filed in the store."""
        return self.name, self.arity

    def __str__(self) -> str:
        if self.kind is STORED or self.kind is AUXILIARY:
            text = f"{self.name}/{self.arity}"
            return f"{self.segment}:{text}" if self.segment is not None else text
        return f"{RESERVED_PREFIX}{self.kind}({self.base}, {self.adornment})"

    def __repr__(self) -> str:
        return f"Pred({self})"

    # Immutable: copies are the predicate itself; pickling keeps canonical predicates canonical.
    def __copy__(self) -> "Pred":
        return self

    def __deepcopy__(self, memo: dict) -> "Pred":
        return self

    def __reduce__(self):
        key = (self.kind, self.name, self.arity, self.segment, self.base, self.adornment)
        return (_new, (key,)) if self.kind is AUXILIARY else (_canonical, (key,))

    def __setattr__(self, name, value):
        raise AttributeError("predicates are immutable")


_table: "weakref.WeakValueDictionary[tuple, Pred]" = weakref.WeakValueDictionary()
_lock = threading.Lock()


_KINDS = {kind: kind for kind in (STORED, ADORNED, MAGIC, ANSWER, AUXILIARY)}


def _new(key: tuple) -> Pred:
    pred = object.__new__(Pred)
    key = (_KINDS[key[0]], *key[1:])  # the module's own strings: kinds are compared by identity
    for slot, value in zip(("kind", "name", "arity", "segment", "base", "adornment"), key):
        object.__setattr__(pred, slot, value)
    return pred


def _canonical(key: tuple) -> Pred:
    """The one predicate with this key (made on first use; threads asking at once get the same one)."""
    pred = _table.get(key)
    if pred is None:
        with _lock:
            pred = _table.get(key)
            if pred is None:
                pred = _table[key] = _new(key)
    return pred


def is_reserved(name: str) -> bool:
    """Names the engine keeps for its own predicates."""
    return name.startswith(RESERVED_PREFIX)
