"""The MCP server with evaluations in worker processes vs in the server process, over the real server.

    python benchmarks/workers.py [--calls 200] [--size 171] [--failures 5]

For each mode (DATALOG_MEMORY_WORKERS=0: every call in the server process, as before workers; and the
default pool) it prints:
- the latency of a small `query_logic` (p50 and p99 over --calls sequential calls): the cost of the
  worker hop;
- `ping` latency (p50, p99, max; a ping every 20 ms) while `c(A,B,C) :- v(A), v(B), v(C)` over --size
  `v/1` facts runs into a 5,000,000-tuple budget (171 facts: 5.0 M tuples);
- the server process's resident memory before and after --failures such failed evaluations.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory import Memory  # noqa: E402
from memory.datalog.budget import resident_mb  # noqa: E402


class Server:
    """The server over newline-delimited JSON-RPC; a reader thread stamps each reply's arrival."""

    def __init__(self, db: str, home: str, env: dict) -> None:
        variables = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "xdg"), XDG_CACHE_HOME=os.path.join(home, "cache"), DATALOG_MEMORY_DB=db,
                         PYTHONPATH=str(ROOT), **env)
        self.proc = subprocess.Popen([sys.executable, "-m", "memory.cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=variables)
        self.replies: dict = {}
        self.changed = threading.Condition()
        self.ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()
        self.wait(self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "bench", "version": "1"}}), 120)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.changed:
                if message.get("id") is not None:
                    self.replies[message["id"]] = (time.monotonic(), message)
                self.changed.notify_all()

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> int:
        rid = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})})
        return rid

    def wait(self, rid: int, timeout: float = 600) -> tuple[float, dict]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while rid not in self.replies:
                if not self.changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no reply to {rid}")
            return self.replies.pop(rid)

    def answered(self, rid: int) -> bool:
        with self.changed:
            return rid in self.replies

    def call(self, tool: str, arguments: dict) -> dict:
        return self.wait(self.request("tools/call", {"name": tool, "arguments": arguments}))[1]["result"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(value: float) -> str:
    return f"{value * 1000:.1f}"


def measure(mode: str, workers: str, db: str, home: str, calls: int, failures: int) -> dict:
    env = {"DATALOG_MEMORY_WORKERS": workers, "DATALOG_MEMORY_MAX_TUPLES": "5000000",
           "DATALOG_MEMORY_TIMEOUT_S": "120", "DATALOG_MEMORY_MAX_MEMORY_MB": "8000"}
    server = Server(db, home, env)
    try:
        for _ in range(5):  # warm: the first calls load the program
            server.call("query_logic", {"goal": "v(5)"})
        small = []
        for _ in range(calls):
            started = time.perf_counter()
            assert not server.call("query_logic", {"goal": "v(5)"})["isError"]
            small.append(time.perf_counter() - started)
        rss_before = resident_mb(server.proc.pid)
        pings: list[float] = []
        seconds = []
        error = ""
        for _ in range(failures):
            started = time.monotonic()
            big = server.request("tools/call", {"name": "query_logic", "arguments": {"goal": "c(A, B, C)"}})
            while not server.answered(big):
                sent = time.monotonic()
                arrived, _ = server.wait(server.request("ping"))
                pings.append(arrived - sent)
                time.sleep(0.02)
            arrived, reply = server.wait(big)
            seconds.append(arrived - started)
            error = reply["result"]["_meta"]["datalog-memory/error"]
        rss_after = resident_mb(server.proc.pid)
    finally:
        server.close()
    return {"mode": mode, "small_p50": statistics.median(small), "small_p99": percentile(small, 0.99),
            "ping_p50": statistics.median(pings), "ping_p99": percentile(pings, 0.99), "ping_max": max(pings),
            "pings": len(pings), "big_s": statistics.median(seconds), "limit": error.get("limit_kind"),
            "rss_before": rss_before, "rss_after": rss_after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--size", type=int, default=171)
    parser.add_argument("--failures", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        db = os.path.join(home, "memory.db")
        with Memory(db) as m:
            m.add_facts([f"v({i})" for i in range(args.size)])
            m.define_rule("c(A,B,C)", "v(A), v(B), v(C)")
        rows = [measure("in the server process (WORKERS=0)", "0", db, home, args.calls, args.failures),
                measure("worker processes (default)", "", db, home, args.calls, args.failures)]
    print(f"small query_logic: {args.calls} sequential calls; cross product: {args.size}^3 = {args.size ** 3:,} "
          f"tuples into a 5,000,000-tuple budget, {args.failures} times, a ping every 20 ms")
    print()
    print("| mode | small query p50 ms | p99 ms | ping p50 ms | ping p99 ms | ping max ms | pings | failed call s "
          "| limit | server RSS before MiB | after MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for r in rows:
        print(f"| {r['mode']} | {ms(r['small_p50'])} | {ms(r['small_p99'])} | {ms(r['ping_p50'])} | "
              f"{ms(r['ping_p99'])} | {ms(r['ping_max'])} | {r['pings']} | {r['big_s']:.2f} | {r['limit']} | "
              f"{r['rss_before']:.0f} | {r['rss_after']:.0f} |")
    overhead = rows[1]["small_p50"] - rows[0]["small_p50"]
    print(f"\nworker hop overhead (p50): {ms(overhead)} ms per call")


if __name__ == "__main__":
    main()
