"""Evaluation budgets: wall-clock time, derived tuples, join rows and resident memory, checked inside
the loops, plus cooperative cancellation.

Every evaluation loop calls `check()` at least every few milliseconds of work (join steps run in
slices, see compiler.py), so a limit is noticed within a slice of being reached: time within about
10 ms, memory within one slice's allocations. A caller cancels an evaluation it no longer wants by
cancelling the `Cancellation` that was current (a context variable) when the evaluation started.
"""

from __future__ import annotations

import contextvars
import gc
import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..errors import BudgetExceeded, Cancelled
from ..settings import positive

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_TUPLES = 5_000_000
DEFAULT_MAX_ROWS = 20_000_000
# Resident memory of the whole process. 4 GiB holds the default tuple budget with its indexes about
# twice over (5 M derived pairs take about 1.5 GiB), and a quarter of a small machine's memory at most,
# so a runaway rule stops long before it pushes the machine (or the agent beside it) into swap.
DEFAULT_MAX_MEMORY_MB = 4096
MEMORY_CHECK_S = 0.02  # how often, at most, the resident set is read

ENV = {"seconds": "DATALOG_MEMORY_TIMEOUT_S", "tuples": "DATALOG_MEMORY_MAX_TUPLES",
       "rows": "DATALOG_MEMORY_MAX_ROWS", "memory_mb": "DATALOG_MEMORY_MAX_MEMORY_MB"}


def _setting(env, key: str, kind: type, default):
    """One limit from the environment: unset gives the default (None: the machine's memory default),
    anything but a positive finite number is refused by the variable's name."""
    value = positive(env, ENV[key], kind, default)
    return default_max_memory_mb() if value is None else value


def default_max_memory_mb() -> int:
    """4 GiB, or a quarter of the machine's physical memory when that is less."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        return DEFAULT_MAX_MEMORY_MB
    return max(256, min(DEFAULT_MAX_MEMORY_MB, physical // 4))


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_mb(pid: int | None = None) -> float:
    """The resident set in MiB of this process, or of process `pid` (Linux /proc; elsewhere this process's
    peak, from getrusage)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE / (1 << 20)
    except OSError:
        if pid is not None:
            raise
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


