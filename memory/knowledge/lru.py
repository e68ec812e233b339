"""A cache whose entries have sizes: the least recently used go first once the sizes add up past a capacity
(the warm relations and the kept answers, each bounded by the tuples it holds)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class SizedLRU(Generic[V]):
    def __init__(self, capacity: int, size: Callable[[V], int]) -> None:
        self.capacity = capacity
        self._size = size
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()  # key -> (value, its size when it was put)
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value under `key` (now the most recently used), or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value: V) -> None:
        """Keep `value` under `key` (its size measured now), then let the least recently used go while the
        total is over the capacity; the newest entry always stays."""
        size = self._size(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._total -= old[1]
            self._items[key] = (value, size)
            self._total += size
            while self._total > self.capacity and len(self._items) > 1:
                _, (_, gone) = self._items.popitem(last=False)
                self._total -= gone

    def pop(self, key: Hashable) -> V | None:
        """Take the value under `key` out of the cache (None when there is none)."""
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return None
            self._total -= item[1]
            return item[0]

    def items(self) -> list[tuple[Hashable, V]]:
        """(key, value) pairs, least recently used first."""
        with self._lock:
            return [(key, value) for key, (value, _) in self._items.items()]
