"""The server's side of the evaluation workers: a small pool of pre-started processes, and the budget
enforced from outside.

A call is sent to an idle worker. Two (or DATALOG_MEMORY_WORKERS, if fewer) start with the server, so a
second evaluating call waits neither behind a long one nor for a cold start; a call that takes the last
idle one starts another, up to DATALOG_MEMORY_WORKERS; beyond two, one idle for a minute exits. When calls wait,
the next free worker goes to the caller with the fewest calls running (fairness.py). While a worker
evaluates, the calling thread watches it every 10 ms:

- time: the worker stops itself at the budget with a typed budget_exceeded; if it has not answered by
  the budget plus a small margin (a resize of millions of entries, or freeing a failed model, can hold
  it), it is killed and the call is answered budget_exceeded all the same, within the budget plus 10 %;
- memory: over DATALOG_MEMORY_MAX_MEMORY_MB resident, it is killed: budget_exceeded naming that limit;
- cancellation: the worker is told; one that has not stopped within a moment is killed;
- a worker that dies (kill -9, a crash) fails the call in flight with a typed evaluation_error.

A killed worker, or one whose memory stays up after a failed call, is replaced by a fresh process: the
system takes the memory back at once, and the next call finds a worker. After a successful call a worker
keeps what it holds warm (the relations it read, with their indexes) up to half the memory budget."""

from __future__ import annotations

import itertools
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..datalog.budget import CURRENT_CANCELLATION, Cancellation, resident_mb
from ..errors import Cancelled, EvaluationError, InvalidConfiguration
from ..access.context import CallerContext
from ..store import IN_MEMORY
from .calls import OK, Outcome
from .fairness import FairShare, Ticket
from .protocol import Call, ProtocolError, Start, cancel_message, decode, encode, outcome_of

log = logging.getLogger("datalog-memory")

WORKERS_ENV = "DATALOG_MEMORY_WORKERS"
DEFAULT_WORKERS = 2
MAX_WORKERS = 64
POLL_S = 0.01  # how often a running call's worker is looked at (its memory read, its deadline checked)
# The backstop: a worker that has not answered by the budget plus this fraction plus this constant is
# killed. Together they stay inside the budget + 10 % (the worker's own check, 5-10 ms after the
# budget, answers first whenever the worker is not stuck in one long C call).
DEADLINE_FRACTION = 0.03
DEADLINE_S = 0.01
ATTEMPTS = 3  # workers tried for one call when each ends before taking it (killed while idle)
START_TIMEOUT_S = 60.0  # a worker that cannot get ready in this long is broken (a cold start takes ~0.3 s)
STOP_WAIT_S = 2.0  # at shutdown, how long a worker gets to exit once its input is closed
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # where `memory` is importable from


@dataclass(frozen=True)
class WorkerSettings:
    """How many worker processes at most (0: evaluate in the server process, as the CLI does), how long an
    extra one may stay idle, how long a cancelled call's worker gets to stop, and how much memory above its
    start-up size a worker may keep after a failed call before it is replaced (after a successful one, what it
    keeps is warm relations, kept up to half the memory budget)."""

    workers: int = DEFAULT_WORKERS
    idle_s: float = 60.0
    cancel_grace_s: float = 0.2
    retire_mb: float = 100.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "WorkerSettings":
        env = os.environ if environ is None else environ
        text = env.get(WORKERS_ENV)
        if text is None or text.strip() == "":
            return cls()
        try:
            workers = int(text)
        except ValueError:
            workers = -1
        if not 0 <= workers <= MAX_WORKERS:
            raise InvalidConfiguration(f"invalid {WORKERS_ENV}={text[:20]!r}: a number of processes from 0 to {MAX_WORKERS}")
        return cls(workers)


