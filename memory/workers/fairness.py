"""Who gets the next free evaluation worker when callers wait: a fair share between callers, so one caller
flooding the pool with slow calls cannot starve the others (an HTTP server's callers share one pool).

A caller is keyed by its principal (None for the server's own caller, over stdio). The rules:

- work first: a free worker never stays idle while a call waits, and a caller alone may use every worker;
- a cap: with N workers, a caller that holds N - 1 gets no more while another caller's call waits;
- the order: the next free worker goes to the waiting caller with the fewest calls running, and among those
  to the longest-waiting call (not to whoever queued first, nor to whoever asked again quickest).

A worker is only ever taken, never pre-empted: a call keeps its worker to the end. The object holds no lock;
the pool's lock guards it."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Hashable


@dataclass(eq=False)
class Ticket:
    """One call's place: its caller and its arrival order (kept across a retry on another worker)."""

    key: Hashable
    seq: int = field(default=0)


class FairShare:
    """The calls waiting for a worker and the calls running, per caller, over a pool of `workers` workers."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a fair share needs at least one worker")
        self.workers = workers
        self.running: Counter = Counter()
        self.waiting: list[Ticket] = []
        self._seq = itertools.count()

    @property
    def cap(self) -> int:
        """What one caller may hold while another's call waits (with one worker, that one)."""
        return max(1, self.workers - 1)

    def ticket(self, key: Hashable) -> Ticket:
        return Ticket(key, next(self._seq))

    def wait(self, ticket: Ticket) -> None:
        """`ticket` waits for a worker (again, after its worker ended before taking the call: its place kept)."""
        if ticket not in self.waiting:
            self.waiting.append(ticket)

    def withdraw(self, ticket: Ticket) -> bool:
        """`ticket` stops waiting (its budget ran out, it was cancelled, the pool closes); whether it waited."""
        if ticket in self.waiting:
            self.waiting.remove(ticket)
            return True
        return False

    def admitted(self, free: int) -> list[Ticket]:
        """The waiting calls that take the `free` workers now, in the order they would take them one by one."""
        running = Counter(self.running)
        waiting = list(self.waiting)
        chosen: list[Ticket] = []
        while free > 0 and waiting:
            keys = Counter(t.key for t in waiting)
            eligible = [t for t in waiting if running[t.key] < self.cap or keys[t.key] == len(waiting)]
            if not eligible:  # cannot happen while the running calls hold the busy workers; never idle a worker
                eligible = waiting
            first = min(eligible, key=lambda t: (running[t.key], t.seq))
            chosen.append(first)
            waiting.remove(first)
            running[first.key] += 1
            free -= 1
        return chosen

    def may_start(self, ticket: Ticket, free: int) -> bool:
        """Whether `ticket` takes one of the `free` workers now."""
        return ticket in self.admitted(free)

    def start(self, ticket: Ticket) -> None:
        """`ticket` took a worker."""
        self.withdraw(ticket)
        self.running[ticket.key] += 1

    def finish(self, ticket: Ticket) -> None:
        """`ticket`'s worker is free again (or gone)."""
        self.running[ticket.key] -= 1
        if self.running[ticket.key] <= 0:
            del self.running[ticket.key]
