"""Who gets the next free evaluation worker when callers wait: a fair share between callers, so one caller
flooding the pool with slow calls cannot starve the others (an HTTP server's callers share one pool).

A caller is keyed by its principal (None for the server's own caller, over stdio). The rules:

- work first: a free worker never stays idle while a call waits, and a caller alone may use every worker;
- the order: the next free worker goes to the waiting caller with the fewest calls running, and among those
  to the longest-waiting call (not to whoever queued first, nor to whoever asked again quickest);
- hence a cap: with N workers, a caller holding N - 1 gets no more while another caller's call waits (with a
  worker free, at most N - 1 calls run, all that caller's: the other has none), and a newcomer gets the next
  free worker;
- one worker: nobody runs when it is free, so the caller whose call just ended goes after the other callers'
  waiting calls (callers take turns; otherwise a flooder's queued calls, older than a newcomer's, go first).

A worker is only ever taken, never pre-empted: a call keeps its worker to the end. The object holds no lock;
the pool's lock guards it."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Hashable


@dataclass(eq=False)
class Ticket:
    """One call's place: its caller and its arrival order (kept across a retry on another worker)."""

    key: Hashable
    seq: int


class FairShare:
    """The calls waiting for a worker and the calls running, per caller, over a pool of `workers` workers."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a fair share needs at least one worker")
        self.workers = workers
        self.running: Counter = Counter()
        self.waiting: list[Ticket] = []
        self._seq = itertools.count()
        self._last: list[Hashable] = []  # the caller of the call started last (a list: None is a caller)

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
            first = min(waiting, key=lambda t: (running[t.key] + self._turn_taken(t.key), t.seq))
            chosen.append(first)
            waiting.remove(first)
            running[first.key] += 1
            free -= 1
        return chosen

    def _turn_taken(self, key: Hashable) -> int:
        """With one worker, 1 for the caller that had it last: the others' calls go first."""
        return int(self.workers == 1 and self._last == [key])

    def may_start(self, ticket: Ticket, free: int) -> bool:
        """Whether `ticket` takes one of the `free` workers now."""
        return ticket in self.admitted(free)

    def start(self, ticket: Ticket) -> None:
        """`ticket` took a worker."""
        self.withdraw(ticket)
        self.running[ticket.key] += 1
        self._last = [ticket.key]

    def finish(self, ticket: Ticket) -> None:
        """`ticket`'s worker is free again (or gone)."""
        self.running[ticket.key] -= 1
        if self.running[ticket.key] <= 0:
            del self.running[ticket.key]
