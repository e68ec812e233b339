"""`serve --http` under callers that try to take it from the others: idle and trickling connections, more
connections than it may hold, duplicated credentials, look-alike origins, large opening requests and large
bodies at once. Each limit refuses the request before it costs more than its bytes, and the server goes on
serving everyone else."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import anyio
import pytest

from memory.http_server import LARGE_BODY_BYTES, OPENING_BODY_BYTES, TokenGate
from surfaces import ERAS, HttpServer, run_http_client

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
LIMITS = {"DATALOG_MEMORY_HTTP_MAX_CONNECTIONS": "4", "DATALOG_MEMORY_HTTP_REQUEST_TIMEOUT_S": "1"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("limits") / "limits.db")
    with HttpServer(db, extra_env=LIMITS) as running:
        yield running


def _address(server) -> tuple[str, int]:
    host, port = server.url.split("//")[1].split("/")[0].rsplit(":", 1)
    return host, int(port)


def _post(server, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """One POST to /mcp with exactly these headers (repeated names kept), on its own connection."""
    connection = http.client.HTTPConnection(*_address(server), timeout=30)
    connection.putrequest("POST", "/mcp")
    for name, value in [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
                        ("content-length", str(len(body))), *headers]:
        connection.putheader(name, value)
    connection.endheaders(body)
    response = connection.getresponse()
    try:
        return response.status, response.read()
    finally:
        connection.close()


def _closed_by_server(sock: socket.socket, within_s: float = 20) -> bool:
    """Whether the server closes `sock` (reads end or reset) within `within_s` seconds."""
    sock.settimeout(within_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def _echo(server, era: str = ERAS[0]) -> str:
    async def scenario(client):
        return (await client.call_tool("echo", {"message": "still here"})).content[0].text
    return run_http_client(server.url, era, scenario)


def test_idle_trickling_and_surplus_connections_are_closed_and_the_server_serves_on(server):
    """Four connections (the limit here) that never finish a request: two silent, two sending a byte every
    0.2 s. A fifth is closed at once; the four are closed at the request deadline (1 s here), trickling or not;
    then a real client is served."""
    host, port = _address(server)
    silent = [socket.create_connection((host, port)) for _ in range(2)]
    trickling = [socket.create_connection((host, port)) for _ in range(2)]
    stop = threading.Event()

    def trickle(sock: socket.socket) -> None:
        try:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not stop.wait(0.2):
                sock.sendall(b"x")
        except OSError:
            pass  # closed by the server

    threads = [threading.Thread(target=trickle, args=(s,), daemon=True) for s in trickling]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.3)  # the four are accepted before the fifth comes
        surplus = socket.create_connection((host, port))
        assert _closed_by_server(surplus, 5)
        assert all(_closed_by_server(s) for s in silent + trickling)
    finally:
        stop.set()
        for s in silent + trickling:
            s.close()
    assert _echo(server) == "still here"


@pytest.mark.parametrize("name", ["authorization", "origin", "mcp-session-id"])
def test_a_request_with_two_of_a_header_that_names_the_caller_is_refused(server, name):
    """Which of two Authorization (or Origin, or session) headers counts is where a proxy in front and this server
    could disagree about who calls: 400, whatever the values."""
    values = {"authorization": "Bearer dlm_000000000000_x", "origin": f"http://127.0.0.1:{_address(server)[1]}",
              "mcp-session-id": "0" * 32}[name]
    status, body = _post(server, json.dumps(INITIALIZE).encode(), [(name, values), (name, values)])
    assert status == 400 and name in json.loads(body)["error"]


@pytest.mark.parametrize("origin, allowed", [
    ("http://127.0.0.1:{port}", True), ("http://localhost:{port}", True), ("https://localhost:{port}", False),
    ("http://127.0.0.1:{port}.evil.com", False), ("http://localhost:{port}.evil.com", False),
    ("http://localhost:abc", False), ("http://127.0.0.1:", False), ("http://localhost:{port}/evil", False),
    ("http://user@localhost:{port}", False), ("http://evil.com", False), ("null", False),
])
def test_an_origin_must_name_this_machine_exactly(server, origin, allowed):
    port = _address(server)[1]
    status, _ = _post(server, json.dumps(INITIALIZE).encode(), [("origin", origin.format(port=port))])
    assert (status == 200) is allowed, status


def test_a_request_opening_a_session_carries_at_most_64_kib_and_others_are_not_held_to_it(server):
    """What initialize carries lives as long as its session: a large one is refused (413) and opens none; a
    request in a session, or of the stateless era, may be as large as any call needs."""
    big = dict(INITIALIZE, params=dict(INITIALIZE["params"], capabilities={"experimental": {"pad": "x" * OPENING_BODY_BYTES}}))
    status, _ = _post(server, json.dumps(big).encode(), [])
    assert status == 413
    status, _ = _post(server, json.dumps(INITIALIZE).encode(), [])
    assert status == 200

    text = "a long note " * (OPENING_BODY_BYTES // 6)  # twice the opening limit

    async def remember(client):
        result = await client.call_tool("memory_remember", {"memory": text, "scope": "session"})
        return result.is_error, result.structured_content or result.content[0].text

    for era in ERAS:
        failed, content = run_http_client(server.url, era, remember)
        assert not failed and content["id"], content


def test_large_bodies_are_parsed_one_at_a_time_and_small_ones_meanwhile():
    """The gate lets one request with a body over LARGE_BODY_BYTES (or of unknown length) reach the server at a
    time; requests with small bodies pass beside it."""
    running = {"large": 0, "small": 0}
    most = {"large": 0, "small": 0}
    done = {"large": 0, "small": 0}
    release = anyio.Event()

    async def app(scope, receive, send):
        kind = scope["kind"]
        running[kind] += 1
        most[kind] = max(most[kind], running[kind])
        if kind == "large":
            await release.wait()
        running[kind] -= 1
        done[kind] += 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    gate = TokenGate(app, repository=None, required=False, origins=None)

    async def request(kind: str, length: int | None) -> None:
        headers = [(b"mcp-session-id", b"s" * 32)] + ([(b"content-length", str(length).encode())]
                                                      if length is not None else [])
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "kind": kind}

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            pass

        await gate(scope, receive, send)

    async def scenario():
        async with anyio.create_task_group() as tasks:
            for length in (LARGE_BODY_BYTES + 1, 16 << 20, None):
                tasks.start_soon(request, "large", length)
            await anyio.sleep(0.1)
            for _ in range(3):
                tasks.start_soon(request, "small", 200)
            await anyio.sleep(0.1)
            # One large request in the server, two waiting at the gate; the small ones served meanwhile.
            assert running == {"large": 1, "small": 0} and done == {"large": 0, "small": 3}
            release.set()

    anyio.run(scenario)
    assert most["large"] == 1 and done == {"large": 3, "small": 3}


def test_the_uvicorn_hooks_the_connection_limits_rest_on_are_still_there():
    """memory/http_connections.py subclasses uvicorn's h11 protocol (no public API gives a per-request arrival
    deadline or closing the oldest idle connection). If a uvicorn release moves a hook it rests on, this fails
    here, by name, instead of the limits silently stopping to work (pyproject pins the tested range)."""
    import asyncio
    import inspect

    import h11
    from uvicorn.config import Config
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    from memory.http_connections import GuardedH11Protocol

    for hook in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert hook in vars(H11Protocol), f"uvicorn's H11Protocol no longer defines {hook}"
    assert list(inspect.signature(H11Protocol.__init__).parameters)[:4] == ["self", "config", "server_state",
                                                                           "app_state"]

    class Transport(asyncio.Transport):
        def __init__(self) -> None:
            super().__init__()
            self.aborted = self.closing = False

        def get_extra_info(self, name, default=None):
            return {"peername": ("127.0.0.1", 1), "sockname": ("127.0.0.1", 2)}.get(name, default)

        def is_closing(self) -> bool:
            return self.closing or self.aborted

        def abort(self) -> None:
            self.aborted = True

        def close(self) -> None:
            self.closing = True

        def write(self, data) -> None:
            pass

    async def main() -> None:
        config = Config(app=lambda scope, receive, send: None, log_config=None)
        config.load()
        GuardedH11Protocol.arrival_s = 0.05
        state = ServerState()
        protocol = GuardedH11Protocol(config=config, server_state=state, app_state={})
        transport = Transport()
        protocol.connection_made(transport)
        assert protocol in state.connections and protocol in GuardedH11Protocol.idle  # what the cap counts
        assert isinstance(protocol.conn, h11.Connection) and protocol.conn.their_state is h11.IDLE
        protocol.data_received(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # a request begun, not whole
        assert protocol not in GuardedH11Protocol.idle
        await asyncio.sleep(0.3)
        assert transport.aborted  # its arrival deadline passed
        protocol.connection_lost(None)
        assert protocol not in state.connections and protocol.peer is None

    saved = GuardedH11Protocol.arrival_s
    try:
        asyncio.run(main())
    finally:
        GuardedH11Protocol.arrival_s = saved
