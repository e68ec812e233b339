"""Fair limits on the HTTP server (issue 34, item 5): one token opening sessions, or one peer opening idle
connections, can no longer lock the other callers out. Sessions per principal are capped (a share of the
global cap) and the oldest idle one goes first; at the global cap, the principal holding the most gives up
its oldest idle session; connections per peer address are capped and idle connections are closed first
when a cap is reached. Both are operator settings."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time

import httpx2
import pytest

from memory.errors import InvalidConfiguration
from memory.http_server import session_shares
from surfaces import COMMAND, HttpServer, env
from http_requests import mcp_headers as _headers


def _token(db: str, principal: str) -> str:
    ran = subprocess.run([*COMMAND, "--db", db, "token", "create", "--name", principal, "--principal", principal,
                          "--json"], capture_output=True, text=True, env=env(), check=True)
    return json.loads(ran.stdout)["token"]




def _open(url: str, token: str | None) -> tuple[int, str | None]:
    response = httpx2.post(url, timeout=30, headers=_headers(token), json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    return response.status_code, response.headers.get("mcp-session-id")


def _alive(url: str, token: str | None, session: str) -> bool:
    response = httpx2.post(url, timeout=30, headers=_headers(token, session),
                           json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
    return response.status_code == 200


@pytest.fixture
def tokens(tmp_path):
    db = str(tmp_path / "memory.db")
    return db, _token(db, "flooder"), _token(db, "other")


def test_one_token_flooding_sessions_keeps_only_its_share_and_others_are_served(tokens):
    db, flooder, other = tokens
    server = HttpServer(db, extra_env={"DATALOG_MEMORY_HTTP_MAX_SESSIONS": "20",
                                       "DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER": "5"})
    try:
        status, early = _open(server.url, other)
        assert status == 200
        flood = [_open(server.url, flooder) for _ in range(30)]
        assert {code for code, _ in flood} == {200}  # each new one closed the flooder's own oldest idle one
        assert sum(_alive(server.url, flooder, sid) for _, sid in flood) == 5
        assert all(_alive(server.url, flooder, sid) for _, sid in flood[-5:])  # the newest are kept
        assert _alive(server.url, other, early)  # nobody else's session was touched
        assert _open(server.url, other)[0] == 200
    finally:
        server.stop()


def test_at_the_global_cap_the_biggest_holder_gives_up_its_oldest_idle_session(tokens):
    db, flooder, other = tokens
    server = HttpServer(db, extra_env={"DATALOG_MEMORY_HTTP_MAX_SESSIONS": "6",
                                       "DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER": "6"})
    try:
        held = [_open(server.url, flooder)[1] for _ in range(6)]
        status, mine = _open(server.url, other)
        assert status == 200 and _alive(server.url, other, mine)
        assert [_alive(server.url, flooder, sid) for sid in held] == [False] + [True] * 5
    finally:
        server.stop()


def test_a_caller_whose_sessions_are_all_in_use_is_refused_with_the_reason(tokens):
    db, flooder, _ = tokens
    server = HttpServer(db, extra_env={"DATALOG_MEMORY_HTTP_MAX_SESSIONS": "20",
                                       "DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER": "2"})
    try:
        with httpx2.Client(timeout=30) as client, contextlib.ExitStack() as streams:
            for _ in range(2):  # each session busy: an open GET stream
                _, sid = _open(server.url, flooder)
                headers = {**_headers(flooder, sid), "accept": "text/event-stream"}
                response = streams.enter_context(client.stream("GET", server.url, headers=headers))
                assert response.status_code == 200
            refused = httpx2.post(server.url, timeout=30, headers=_headers(flooder), json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            assert refused.status_code == 503
            assert "in use" in refused.json()["error"]["message"]
    finally:
        server.stop()


def _idle(host: str, port: int, count: int, source: str | None = None) -> list[socket.socket]:
    opened = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if source:
            s.bind((source, 0))
        s.settimeout(5)
        s.connect((host, port))
        opened.append(s)
    return opened


def _closed_by_server(sockets: list[socket.socket]) -> int:
    closed = 0
    for s in sockets:
        s.settimeout(0.2)
        try:
            closed += s.recv(1) == b""
        except socket.timeout:
            pass
        except OSError:
            closed += 1
    return closed


def test_idle_connection_floods_leave_callers_served_and_a_peer_keeps_only_its_share(tmp_path):
    server = HttpServer(str(tmp_path / "memory.db"), extra_env={
        "DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": "40", "DATALOG_MEMORY_HTTP_MAX_CONNECTIONS_PER_PEER": "10"})
    host, port = server.url.split("//")[1].split("/")[0].rsplit(":", 1)
    flood = []
    try:
        flood = _idle(host, int(port), 60)  # from the callers' own address: idle ones are closed first
        time.sleep(0.3)
        assert [_open(server.url, None)[0] for _ in range(5)] == [200] * 5
        assert _closed_by_server(flood) >= 50  # the peer keeps at most its share
        other = _idle(host, int(port), 30, source="127.0.0.2")  # another peer address
        time.sleep(0.3)
        assert _closed_by_server(other) == 20
        flood.extend(other)
        assert _open(server.url, None)[0] == 200
    finally:
        for s in flood:
            s.close()
        server.stop()


def test_the_caps_are_operator_settings_refused_by_name_when_they_do_not_parse():
    shares = session_shares({"DATALOG_MEMORY_HTTP_MAX_SESSIONS": "50"})
    assert (shares.total, shares.per_caller) == (50, 5)
    assert session_shares({"DATALOG_MEMORY_HTTP_MAX_SESSIONS": "4",
                           "DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER": "9"}).per_caller == 4
    with pytest.raises(InvalidConfiguration, match="DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER"):
        session_shares({"DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER": "many"})
    from memory.http_connections import GuardedH11Protocol, configure
    saved = GuardedH11Protocol.limit, GuardedH11Protocol.per_peer, GuardedH11Protocol.arrival_s
    try:
        configure({"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": "1000"})  # (the descriptor limit may lower the cap)
        assert GuardedH11Protocol.per_peer == max(GuardedH11Protocol.limit // 4, 64)
        configure({"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": "100"})
        assert GuardedH11Protocol.per_peer == 64
        configure({"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": "4"})
        assert GuardedH11Protocol.per_peer == 4
        with pytest.raises(InvalidConfiguration, match="DATALOG_MEMORY_HTTP_MAX_CONNECTIONS_PER_PEER"):
            configure({"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS_PER_PEER": "0"})
    finally:
        GuardedH11Protocol.limit, GuardedH11Protocol.per_peer, GuardedH11Protocol.arrival_s = saved
