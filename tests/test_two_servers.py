"""Two servers, one memory: two `serve --http` processes (two hosts, simulated by two ports) on one database,
written to at once by the mcp package's client; one of them killed with SIGKILL half-way through.

What must hold: every write either server acknowledged is present afterwards, with exactly one audit row per
stored write; the surviving server keeps serving its clients and answers queries that include the killed
server's acknowledged writes. (How fast each server sees the other's writes is measured, not asserted:
benchmarks/two_servers.py.)"""

from __future__ import annotations

import sqlite3
import threading

from memory import Memory
from surfaces import ERAS, HttpServer, run_http_client

CLIENTS = 2  # per server
FACTS = 20  # per client


def _writer(url: str, server: str, client: int, acked: list[int], errors: list[BaseException]) -> None:
    """Writes w(server, c<client>, 0..FACTS-1) one after another, noting each acknowledged one; the clients
    of a server alternate between the protocol eras."""

    async def scenario(session):
        for i in range(FACTS):
            result = await session.call_tool("remember_fact", {"fact": f"w({server}, c{client}, {i})"})
            assert not result.is_error, result
            acked.append(i)

    try:
        run_http_client(url, ERAS[client % len(ERAS)], scenario)
    except BaseException as exc:  # the killed server's clients fail; recorded, judged by the test
        errors.append(exc)


def test_two_servers_share_one_memory_and_a_kill_9_of_one_loses_no_acknowledged_write(tmp_path):
    db = str(tmp_path / "shared.db")
    with Memory(db) as memory:  # created once, before two servers open it
        memory.remember_fact("w(start, c0, 0)")
    a, b = HttpServer(db), HttpServer(db)
    acked = {(s, c): [] for s in ("a", "b") for c in range(CLIENTS)}
    errors = {key: [] for key in acked}
    threads = [threading.Thread(target=_writer, args=((a if s == "a" else b).url, s, c, acked[s, c],
                                                      errors[s, c])) for s, c in acked]
    try:
        for thread in threads:
            thread.start()
        while sum(len(acked["a", c]) for c in range(CLIENTS)) < CLIENTS * FACTS // 2:
            assert any(t.is_alive() for t in threads[:CLIENTS]), errors
            threading.Event().wait(0.01)
        a.kill9()  # no shutdown, no checkpoint
        for thread in threads:
            thread.join(120)

        # The survivor served every one of its clients to the end.
        assert all(not errors["b", c] and acked["b", c] == list(range(FACTS)) for c in range(CLIENTS)), errors
        assert all(errors["a", c] or len(acked["a", c]) == FACTS for c in range(CLIENTS))

        async def read(session):
            answers = {}
            for s, c in acked:
                result = await session.call_tool("query_logic", {"goal": f"w({s}, c{c}, I)", "limit": 1000})
                answers[s, c] = {int(row["I"]) for row in result.structured_content["bindings"]}
            return answers

        seen = run_http_client(b.url, ERAS[0], read)  # the survivor answers with the killed one's writes
    finally:
        a.stop()
        b.stop()
    for key, indexes in acked.items():
        assert set(indexes) <= seen[key], key  # every acknowledged write, whichever server took it
        # A write in flight at the kill may have committed unacknowledged; nothing else is there.
        assert seen[key] <= set(range(len(indexes) + 1)), key
    with sqlite3.connect(db) as conn:  # read as anyone would: one audit row per stored fact
        facts = conn.execute("SELECT count(*) FROM facts WHERE functor = 'w'").fetchone()[0]
        audited = conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0]
    assert facts == audited == 1 + sum(len(v) for v in seen.values())