class _Worker:
    """One worker process: its pipes, the messages it sent, and whether it is ready, busy or gone."""

    def __init__(self, start: Start) -> None:
        env = dict(os.environ)
        env["PYTHONMALLOC"] = "malloc"  # chosen before the interpreter starts: freed memory can go back
        env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "memory.workers.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, close_fds=True)
        self.pid = self.proc.pid
        self.messages: queue.Queue = queue.Queue()
        self.ready = threading.Event()
        self.ended = threading.Event()
        self.base_mb = 0.0
        self.busy = False
        self.holder: Ticket | None = None  # the call it is busy with, counted as its caller's in the fair share
        self.last_used = time.monotonic()
        self._write = threading.Lock()
        self.send(start.to_message())
        threading.Thread(target=self._read, name=f"worker-{self.pid}", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.proc.stdout:
                try:
                    message = decode(line)
                except ProtocolError as exc:
                    log.error("evaluation worker %d: %s", self.pid, exc)
                    break
                if message["type"] == "ready" and not self.ready.is_set():
                    self.base_mb = self.rss_mb() or 0.0
                    self.ready.set()
                else:
                    self.messages.put(message)
        except (OSError, ValueError):
            pass
        self.ended.set()
        self.messages.put(None)  # wakes a call waiting on it

    def send(self, message: dict) -> bool:
        try:
            with self._write:
                self.proc.stdin.write(encode(message))
                self.proc.stdin.flush()
            return True
        except (OSError, ValueError):  # it is gone; its reader notices
            return False

    def rss_mb(self) -> float | None:
        try:
            return resident_mb(self.pid)
        except (OSError, ValueError, IndexError):
            return None

    @property
    def alive(self) -> bool:
        return not self.ended.is_set() and self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()
        self._close_pipes()

    def stop(self, wait_s: float) -> None:
        """Close its input (it exits at once), and kill it if it has not within `wait_s`."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass

    def describe_exit(self) -> str:
        try:
            code = self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"


class WorkerPool:
    """Evaluating tool calls, each run in one of at most `settings.workers` worker processes."""

    def __init__(self, start: Start, settings: WorkerSettings | None = None, store=None) -> None:
        self.start_message = start
        self._store = store  # the server's own store: each call tells its worker whether a database is expected
        self.settings = settings or WorkerSettings()
        if self.settings.workers < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.budget = start.budget
        self._workers: list[_Worker] = []
        self._spares_due = False  # the spare workers start once the first is ready (start)
        self._changed = threading.Condition()
        self._closed = False
        self._ids = itertools.count(1)
        self._fair = FairShare(self.settings.workers)  # who gets a worker when calls wait (under the lock)
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    @classmethod
    def for_memory(cls, memory, settings: WorkerSettings | None = None) -> "WorkerPool | None":
        """The pool for a server over `memory`, or None when its calls run in process (workers set to 0,
        or an in-memory database, which no other process can open)."""
        settings = settings or WorkerSettings.from_env()
        if settings.workers == 0 or memory.path == IN_MEMORY:
            return None
        return cls(Start.of(memory), settings, memory.store)

    # --- life cycle ---------------------------------------------------------------------------
    @property
    def warm(self) -> int:
        """Workers kept at rest once calls came: one for the next call and a spare for a call that comes
        while it runs (a cold start takes about a second, far too long for the second call to wait)."""
        return min(2, self.settings.workers)

    def start(self) -> "WorkerPool":
        """Start the first worker and the idle reaper, which starts the spare as soon as the first is ready:
        not with the first call (a cold start takes about a second, and a call that comes while the first
        evaluation runs must not wait that long; it costs an idle process's ~80 MB), and not at once either,
        where its start-up would compete for the cores with the first worker's and the server's own, delaying
        the first answer (on 2 cores: 1.0 s with both at once)."""
        with self._changed:
            first = self._spawn()
            self._spares_due = True
        self._keeper = threading.Thread(target=self._keep, args=(first,), name="worker-keeper", daemon=True)
        self._keeper.start()
        return self

    def close(self) -> None:
        """Stop every worker (a call still running in one is abandoned: it wrote nothing uncommitted)."""
        with self._changed:
            self._closed = True
            workers, self._workers = self._workers, []
            self._changed.notify_all()
        self._stop.set()
        for worker in workers:
            if worker.ready.is_set():
                try:
                    worker.proc.stdin.close()  # it exits at once
                except OSError:
                    pass
            else:  # still starting: it would read its input only once its imports are done
                worker.kill()
        deadline = time.monotonic() + STOP_WAIT_S
        for worker in workers:
            worker.stop(max(0.0, deadline - time.monotonic()))
        if self._keeper is not None:
            self._keeper.join(1.0)

    @property
    def pids(self) -> list[int]:
        with self._changed:
            return [w.pid for w in self._workers]

    def __enter__(self) -> "WorkerPool":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _spawn(self) -> _Worker:
        """A new worker (the caller holds the lock)."""
        worker = _Worker(self.start_message)
        self._workers.append(worker)
        return worker

    def _keep(self, first: _Worker) -> None:
        """Start the spare once the first worker is ready; then let extra workers that stayed idle exit,
        down to the warm ones."""
        while not (first.ready.wait(0.05) or first.ended.is_set() or self._stop.is_set()):
            pass
        with self._changed:
            while not self._closed and len(self._workers) < self.warm:
                self._spawn()
            self._spares_due = False
        while not self._stop.wait(min(1.0, self.settings.idle_s / 4)):
            now = time.monotonic()
            with self._changed:
                idle = sorted((w for w in self._workers if not w.busy), key=lambda w: w.last_used)
                extra = max(0, min(len(self._workers) - self.warm, len(idle) - 1))
                surplus = [w for w in idle[:extra] if now - w.last_used > self.settings.idle_s]
                for worker in surplus:
                    self._workers.remove(worker)
            for worker in surplus:
                worker.stop(STOP_WAIT_S)

    def _discard(self, worker: _Worker, kill: bool = True) -> None:
        """Kill a worker, and start a fresh one in its place when fewer than the warm ones, or no idle one,
        would be left."""
        if kill:
            worker.kill()
        with self._changed:
            if worker in self._workers:
                self._workers.remove(worker)
            self._free(worker)
            if not self._closed and (len(self._workers) < self.warm or not any(not w.busy for w in self._workers)):
                self._spawn()
            self._changed.notify_all()

    def _release(self, worker: _Worker, outcome: Outcome) -> None:
        """Back to the idle ones; or replaced, when a failed evaluation left it large (a new process is smaller at
        once), or when what it keeps warm (relations kept across calls) has grown past half the memory budget,
        leaving too little room to evaluate in."""
        used = worker.rss_mb()
        grown = used is None or used > worker.base_mb + self.settings.retire_mb
        if grown and (outcome.kind != OK or used is None or used > self.budget.max_memory_mb / 2):
            self._discard(worker)
            return
        with self._changed:
            worker.busy = False
            self._free(worker)
            worker.last_used = time.monotonic()
            self._changed.notify_all()

    def _free(self, worker: _Worker) -> None:
        """Its call no longer counts as running for its caller (the caller holds the lock)."""
        if worker.holder is not None:
            self._fair.finish(worker.holder)
            worker.holder = None

    # --- a call ---------------------------------------------------------------------------------
    def call(self, name: str, arguments: Any, token: Cancellation | None = None,
             context: CallerContext | None = None) -> Outcome:
        """Run one evaluating tool call in a worker; always an Outcome (typed failures included). `context`: who
        calls, when not the server's own caller (an HTTP server's callers each have theirs)."""
        token = token or CURRENT_CANCELLATION.get() or Cancellation()
        with self._changed:
            ticket = self._fair.ticket(None if context is None else context.principal)
        for _ in range(ATTEMPTS):
            acquired = self._acquire(token, ticket)
            if isinstance(acquired, Outcome):
                return acquired
            outcome = self._run(*acquired, name, arguments, token, context)
            if outcome is not None:
                return outcome
        return Outcome.failed(EvaluationError(
            f"{name} could not be started: the evaluation processes ended before taking it; see the server's log",
            reason="worker_exited"))

    def _run(self, worker: _Worker, started: float, name: str, arguments: Any, token: Cancellation,
             context: CallerContext | None = None) -> Outcome | None:
        """The call in `worker`; None when the worker ended before it took the call (one that died while
        idle, not yet noticed): nothing of the call ran, so it is sent to another."""
        hard = self._deadline(started)
        call_id = next(self._ids)
        expected = bool(getattr(self._store, "expected", False))  # the server's store knows a database at the path
        sent = worker.send(Call(call_id, name, arguments, max(0.0, time.monotonic() - started), context,
                                expected).to_message())
        taken = False
        cancel_sent: float | None = None
        while True:
            try:
                message = worker.messages.get(timeout=POLL_S) if sent else None
            except queue.Empty:
                message = False
            if message is None:  # the process ended (or broke the protocol) before it answered
                how = worker.describe_exit()
                self._discard(worker)
                return self._lost(name, how, worker) if taken else None
            if message and message.get("type") == "started" and message.get("id") == call_id and not taken:
                taken = True
                continue
            if message:
                try:
                    if message.get("type") != "result" or message.get("id") != call_id or not taken:
                        raise ProtocolError(f"unexpected {str(message.get('type'))[:40]} message")
                    outcome = outcome_of(message)
                except ProtocolError as exc:
                    self._discard(worker)
                    return self._lost(name, f"broke the protocol ({exc})", worker)
                self._release(worker, outcome)
                return outcome
            now = time.monotonic()
            if now >= hard:
                self._discard(worker)
                return Outcome.failed(self.budget.exceeded(
                    "seconds", f"evaluation ran longer than {self.budget.timeout_s:g} s", round(now - started, 3)))
            used = worker.rss_mb()
            if used is not None and used > self.budget.max_memory_mb:
                self._discard(worker)
                return Outcome.failed(self.budget.memory_exceeded(used))
            if token.cancelled:
                if cancel_sent is None:
                    cancel_sent = now
                    worker.send(cancel_message(call_id, token.reason))
                elif now - cancel_sent > self.settings.cancel_grace_s:
                    self._discard(worker)
                    return Outcome.failed(Cancelled(f"evaluation stopped: {token.reason}"))

    def _deadline(self, started: float) -> float:
        return started + self.budget.timeout_s * (1 + DEADLINE_FRACTION) + DEADLINE_S

    def _acquire(self, token: Cancellation, ticket: Ticket) -> "tuple[_Worker, float] | Outcome":
        """An idle worker, ready and marked busy, with the moment the call's time budget counts from; or the
        outcome of a call that could not get one. The budget counts from the call's arrival, waiting for a
        busy worker included, but not the start of a fresh process (the server's start-up cost, ~1 s cold:
        it happens once at start and after a worker was killed). When calls wait, the fair share between
        callers (fairness.py) decides which takes a free worker, or a fresh one while below the maximum."""
        started = token.started
        with self._changed:
            self._fair.wait(ticket)
            try:
                while True:
                    if self._closed:
                        return Outcome.failed(Cancelled("evaluation stopped: the server is stopping"))
                    for gone in [w for w in self._workers if not w.busy and not w.alive]:  # killed while idle
                        log.warning("evaluation worker %d %s while idle", gone.pid, gone.describe_exit())
                        self._workers.remove(gone)
                        gone.kill()
                    idle = [w for w in self._workers if not w.busy]
                    if self._fair.may_start(ticket, len(idle) + self.settings.workers - len(self._workers)):
                        worker = max(idle, key=lambda w: (w.ready.is_set(), w.last_used)) if idle else self._spawn()
                        self._fair.start(ticket)
                        break
                    failure = self._waited_too_long(token, self._deadline(started))
                    if failure is not None:
                        return failure
                    self._changed.wait(POLL_S * 5)
            finally:
                if self._fair.withdraw(ticket):  # it gave up waiting: the others' turns may have changed
                    self._changed.notify_all()
            worker.busy = True
            worker.holder = ticket
            # A spare gets ready meanwhile, so the next call does not wait behind this one (nor for a cold start).
            if len(self._workers) < self.settings.workers and not any(not w.busy for w in self._workers):
                self._spawn()
        cold = time.monotonic()
        while not worker.ready.wait(POLL_S):
            failure = self._waited_too_long(token, float("inf"))
            if failure is not None or worker.ended.is_set() or time.monotonic() > cold + START_TIMEOUT_S:
                how = "was stopped" if failure is not None else worker.describe_exit()
                self._discard(worker)
                if failure is not None:
                    return failure
                log.error("evaluation worker %d %s before it was ready", worker.pid, how)
                return Outcome.failed(EvaluationError(
                    f"the evaluation process could not start (it {how}); see the server's log",
                    reason="worker_start_failed"))
        return worker, started + (time.monotonic() - cold)

    @property
    def closed(self) -> bool:
        """Whether `close` has been called (a worker still starting then was stopped on purpose)."""
        return self._closed

    def wait_ready(self, timeout: float = START_TIMEOUT_S, workers: int = 1) -> bool:
        """Whether `workers` workers are ready (waiting up to `timeout` for them to start)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._changed:
                starting = [w for w in self._workers if w.alive]
                if sum(w.ready.is_set() for w in starting) >= workers:
                    return True
            if len(starting) < workers and not self._spares_due:
                return False
            time.sleep(POLL_S * 5)
        return False

    def _waited_too_long(self, token: Cancellation, hard: float) -> Outcome | None:
        if token.cancelled:
            return Outcome.failed(Cancelled(f"evaluation stopped: {token.reason}"))
        now = time.monotonic()
        if now >= hard:
            return Outcome.failed(self.budget.exceeded(
                "seconds", f"evaluation ran longer than {self.budget.timeout_s:g} s (waiting for a free evaluation "
                f"process: raise {WORKERS_ENV} for more at once)", round(now - token.started, 3)))
        return None

    def _lost(self, name: str, how: str, worker: _Worker) -> Outcome:
        log.error("evaluation worker %d %s during %s", worker.pid, how, name)
        return Outcome.failed(EvaluationError(
            f"the evaluation process {how} before {name} answered; the server keeps serving and the call can be "
            "retried (a call's write is one transaction: nothing of it is left half done)",
            reason="worker_exited"))
