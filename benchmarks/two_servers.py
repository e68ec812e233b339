"""Two servers, one memory: concurrent writers on two `serve --http` processes sharing one database.

    python benchmarks/two_servers.py [--db PATH_OR_URL] [--clients 4] [--facts 500] [--kill]

Starts two servers (A and B) on one database (`--db`, as the CLI takes it; default: a new SQLite file in a
temporary folder, where HOME and XDG_DATA_HOME point too). Each server gets `--clients` clients, each on its
own connection and session, each writing `--facts` facts `w(Server, Client, I)` with remember_fact, one
after another, all clients at once. Beside them, a watcher per server asks that server, over and over, how
many of the OTHER server's writes it sees (`aggregate_all(count, w(a, c0, I), N)` per client: a client's
writes are acknowledged in order, so what is visible of them is a prefix), and notes when each write was
first seen. So the table gives, per server: writes acknowledged, present afterwards, the audit rows of
remember_fact (one per write, in the write's transaction), and how long after its acknowledgement the
other server first answered with each write (the poll's answer time: an upper bound).

`--kill` sends SIGKILL to server A when its clients are half done: A's clients fail from then on, every
write A acknowledged must still be present, and B's clients and watcher must go on unaffected.

Targets (issue "Many hosts, one memory"): acknowledged = present = audit rows; every server sees the
other's writes within 1 s of their acknowledgement. Nothing is asserted: it prints a table.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from http_client import HttpClient, ToolFailed, start_http_server  # noqa: E402

COMMAND = [sys.executable, "-m", "memory.cli"]
SERVERS = ("a", "b")
VISIBLE_WITHIN_S = 1.0
POLL_PAUSE_S = 0.01  # between a watcher's rounds: it asks as fast as the server answers, nearly


@dataclass
class Side:
    """One server, its clients' acknowledgements and what its watcher saw of the other side."""

    name: str
    proc: subprocess.Popen
    host: str
    port: int
    acked: dict[str, list[float]] = field(default_factory=dict)  # client -> acknowledgement time of each write
    failed: dict[str, str] = field(default_factory=dict)  # client -> the error that stopped it
    seen: dict[str, list[float]] = field(default_factory=dict)  # other side's client -> first-seen times
    polls: int = 0
    poll_errors: list[str] = field(default_factory=list)


def writer(side: Side, client: str, facts: int, half_done: threading.Event, total_acks: list[int],
           lock: threading.Lock, clients: int) -> None:
    times = side.acked.setdefault(client, [])
    try:
        connection = HttpClient(side.host, side.port)
        for i in range(facts):
            connection.call("remember_fact", {"fact": f"w({side.name}, {client}, {i})"})
            times.append(time.monotonic())
            with lock:
                total_acks[0] += 1
                if total_acks[0] >= clients * facts // 2:
                    half_done.set()
    except (ToolFailed, RuntimeError, OSError, http.client.HTTPException) as exc:  # killed, or refused
        side.failed[client] = f"{type(exc).__name__}: {exc}"[:200]


def watcher(side: Side, other: Side, clients: list[str], done: threading.Event) -> None:
    """Polls `side` for the other side's writes until they are all seen after the writers finished."""
    for client in clients:
        side.seen[client] = []
    try:
        connection = HttpClient(side.host, side.port)
    except (RuntimeError, OSError, http.client.HTTPException) as exc:
        side.poll_errors.append(str(exc))
        return
    while True:
        finished = done.is_set()
        for client in clients:
            try:
                answer = connection.call("query_logic",
                                         {"goal": f"aggregate_all(count, w({other.name}, {client}, I), N)"})
            except (ToolFailed, RuntimeError, OSError, http.client.HTTPException) as exc:
                side.poll_errors.append(f"{type(exc).__name__}: {exc}"[:200])
                return
            now = time.monotonic()
            count = answer["structuredContent"]["values"][0]["N"]
            seen = side.seen[client]
            seen.extend([now] * (count - len(seen)))
        side.polls += 1
        if finished and all(len(side.seen[c]) >= len(other.acked.get(c, ())) for c in clients):
            return
        time.sleep(POLL_PAUSE_S)


COUNT_SCRIPT = """
import json, sys
from memory import Memory
from memory.store import Store
db, pairs = sys.argv[1], json.loads(sys.argv[2])
memory = Memory(db)
counts = [memory.query_logic(f"aggregate_all(count, w({s}, {c}, I), N)").values[0]["N"] for s, c in pairs]
with Store(db).read() as conn:
    audit = conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0]
print(json.dumps({"counts": counts, "audit": audit}))
"""


