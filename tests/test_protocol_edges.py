"""Well-formed JSON the parsers cannot take (issue 34, item 6): a request nested 10,000 deep is answered
on its own id (it used to get -32700 with id null, and the client waited for ever), and a lone surrogate
escape gets the same answer over HTTP as over stdio (it got `-32700 Parse error: unexpected end of hex
escape` over HTTP)."""

from __future__ import annotations

import httpx2
import pytest

from memory.mcp_server import read_message
from surfaces import HttpServer
from test_server_budgets import Wire

SURROGATE = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"remember_fact","arguments":{"fact":"p(\\"\\ud800\\")"}}}'


def _deep(depth: int, rid=7, id_last: bool = False) -> str:
    nested = "[" * depth + "]" * depth
    if id_last:
        return ('{"jsonrpc":"2.0","params":{"name":"query_logic","arguments":{"goal":' + nested +
                '}},"method":"tools/call","id":' + f"{rid}" + "}")
    return ('{"jsonrpc":"2.0","id":' + f"{rid}" + ',"method":"tools/call","params":{"name":"query_logic",'
            '"arguments":{"goal":' + nested + "}}}")


@pytest.mark.parametrize("depth", [300, 1000, 10_000, 200_000])
@pytest.mark.parametrize("id_last", [False, True])
def test_a_deep_request_is_answered_on_its_own_id(depth, id_last):
    reply = read_message(_deep(depth, 7, id_last))
    assert isinstance(reply, tuple)
    error = reply[0].message
    assert error.id == 7 and error.error.code == -32600 and "nested too deeply" in error.error.data


def test_a_deep_request_with_a_string_id_and_one_without_an_id():
    assert read_message(_deep(10_000, '"abc"'))[0].message.id == "abc"
    without = ('{"jsonrpc":"2.0","method":"tools/call","params":{"a":' + "[" * 10_000 + "]" * 10_000 + "}}")
    assert read_message(without)[0].message.id is None


def test_text_that_is_not_json_is_still_a_parse_error_with_id_null():
    error = read_message('{"jsonrpc":"2.0","id":1,"method":"tools/call"')[0].message
    assert error.id is None and error.error.code == -32700


def _over_http(server: HttpServer, bodies: list[str | bytes]) -> list[dict]:
    opened = httpx2.post(server.url, timeout=30, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25", "mcp-session-id": opened.headers["mcp-session-id"]}
    return [httpx2.post(server.url, content=b if isinstance(b, bytes) else b.encode(), headers=headers,
                        timeout=30).json() for b in bodies]


def test_http_answers_deep_and_lone_surrogate_requests_as_stdio_does(tmp_path):
    bodies = [SURROGATE, _deep(10_000, 9), _deep(1000, 10)]
    wire = Wire(tmp_path, str(tmp_path / "stdio.db"))
    try:
        wire.initialize()
        for body in bodies:
            wire.send(body)
        on_stdio = [wire.wait(rid)[1] for rid in (8, 9, 10)]
    finally:
        wire.close()
    server = HttpServer(str(tmp_path / "http.db"))
    try:
        on_http = _over_http(server, bodies)
    finally:
        server.stop()
    assert on_http == on_stdio
    assert [r["id"] for r in on_http] == [8, 9, 10]
    assert "unpaired surrogate" in on_http[0]["error"]["data"]


# Bytes that are not UTF-8 inside a string of a well-formed request: refused on its own id, never stored as
# replacement characters (a memory promised byte for byte would keep and hash altered text).
NOT_UTF8 = (b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_remember",'
            b'"arguments":{"memory":"bad \xc3\x28 utf8"}}}')


def test_a_request_that_is_not_utf8_is_refused_on_its_id_over_stdio_and_http(tmp_path):
    wire = Wire(tmp_path, str(tmp_path / "stdio.db"))
    try:
        wire.initialize()
        wire.proc.stdin.buffer.write(NOT_UTF8 + b"\n")
        wire.proc.stdin.flush()
        on_stdio = wire.wait(11)[1]
        wire.send({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                   "params": {"name": "memory_search", "arguments": {"query": "utf8"}}})
        searched = wire.wait(12)[1]
    finally:
        wire.close()
    assert on_stdio["id"] == 11 and on_stdio["error"]["code"] == -32600
    assert "not UTF-8" in on_stdio["error"]["data"]
    assert searched["result"]["structuredContent"]["total"] == 0  # nothing was stored
    server = HttpServer(str(tmp_path / "http.db"))
    try:
        on_http = _over_http(server, [NOT_UTF8])[0]
    finally:
        server.stop()
    assert on_http == on_stdio

