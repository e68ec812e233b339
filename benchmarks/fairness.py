"""One caller flooding the evaluation pool, another asking a trivial query: how long the second waits.

    python benchmarks/fairness.py [--budget 3] [--flood 6] [--queries 10]

A pool of two workers over a temporary database. Principal zed keeps --flood calls of
`zn(5)` in flight, `zn(X) :- zn(Y), Y < 100000000, X is Y + 1` (each runs to the time budget, --budget
seconds); principal bob asks `bob_secret(X)` --queries times, one after another. It prints bob's
latency (median, max) and the outcomes. To compare, run the file copied into an older checkout's benchmarks/.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory import Memory  # noqa: E402
from memory.datalog.budget import Budget  # noqa: E402
from memory.access import CallerContext  # noqa: E402
from memory.access.context import DEFAULT_CAPABILITIES  # noqa: E402
from memory.workers import WorkerPool, WorkerSettings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=3.0, help="the time budget, seconds")
    parser.add_argument("--flood", type=int, default=6, help="zed's calls in flight")
    parser.add_argument("--queries", type=int, default=10, help="bob's queries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        memory = Memory(str(Path(home) / "memory.db"), budget=Budget(timeout_s=args.budget, max_memory_mb=1000))
        memory.add_facts(["zn(0)", "bob_secret(42)"])
        memory.define_rule("zn(X)", "zn(Y), Y < 100000000, X is Y + 1")
        zed, bob = (CallerContext(principal=p, capabilities=DEFAULT_CAPABILITIES) for p in ("zed", "bob"))
        stop = threading.Event()
        with WorkerPool.for_memory(memory, WorkerSettings(workers=2)) as pool:
            pool.wait_ready(workers=2)

            def flood() -> None:
                while not stop.is_set():
                    pool.call("query_logic", {"goal": "zn(5)"}, context=zed)

            flooders = [threading.Thread(target=flood) for _ in range(args.flood)]
            for thread in flooders:
                thread.start()
            time.sleep(0.5)  # zed's calls hold both workers
            latencies, outcomes = [], []
            for _ in range(args.queries):
                started = time.monotonic()
                outcome = pool.call("query_logic", {"goal": "bob_secret(X)"}, context=bob)
                latencies.append(time.monotonic() - started)
                outcomes.append(outcome.code if outcome.kind != "ok" else "ok")
            stop.set()
            for thread in flooders:
                thread.join()
        memory.close()
    print(f"budget {args.budget:g} s, zed's calls in flight {args.flood}: bob's latency median "
          f"{statistics.median(latencies):.2f} s, max {max(latencies):.2f} s; outcomes: "
          + ", ".join(f"{outcomes.count(k)} {k}" for k in sorted(set(outcomes))))


if __name__ == "__main__":
    main()