def count_rows(db: str, env: dict, pairs: list[tuple[str, str]]) -> tuple[dict[tuple[str, str], int], int]:
    """Facts per (server, client) and remember_fact audit rows, read afterwards by a fresh process."""
    out = subprocess.run([sys.executable, "-c", COUNT_SCRIPT, db, json.dumps(pairs)], env=env, capture_output=True,
                         text=True, check=True)
    data = json.loads(out.stdout)
    return dict(zip(pairs, data["counts"])), data["audit"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="the shared database (a path or a postgresql:// URL); default a new SQLite file")
    parser.add_argument("--clients", type=int, default=4, help="clients per server")
    parser.add_argument("--facts", type=int, default=500, help="facts each client writes")
    parser.add_argument("--kill", action="store_true", help="SIGKILL server A when its clients are half done")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="two-servers-") as name:
        tmp = Path(name)
        db = args.db or str(tmp / "shared.db")
        env = dict(os.environ, HOME=str(tmp), XDG_DATA_HOME=str(tmp / "data"), XDG_CACHE_HOME=str(tmp / "cache"), DATALOG_MEMORY_DB=db,
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        subprocess.run([*COMMAND, "--db", db, "remember-fact", "--fact", "w(start, c0, 0)"], env=env, cwd=tmp,
                       capture_output=True, check=True)  # created before two servers race to create it
        sides = {}
        for server in SERVERS:
            proc, host, port = start_http_server([*COMMAND, "--db", db, "serve"], env, tmp, tmp / f"{server}.log")
            sides[server] = Side(server, proc, host, port)
        clients = [f"c{k}" for k in range(args.clients)]
        try:
            report(run(sides, clients, args), sides, clients, db, env, args)
        finally:
            for side in sides.values():
                if side.proc.poll() is None:
                    side.proc.send_signal(signal.SIGTERM)
                    side.proc.wait(30)


def run(sides: dict[str, Side], clients: list[str], args) -> float:
    """Runs every writer and both watchers; returns the wall seconds the writers took."""
    lock = threading.Lock()
    half_done = {name: threading.Event() for name in sides}
    writers_done = {name: threading.Event() for name in sides}
    acks = {name: [0] for name in sides}
    a, b = sides["a"], sides["b"]
    watchers = [threading.Thread(target=watcher, args=(a, b, clients, writers_done["b"])),
                threading.Thread(target=watcher, args=(b, a, clients, writers_done["a"]))]
    groups = {name: [threading.Thread(target=writer, args=(side, c, args.facts, half_done[name], acks[name], lock,
                                                           len(clients))) for c in clients]
              for name, side in sides.items()}
    started = time.monotonic()
    for thread in [*watchers, *groups["a"], *groups["b"]]:
        thread.start()
    if args.kill:
        half_done["a"].wait()
        a.proc.kill()  # SIGKILL: no shutdown, no checkpoint
        a.proc.wait()
    for name, group in groups.items():
        for thread in group:
            thread.join()
        writers_done[name].set()
    elapsed = time.monotonic() - started
    for thread in watchers:
        thread.join(timeout=120)
    return elapsed


def report(elapsed: float, sides: dict[str, Side], clients: list[str], db: str, env: dict, args) -> None:
    counts, audit = count_rows(db, env, [(s, c) for s in sides for c in clients])
    acked_total = sum(len(t) for side in sides.values() for t in side.acked.values())
    present_total = sum(v for (server, _), v in counts.items() if server in sides)
    print(f"Two servers on {db if args.db else 'one SQLite file'}: {args.clients} clients each, {args.facts} "
          f"facts per client{', server A killed (SIGKILL) half-way' if args.kill else ''}; writers took {elapsed:.1f} s")
    print(f"{'server':8} {'acknowledged':>12} {'present':>8} {'acked missing':>13} {'clients failed':>14} "
          f"{'writes/s':>9}   other side's writes seen after ack, ms: p50 / p99 / max (polls)")
    print("-" * 118)
    for name, side in sides.items():
        other = sides["b" if name == "a" else "a"]
        acked = sum(len(t) for t in side.acked.values())
        present = sum(counts.get((name, c), 0) for c in clients)
        missing = sum(max(0, len(side.acked.get(c, ())) - counts.get((name, c), 0)) for c in clients)
        delays = [max(0.0, seen - ack) * 1000 for c in clients
                  for ack, seen in zip(other.acked.get(c, ()), side.seen.get(c, ()))]
        unseen = sum(max(0, len(other.acked.get(c, ())) - len(side.seen.get(c, ()))) for c in clients)
        if side.proc.returncode == -signal.SIGKILL:
            seen_text = "killed: not watching"
        elif delays:
            ordered = sorted(delays)
            seen_text = (f"{statistics.median(ordered):.0f} / {ordered[int(0.99 * (len(ordered) - 1))]:.0f} / "
                         f"{ordered[-1]:.0f} ({side.polls} polls)"
                         + (f"; {unseen} never seen" if unseen else "")
                         + f"; within {VISIBLE_WITHIN_S:g} s: {'met' if ordered[-1] <= VISIBLE_WITHIN_S * 1000 and not unseen else 'missed'}")
        else:
            seen_text = f"nothing seen ({'; '.join(side.poll_errors[:1]) or 'no writes'})"
        print(f"{name.upper():8} {acked:>12,} {present:>8,} {missing:>13} {len(side.failed):>14} "
              f"{acked / elapsed:>9.0f}   {seen_text}")
    print()
    equal = "met" if present_total == acked_total and audit == present_total + 1 else (
        "every acknowledged write present" if audit == present_total + 1 and present_total >= acked_total else "missed")
    # + 1: the fact written before the servers started, through the CLI (also audited).
    print(f"acknowledged {acked_total:,}; present {present_total:,}; remember_fact audit rows {audit - 1:,} "
          f"(one more, the CLI's first fact, excluded): acknowledged = present = audit rows: {equal}")
    for name, side in sides.items():
        for client, error in list(side.failed.items())[:2]:
            print(f"  {name.upper()} {client} stopped: {error}")


if __name__ == "__main__":
    main()
