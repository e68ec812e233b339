"""Two `serve --http` servers on one PostgreSQL database, as two hosts would run them.

    python benchmarks/two_servers.py [--url postgresql://...] [--clients 8] [--facts 500]

Without --url it starts a throwaway PostgreSQL server (the test suite's, from the distribution's binaries).
--clients clients (four on each server by default) each write --facts facts through the mcp package's HTTP client,
concurrently; meanwhile one observer per server keeps asking its server for the facts written through the
other one. It prints:
- acknowledged writes, facts present in the database, and audit rows (they must be equal);
- how long after its acknowledgement each write was first seen in an answer of the other server (p50, p99,
  max, and how many took over 1 s): measured at the end of the observer's query that first included it, so
  an upper bound;
- the write latency per call (p50, p99) and the throughput.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


class Server:
    """`datalog-memory serve --http --port 0` on the database; `url` once it listens."""

    def __init__(self, db: str, home: Path, name: str) -> None:
        self.log = home / f"{name}.log"
        env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "xdg"), PYTHONPATH=str(ROOT),
                   DATALOG_MEMORY_PRINCIPAL=name)
        with open(self.log, "wb") as errors:
            self.proc = subprocess.Popen([sys.executable, "-m", "memory.cli", "--db", db, "serve", "--http",
                                          "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=errors, env=env, cwd=str(home))
        deadline = time.monotonic() + 120
        while True:
            found = re.search(r" at (http://\S+/mcp) ", self.log.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"the server did not start: {self.log.read_text(errors='replace')}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def session(url: str, work) -> None:
    """Run `work(call)` with one MCP client session on `url`; `call(tool, arguments)` returns the result."""
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        http = create_mcp_http_client()
        async with http, Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client:
            async def call(tool, arguments):
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed: {result.content}")
                return result.structured_content
            await work(call)
    anyio.run(main)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a PostgreSQL database (default: a throwaway server's new database)")
    parser.add_argument("--clients", type=int, default=8, help="clients in all, half on each server")
    parser.add_argument("--facts", type=int, default=500)
    options = parser.parse_args()
    pg = None
    url = options.url
    if url is None:
        from postgresql_server import start_server
        pg = start_server()
        url = pg.fresh_database()
    home = Path(tempfile.mkdtemp(prefix="two-servers-"))
    servers = [Server(url, home, "host_a"), Server(url, home, "host_b")]
    acked: dict[str, list[tuple[str, float]]] = {"a": [], "b": []}  # per server: (fact, acknowledged at)
    latencies: list[float] = []
    seen_after: dict[str, float] = {}
    lock = threading.Lock()
    writing = threading.Event()
    writing.set()
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        side = "ab"[index % 2]

        async def work(call):
            for n in range(options.facts):
                fact = f"w_{side}(c{index}, {n})"
                started = time.monotonic()
                await call("remember_fact", {"fact": fact})
                done = time.monotonic()
                with lock:
                    acked[side].append((fact, done))
                    latencies.append(done - started)
        try:
            session(servers[index % 2].url, work)
        except BaseException as exc:  # reported after the run
            errors.append(exc)

    def observer(side: str) -> None:
        other = "b" if side == "a" else "a"  # this server is asked for the facts written through the other

        async def work(call):
            while True:
                still = writing.is_set()
                answer = await call("query_logic", {"goal": f"w_{other}(C, N)", "limit": 10_000})
                finished = time.monotonic()
                present = {f"w_{other}({b['C']}, {b['N']})" for b in answer["bindings"]}
                with lock:
                    for fact, at in acked[other]:
                        if fact not in seen_after and fact in present:
                            seen_after[fact] = finished - at
                if not still:
                    return
        try:
            session(servers["ab".index(side)].url, work)
        except BaseException as exc:
            errors.append(exc)

    observers = [threading.Thread(target=observer, args=(s,)) for s in "ab"]
    writers = [threading.Thread(target=writer, args=(i,)) for i in range(options.clients)]
    started = time.monotonic()
    for t in observers + writers:
        t.start()
    for t in writers:
        t.join()
    elapsed = time.monotonic() - started
    writing.clear()
    for t in observers:
        t.join()
    for server in servers:
        server.stop()
    if errors:
        raise SystemExit(f"a client failed: {errors[0]!r}")
    from memory.store.postgresql import PostgresConnection
    conn = PostgresConnection(url)
    present = conn.execute("SELECT count(*) FROM facts WHERE functor IN ('w_a', 'w_b')").fetchone()[0]
    audit = conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0]
    conn.close()
    total = len(acked["a"]) + len(acked["b"])
    lags = list(seen_after.values())
    unseen = total - len(lags)
    rows = [
        ("acknowledged writes", f"{total}"),
        ("facts present", f"{present}"),
        ("audit rows (remember_fact)", f"{audit}"),
        ("writes seen by the other server", f"{len(lags)} ({unseen} never seen)"),
        ("seen by the other server after ack: p50", f"{statistics.median(lags) * 1000:.0f} ms" if lags else "-"),
        ("  p99", f"{percentile(lags, 0.99) * 1000:.0f} ms" if lags else "-"),
        ("  max", f"{max(lags) * 1000:.0f} ms" if lags else "-"),
        ("  over 1 s", f"{sum(1 for x in lags if x > 1.0)}"),
        ("write latency p50 / p99", f"{statistics.median(latencies) * 1000:.1f} / "
                                    f"{percentile(latencies, 0.99) * 1000:.1f} ms"),
        ("throughput", f"{total / elapsed:.0f} writes/s ({options.clients} clients, {elapsed:.1f} s)"),
    ]
    width = max(len(k) for k, _ in rows)
    print(f"two servers on one PostgreSQL database, {options.clients} clients x {options.facts} facts")
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if pg is not None:
        pg.stop()
    ok = total == present == audit == options.clients * options.facts and unseen == 0 \
        and all(x <= 1.0 for x in lags)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