class Cancellation:
    """One call's evaluations: a flag the caller sets to stop them at their next budget check, and
    the moment the call began, from which they share its time budget."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = "cancelled"
        # One call may evaluate several times (a query, then a proof per answer): all of them share
        # the time budget, counted from when the call arrived.
        self.started = time.monotonic()

    def cancel(self, reason: str = "cancelled by the client") -> None:
        self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


CURRENT_CANCELLATION: contextvars.ContextVar[Cancellation | None] = contextvars.ContextVar(
    "datalog_memory_cancellation", default=None)


@contextmanager
def cancellable(token: Cancellation) -> Iterator[Cancellation]:
    """Evaluations started inside this block (in this context) stop once `token` is cancelled."""
    reset = CURRENT_CANCELLATION.set(token)
    try:
        yield token
    finally:
        CURRENT_CANCELLATION.reset(reset)


@dataclass
class Budget:
    """Defaults: 30 s, 5,000,000 derived tuples, 20,000,000 join rows per rule firing, and a resident
    memory limit of min(4 GiB, physical memory / 4).

    A budget is one call's: its clock starts once (`start`, or the first evaluation given it) and
    every evaluation given it shares that deadline; `copy()` gives a fresh one with the same limits."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_tuples: int = DEFAULT_MAX_TUPLES
    max_rows: int = DEFAULT_MAX_ROWS
    max_memory_mb: int = field(default_factory=default_max_memory_mb)
    derived: int = field(default=0, init=False)
    found: int = field(default=0, init=False)  # new tuples of the rule firing under way (counted in `derived` after it)
    deadline: float = field(default=0.0, init=False)
    started: float = field(default=0.0, init=False)
    cancellation: Cancellation | None = field(default=None, init=False)
    _next_memory_check: float = field(default=0.0, init=False)

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "Budget":
        """Defaults overridden by DATALOG_MEMORY_TIMEOUT_S, _MAX_TUPLES, _MAX_ROWS and _MAX_MEMORY_MB
        (for a server's operator)."""
        env = os.environ if environ is None else environ
        return cls(_setting(env, "seconds", float, DEFAULT_TIMEOUT_S), _setting(env, "tuples", int, DEFAULT_MAX_TUPLES),
                   _setting(env, "rows", int, DEFAULT_MAX_ROWS), _setting(env, "memory_mb", int, None))

    def copy(self) -> "Budget":
        """A fresh budget with the same limits (each evaluation gets its own counters)."""
        return Budget(self.timeout_s, self.max_tuples, self.max_rows, self.max_memory_mb)

    def writer_wait_ms(self) -> int:
        """How long a write should wait for another writer: an evaluation holds no lock, and the brief
        write after one (materialize) ends within its time budget plus a tenth, so a writer that waits
        that long plus 10 s never fails because of an evaluation."""
        return int((self.timeout_s * 1.1 + 10) * 1000)

    def start(self) -> "Budget":
        """Start the clock, once: the evaluations of one call share its deadline. Tuples count per
        evaluation."""
        self.derived = 0
        self.found = 0
        if not self.started:
            self._start_clock()
        return self

    def _start_clock(self) -> None:
        self.started = time.monotonic()
        self.cancellation = CURRENT_CANCELLATION.get()
        if self.cancellation is not None:
            self.started = min(self.started, self.cancellation.started)
        self.deadline = self.started + self.timeout_s

    def memory_exceeded(self, used_mb: float) -> BudgetExceeded:
        """The error for an evaluating process found at `used_mb` resident, over the limit (to a tenth of a
        MiB, so what it reached is never shown equal to the limit it passed)."""
        shown = math.ceil(used_mb * 10) / 10  # rounded up: 120.03 over a 120 limit must not read as 120.0
        return self.exceeded("memory_mb", f"the evaluating process's resident memory reached {shown:.1f} MiB, "
                             f"over {self.max_memory_mb} MiB", shown)

    def exceeded(self, kind: str, message: str, reached) -> BudgetExceeded:
        limit = {"seconds": self.timeout_s, "tuples": self.max_tuples, "rows": self.max_rows,
                 "memory_mb": self.max_memory_mb}[kind]
        return BudgetExceeded(
            f"{message}; the limit is set by {ENV[kind]}", reached=reached, limit=limit, limit_kind=kind,
            setting=ENV[kind])

    def tick(self, new_tuples: int) -> None:
        self.derived += new_tuples
        self.found = 0
        if self.derived > self.max_tuples:
            raise self.exceeded("tuples", f"evaluation derived more than {self.max_tuples} tuples", self.derived)
        self.check()

    def rows(self, produced: int) -> None:
        """`produced` join rows so far in one rule firing."""
        if produced > self.max_rows:
            raise self.exceeded("rows", f"a join produced more than {self.max_rows} intermediate rows", produced)
        self.check()

    def check(self) -> None:
        """Time, memory and cancellation: cheap enough to call every few milliseconds."""
        now = time.monotonic()
        if not self.started:
            self._start_clock()
        if now > self.deadline:
            raise self.exceeded("seconds", f"evaluation ran longer than {self.timeout_s:g} s "
                                f"(derived {self.derived + self.found} tuples)", round(now - self.started, 3))
        if self.cancellation is not None and self.cancellation.cancelled:
            raise Cancelled(f"evaluation stopped: {self.cancellation.reason}")
        if now >= self._next_memory_check:
            self._next_memory_check = now + MEMORY_CHECK_S
            used = resident_mb()
            if used > self.max_memory_mb:
                raise self.memory_exceeded(used)


# False in a process that is itself discarded when a failure leaves it large (an evaluation worker):
# there, the failure is answered at once and the process exit gives the memory back.
RETURN_MEMORY_AFTER_FAILURE = True


def give_back_memory() -> None:
    """After a failed evaluation: collect what references cycles kept, and hand freed heap pages
    back to the system (glibc keeps them otherwise, and the process would stay at its peak)."""
    if not RETURN_MEMORY_AFTER_FAILURE:
        return
    gc.collect()
    trim_heap()


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc keeps them otherwise): after a failure, or after
    a big relation was read and compacted, when the process would otherwise stay at the read's peak."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None  # libc's malloc_trim once looked up; False where there is none
