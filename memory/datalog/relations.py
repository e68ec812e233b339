"""In-memory relations (tuple -> provenance code) with lazily built hash indexes."""

from __future__ import annotations

from itertools import islice
from operator import itemgetter
from typing import Callable, Iterable

EMPTY: tuple = ()

# Provenance code of a tuple: (stamp << RULE_BITS) | rule index. Base facts are 0.
# A tuple's stamp is strictly greater than the stamps of the premises of its first
# derivation, which is what makes proofs finite and rebuildable.
RULE_BITS = 20
RULE_MASK = (1 << RULE_BITS) - 1


def key_function(columns: tuple) -> Callable:
    """Key of a tuple on some columns: the value itself for one column, a tuple for several."""
    if len(columns) == 1:
        return itemgetter(columns[0])
    if not columns:
        return lambda t: ()
    return itemgetter(*columns)


def build_index(tuples: Iterable[tuple], columns: tuple, budget=None) -> dict:
    """A hash index: key on `columns` (see `key_function`) -> the tuples with that key."""
    idx: dict = {}
    _file(idx, key_function(columns), tuples, budget)
    return idx


def index_key(values: tuple):
    """The key under which `build_index` files a tuple with these values in the key columns."""
    return values[0] if len(values) == 1 else values


class Relations:
    def __init__(self) -> None:
        self.rel: dict = {}
        self.indexes: dict = {}

    def get(self, pred) -> dict:
        relation = self.rel.get(pred)
        if relation is None:
            relation = self.rel[pred] = {}
        return relation

    def load(self, pred, tuples: Iterable[tuple]) -> None:
        """Base tuples (provenance code 0); tuples already present keep their code."""
        relation = self.get(pred)
        if relation:
            for t in tuples:
                relation.setdefault(t, 0)
        else:
            relation.update(dict.fromkeys(tuples, 0))

    def index(self, pred, columns: tuple) -> dict:
        per_pred = self.indexes.get(pred)
        if per_pred is None:
            per_pred = self.indexes[pred] = {}
        idx = per_pred.get(columns)
        if idx is None:
            idx = per_pred[columns] = build_index(self.get(pred), columns)
        return idx

    def release(self) -> None:
        """Empty every relation and index gradually (see `release`)."""
        release(self.indexes, self.rel)

    def add(self, pred, new: dict, budget=None) -> None:
        """Merge newly derived tuples (already known to be new) and keep the indexes current."""
        if not new:
            return
        relation = self.get(pred)
        if len(new) <= RELEASE_SLICE:
            relation.update(new)
        else:  # one big update would hold the interpreter lock throughout
            items = iter(new.items())
            while chunk := list(islice(items, RELEASE_SLICE)):
                relation.update(chunk)
                if budget is not None:
                    budget.check()
        for columns, idx in self.indexes.get(pred, {}).items():
            _file(idx, key_function(columns), new, budget)


def _file(idx: dict, key: Callable, tuples: Iterable[tuple], budget=None) -> None:
    """Add tuples to a hash index under their keys (checking the budget now and then: many
    tuples take a while)."""
    for n, t in enumerate(tuples):
        k = key(t)
        bucket = idx.get(k)
        if bucket is None:
            idx[k] = [t]
        else:
            bucket.append(t)
        if budget is not None and not n & 0x7FFF:
            budget.check()


RELEASE_SLICE = 16384


def release(*containers) -> None:
    """Empty containers (and the dicts and sets inside them), freeing their contents a slice at a time.

    Dropping a container of millions of tuples frees them all in one C call that holds the
    interpreter lock throughout, and so stalls every other thread (the server's protocol loop).
    Here the contents move to lists first (cheap: nothing is freed), the containers are cleared,
    and the lists are cut from the end a slice at a time, letting other threads in between.
    Only for containers nothing else still needs."""
    pending = [c for c in containers if c]
    doomed: list = []
    while pending:
        container = pending.pop()
        if type(container) is dict:
            keys, values = list(container), list(container.values())
            container.clear()
            doomed += (keys, values)
            if type(values[0]) in (dict, set):  # nested containers (relations of a model, indexes)
                pending += [v for v in values if v and type(v) in (dict, set)]
        elif type(container) is set:
            items = list(container)
            container.clear()
            doomed.append(items)
        elif type(container) is list:
            doomed.append(container)
    for items in doomed:
        while items:
            del items[-RELEASE_SLICE:]
