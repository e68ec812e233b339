"""A caller reads its own writes (issue 34, item 1): requests of one stdio connection, or of one HTTP
session, take effect in the order they arrived, as far as that caller can observe, although evaluating
calls run in worker processes and writes in the server's own.

Pipelined NDJSON (a write, then a query of it, sent without waiting for the first reply) used to lose
20 of 20 races: the query ran in a worker before the write's thread had committed."""

from __future__ import annotations

import anyio
import pytest

from memory import Memory
from surfaces import ERAS, HttpServer, run_client, run_http_client
from test_server_budgets import Wire

ROUNDS = 20


def _text(reply: dict) -> str:
    return reply["result"]["content"][0]["text"]


def _answers(reply: dict) -> list:
    return reply["result"]["structuredContent"]["answers"] if "structuredContent" in reply["result"] else []


@pytest.fixture
def wire(tmp_path):
    w = Wire(tmp_path, str(tmp_path / "memory.db"), {"DATALOG_MEMORY_WORKERS": "2"})
    w.initialize()
    yield w
    assert w.close() == 0


def test_a_pipelined_query_sees_the_write_sent_before_it(wire):
    pairs = []
    for i in range(ROUNDS):  # each pair sent back to back, nothing waited for
        written = wire.call("remember_fact", {"fact": f"k({i})"})
        asked = wire.call("query_logic", {"goal": f"k({i})"})
        pairs.append((written, asked))
    count = wire.call("query_logic", {"goal": "aggregate_all(count, k(_), N)"})
    answers = [_text(wire.wait(asked)[1]) for _, asked in pairs]
    assert [i for i, text in enumerate(answers) if text != "[{}]"] == [], answers[:3]  # "[]": the write missed
    assert str(ROUNDS) in _text(wire.wait(count)[1])
    for written, asked in pairs:  # the write's reply never comes after the query that saw it
        assert wire.wait(written)[0] <= wire.wait(asked)[0]


def test_a_query_sent_before_a_write_does_not_see_it(wire):
    before = wire.call("query_logic", {"goal": "late(X)"})
    wire.call("remember_fact", {"fact": "late(1)"})
    after = wire.call("query_logic", {"goal": "late(X)"})
    assert _text(wire.wait(before)[1]).split("\n")[0] == "[]"  # then a % note: late/1 had no facts yet
    assert "1" in _text(wire.wait(after)[1])


def test_independent_reads_still_run_side_by_side(tmp_path):
    """A slow read, then a quick one: the quick one does not wait for the slow one to end (two workers)."""
    db = str(tmp_path / "memory.db")
    with Memory(db) as m:
        m.add_facts([f"v({i})" for i in range(150)])
        m.define_rule("c(A,B,C)", "v(A), v(B), v(C)")
    wire = Wire(tmp_path, db, {"DATALOG_MEMORY_WORKERS": "2", "DATALOG_MEMORY_TIMEOUT_S": "20",
                               "DATALOG_MEMORY_MAX_TUPLES": "100000000"})
    try:
        wire.initialize()
        slow = wire.call("query_logic", {"goal": "aggregate_all(count, c(_,_,_), N)"})
        quick = wire.call("query_logic", {"goal": "v(3)"})
        slow_at, _ = wire.wait(slow, 60)
        quick_at, reply = wire.wait(quick, 60)
        assert _text(reply) == "[{}]" and quick_at < slow_at
    finally:
        assert wire.close() == 0


def test_a_cancelled_request_does_not_hold_back_the_ones_after_it(wire):
    rid = wire.call("remember_fact", {"fact": "c(1)"})
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
    asked = wire.call("query_logic", {"goal": "c(X)"})
    wire.wait(asked, 30)


async def _pairs(client, prefix: str, seen: dict, rounds: int = 10) -> None:
    """`rounds` writes and queries of them, each query sent right after its write, none awaited in between."""
    async def ask(i):
        result = await client.call_tool("query_logic", {"goal": f"{prefix}({i})"})
        seen[i] = result.content[0].text

    await client.call_tool("query_logic", {"goal": "warm(X)"})  # the tool list and schemas are fetched by now
    async with anyio.create_task_group() as tg:
        for i in range(rounds):
            tg.start_soon(client.call_tool, "remember_fact", {"fact": f"{prefix}({i})"})
            await anyio.sleep(0)  # the write's request leaves before the query's
            tg.start_soon(ask, i)


@pytest.mark.parametrize("era", ERAS)
def test_concurrent_mcp_client_calls_over_stdio_read_their_writes(tmp_path, era):
    seen: dict[int, str] = {}
    run_client(str(tmp_path / "memory.db"), era, lambda client: _pairs(client, "m", seen),
               {"DATALOG_MEMORY_WORKERS": "2"})
    missed = {i: t for i, t in seen.items() if t != "[{}]"}
    assert len(seen) == 10 and not missed, missed


def test_concurrent_calls_of_one_http_session_read_their_writes(tmp_path):
    server = HttpServer(str(tmp_path / "memory.db"), extra_env={"DATALOG_MEMORY_WORKERS": "2"})
    seen: dict[int, str] = {}
    try:
        run_http_client(server.url, "legacy", lambda client: _pairs(client, "h", seen))
    finally:
        server.stop()
    missed = {i: t for i, t in seen.items() if t != "[{}]"}
    assert len(seen) == 10 and not missed, missed
