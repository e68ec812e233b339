"""An evaluation worker's main: `python -m memory.workers.worker`, started by the MCP server (pool.py).

It reads the `start` message, opens its own Memory on the same database with the identity and budget
given there (and nothing else; a call naming its own caller, as the HTTP server's calls do, runs in a
Memory of that caller), answers `ready`, then runs one call at a time, each exactly as the
server would run it in process (`run_call`), and answers `result`. A `cancel` stops the call in flight
at its next budget check. End of input (the server closed the pipe, or died) ends the process at once:
a call in flight is abandoned, and since every write is one transaction, it leaves nothing behind.

The server starts it with PYTHONMALLOC=malloc, so freed memory goes back to the C allocator (and with
malloc_trim to the system) rather than staying in the interpreter's arenas."""

from __future__ import annotations

import logging
import os
import queue
import signal
import sys
import threading

from ..datalog import budget as budgets
from ..datalog.budget import Cancellation, cancellable
from ..errors import InternalError
from .calls import Outcome, run_call
from .protocol import Call, ProtocolError, Start, decode, encode, result_message

log = logging.getLogger("datalog-memory")

CALLERS_KEPT = 4  # callers other than the start message's whose Memory a worker keeps open
WORKER_NICENESS = 5  # added to the server's niceness: about a third of the CPU weight of the server's loop


class Worker:
    def __init__(self, out) -> None:
        self.out = out
        self.write_lock = threading.Lock()
        self.calls: queue.Queue = queue.Queue()
        self.running: tuple[int, Cancellation] | None = None
        self.lock = threading.Lock()

    def send(self, message: dict) -> None:
        data = encode(message)
        with self.write_lock:
            self.out.write(data)
            self.out.flush()

    def serve(self, memories) -> None:
        """Run the calls the reader queues, one at a time, each as its caller (`memories`: a CallerMemories)."""
        while True:
            call = self.calls.get()
            token = Cancellation()
            token.started -= call.elapsed  # the budget counts from when the call reached the server
            with self.lock:
                self.running = (call.id, token)
            self.send({"type": "started", "id": call.id})  # from here on, the call may have run
            try:
                memory = memories.of(call.context)
                if call.expected and memory.store.is_file:
                    memory.store.expected = True  # missing now: lost, never an empty memory
                with cancellable(token):
                    outcome: Outcome = run_call(memory, call.tool, call.arguments)
            except BaseException as exc:  # run_call catches every Exception: this is the process ending
                outcome = Outcome.failed(InternalError(f"{type(exc).__name__}: {exc}", tool=call.tool))
            with self.lock:
                self.running = None
            self.send(result_message(call.id, outcome))

    def cancel(self, call_id: int, reason: str) -> None:
        with self.lock:
            if self.running is not None and self.running[0] == call_id:
                self.running[1].cancel(reason)


def _protocol_streams():
    """The pipe to the server, and standard output pointed at standard error: nothing the library or a
    dependency prints can corrupt the protocol."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return sys.stdin.buffer, out


def main() -> int:
    # Ctrl-C on a terminal, or a SIGTERM to the process group, reaches the worker too: its server decides
    # when it stops (after answering the calls in flight), by closing its input, or kills it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Evaluating is background work next to the server's protocol loop: on a busy machine the scheduler gives
    # the server the CPU first, so a ping or a listing is answered promptly while an evaluation runs.
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # not permitted here: evaluate at the server's priority
        pass
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(asctime)s %(name)s[worker %(process)d] %(levelname)s %(message)s")
    inp, out = _protocol_streams()
    line = inp.readline()
    if not line:
        return 0
    try:
        start = Start.from_message(decode(line))
    except ProtocolError as exc:
        log.error("refusing to start: %s", exc)
        return 2
    from ..api import CallerMemories, Memory
    from ..evidence import detect, reasoning, recall, verify  # noqa: F401
    from ..tools import REGISTRY

    # What the library loads on first use (the evidence code, the argument checks) is loaded before `ready`:
    # no call pays for an import.
    for spec in REGISTRY.values():
        if spec.evaluates:
            _ = spec.validator  # built now, not at the first call

    memory = Memory(start.path, budget=start.budget, global_path=start.global_path, context=start.context)
    if start.expected and memory.store.is_file:
        memory.store.expected = True  # missing later: lost, never an empty memory
    # The server retires a worker whose memory stays up after a failed evaluation (a process exit gives
    # everything back at once), so a failure here is answered before any collection or trimming.
    budgets.RETURN_MEMORY_AFTER_FAILURE = False
    worker = Worker(out)
    worker.send({"type": "ready", "pid": os.getpid()})
    # A few recent callers' Memories (an HTTP server's connections each call as their own): each keeps warm
    # relations, and the pool retires a worker whose memory stays high, so a worker keeps few.
    memories = CallerMemories(memory, size=CALLERS_KEPT)
    threading.Thread(target=worker.serve, args=(memories,), name="evaluation", daemon=True).start()
    while line := inp.readline():
        try:
            message = decode(line)
            if message["type"] == "call":
                worker.calls.put(Call.from_message(message))
            elif message["type"] == "cancel":
                reason = message.get("reason")
                worker.cancel(message.get("id"), reason if isinstance(reason, str) else "cancelled")
            else:
                raise ProtocolError(f"unknown message type {message['type'][:40]!r}")
        except ProtocolError as exc:
            log.error("stopping: %s", exc)
            break
    # End of input: the server is done with this worker (or gone). A call still running is abandoned.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
