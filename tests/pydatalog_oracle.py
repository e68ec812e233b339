"""pyDatalog as an independent oracle, in a worker process with a time limit.

pyDatalog's resolver can run for a very long time on some generated programs, and
its state is global; a separate process we can kill keeps the suite bounded."""

from __future__ import annotations

import json
import subprocess
import sys

WORKER = r"""
import json, sys
from pyDatalog import pyDatalog
for line in sys.stdin:
    job = json.loads(line)
    pyDatalog.clear()
    pyDatalog.load(job["program"])
    out = {}
    for query in job["queries"]:
        result = pyDatalog.ask(query)
        out[query] = [] if result is None else [list(t) for t in result.answers]
    pyDatalog.clear()
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


class Oracle:
    def __init__(self, timeout_s: float = 10.0) -> None:
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
        return self.proc

    def ask(self, program: str, queries: list[str]) -> dict | None:
        """Answers per query, or None when pyDatalog did not finish in time."""
        import selectors

        proc = self._start()
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps({"program": program, "queries": queries}) + "\n")
        proc.stdin.flush()
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        ready = selector.select(self.timeout_s)
        selector.close()
        if not ready:
            self.close()
            return None
        line = proc.stdout.readline()
        if not line:
            self.close()
            return None
        return {q: {tuple(t) for t in answers} for q, answers in json.loads(line).items()}

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
