"""The MCP Streamable HTTP adapter (`datalog-memory serve --http`): the stdio server's dispatch, served to
many callers, each with its own identity.

The SDK's session manager serves both protocol eras on one endpoint (/mcp): the 2025-11-25 handshake with
its Mcp-Session-Id, and the 2026-07-28 stateless requests. In front of it, one gate answers every HTTP
request before the SDK sees it: a request whose bearer token is missing (when one is required), wrong,
malformed or revoked gets 401 and touches nothing. The token's row (checked against the database on every
request, so a revocation takes effect at once) names the caller: principal, project, source class and
capabilities; never a tool argument. The session is the connection's: `http-<Mcp-Session-Id>` (a random id
the server issued, bound by the SDK to the credential that opened it); a 2026-07-28 request has no
connection, and its session is the token's own (`token-<id>`), or the configured one without a token.

Without any token, on a loopback address, and without --require-token, every caller gets the process's
configured caller, as stdio's single client does (the host's environment names it); each connection still
has its own session. Once a token is required, it is required of every request (memory/access/tokens.py
`token_required` decides, at start)."""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import os
import re
import socket
import sys
import time

import anyio
import anyio.to_thread
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.jsonrpc import PARSE_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import __version__
from .api import Memory
from .early_initialize import decode_line
from .http_connections import GuardedH11Protocol
from .settings import positive
from .mcp_server import SESSION_STATE, Arrivals, announce_storage, build_server, configure_logging, read_message, taking
from .access.context import CallerContext
from .access.tokens import caller_of, is_loopback, verify
from .store import absolute, open_store
from .store import shown as displayed
from .store.repository import Repository, TokenRow
from .workers import WorkerPool

log = logging.getLogger("datalog-memory")

PATH = "/mcp"
TOKEN_ROW = "datalog-memory.token"  # where the gate leaves the verified token's row in the ASGI scope
SESSION_HEADER = "mcp-session-id"
REALM = "datalog-memory"
# Every call stdio accepts fits: the largest argument (memory_remember's 1,000,000 characters) is at most 12 MB
# as JSON (an astral character escaped as two \uXXXX); a larger body is refused with 413 before it is parsed.
MAX_BODY_BYTES = 16 << 20
# What a session keeps lives as long as the session: the request that opens one (initialize, a few hundred bytes
# from real clients) may carry at most this much, so open sessions cannot hold the server's memory.
OPENING_BODY_BYTES = 64 << 10
MAX_SESSIONS = 1000  # open handshake-era sessions, all callers together (each idle one ends after 30 minutes)
SESSIONS_ENV = "DATALOG_MEMORY_HTTP_MAX_SESSIONS"
SESSIONS_PER_CALLER_ENV = "DATALOG_MEMORY_HTTP_MAX_SESSIONS_PER_CALLER"
SESSION_SHARE = 10  # by default one caller may hold a tenth of the sessions
SESSION_IDLE_S = 1800.0  # the SDK's idle lifetime of a session: a record idle this long is of an expired session
# A body over LARGE_BODY_BYTES (or of unknown length) waits for the one large request being served: parsing a
# 16 MiB body of tiny JSON values takes about 350 MB for a moment, and several at once could take gigabytes.
LARGE_BODY_BYTES = 1 << 20
LARGE_AT_ONCE = 1
ORIGIN = re.compile(r"http://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?")
SHUTDOWN_GRACE_S = 3  # at a signal, how long open requests and streams get before the server stops


@dataclasses.dataclass(eq=False)
class _Session:
    """An open handshake-era session as the gate sees it: whose it is, the opening request's scope (to close it
    through the SDK's own DELETE), the requests in flight on it, and when it was last used."""

    owner: str
    scope: dict
    busy: int = 0
    last_used: float = 0.0
    # The session's own state (its enabled tools, its log threshold): handed to the handlers in the scope, so
    # they need no private handle on the SDK's connection object.
    state: dict = dataclasses.field(default_factory=dict)


class SessionShares:
    """Fair shares of the session table (issue 34): at most `per_caller` sessions per principal, and when a new one
    would pass a cap, the oldest idle session (no request in flight, no open stream) goes first: the caller's own
    at its share, else at the global cap one of the caller holding the most. A caller is refused only when every
    session it could take is busy. Without it, one read-only token could open every session there is and leave
    the other principals `503` for the sessions' 30-minute idle lifetime."""

    def __init__(self, total: int, per_caller: int) -> None:
        self.total = total
        self.per_caller = per_caller
        self.open: dict[str, _Session] = {}  # by session id, oldest first
        self.opening: collections.Counter = collections.Counter()  # openings in flight, per owner
        self.lock = anyio.Lock()

    def _prune(self, now: float) -> None:
        for sid in [sid for sid, s in self.open.items() if not s.busy and now - s.last_used > SESSION_IDLE_S]:
            del self.open[sid]  # the SDK ended it meanwhile

    def _oldest_idle(self, owner: str | None) -> str | None:
        idle = [(s.last_used, sid) for sid, s in self.open.items() if not s.busy and (owner is None or s.owner == owner)]
        return min(idle)[1] if idle else None

    def _victim(self, owner: str) -> tuple[str | None, str | None]:
        """The session to close so that `owner` may open one: (its id or None, why none can be when None)."""
        held = sum(s.owner == owner for s in self.open.values()) + self.opening[owner]
        if held >= self.per_caller:
            victim = self._oldest_idle(owner)
            if victim is None:
                return None, f"this caller has {held} sessions open and in use (at most {self.per_caller} each)"
            return victim, None
        if len(self.open) + sum(self.opening.values()) >= self.total:
            holders = collections.Counter(s.owner for s in self.open.values())
            for other, _ in holders.most_common():
                victim = self._oldest_idle(other)
                if victim is not None:
                    return victim, None
            return None, f"all {self.total} sessions are open and in use"
        return None, None


def _owner(scope: Scope) -> str:
    """Whose a request is, for the session shares: its token's principal, or the process's caller."""
    row = scope.get(TOKEN_ROW)
    return f"principal:{row.principal}" if row is not None else "local"


class TokenGate:
    """ASGI middleware: authenticates each HTTP request by its bearer token before anything else runs, and holds
    every request to the limits that keep one caller from taking the server from the others (see the
    constants above): one Authorization and one Origin header, an exact Origin on loopback, a small opening
    request, one large body parsed at a time."""

    def __init__(self, app: ASGIApp, repository: Repository, required: bool, origins: frozenset[str] | None,
                 shares: SessionShares | None = None) -> None:
        self.app = app
        self.shares = shares or SessionShares(MAX_SESSIONS, max(1, MAX_SESSIONS // SESSION_SHARE))
        self.repository = repository
        self.required = required
        self.origins = origins  # the hosts an Origin header may name, on loopback; None: any
        self.large = anyio.CapacityLimiter(LARGE_AT_ONCE)
        # Each session's requests not answered yet, in arrival order (a caller reads its own writes, see
        # mcp_server.Turn); a session's entry lives while it has one.
        self.sessions: dict[tuple, Arrivals] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        if scope.get("path", "").rstrip("/") != PATH:
            # Nothing else is served: OAuth/OIDC discovery (/.well-known/...) and any other path are unknown, so a
            # client probing for authorization metadata learns there is none (404), not that it lacks a token (401).
            await _plain(send, 404, f"not found: this server serves MCP at {PATH} only")
            return
        named = _headers(scope).get(SESSION_HEADER.encode(), [None])[0]
        record = self.shares.open.get(named) if named is not None else None
        if record is not None:  # in use while this request (or stream) lasts
            record.busy += 1
            scope[SESSION_STATE] = record.state
        try:
            await self._ordered(scope, receive, send, named if scope["method"] == "POST" else None)
        finally:
            if record is not None:
                record.busy -= 1
                record.last_used = time.monotonic()
                if scope["method"] == "DELETE":  # the client ended it
                    self.shares.open.pop(named, None)

    async def _ordered(self, scope: Scope, receive: Receive, send: Send, session: str | None) -> None:
        if session is None:  # no session (opening one, a stateless request, a stream): nothing to order against
            await self._gated(scope, receive, send)
            return
        # Keyed by the credential too: a request naming another caller's session id cannot hold that caller back.
        key = (_headers(scope).get(b"authorization", [None])[0], session)
        arrivals = self.sessions.setdefault(key, Arrivals())
        turn = arrivals.arrive()
        try:
            with taking(turn):  # the handler the SDK starts for this request takes its place in the order
                await self._gated(scope, receive, send)
        finally:
            turn.finish()
            if arrivals.idle and self.sessions.get(key) is arrivals:
                del self.sessions[key]

    async def _gated(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "POST":
            receive, send = _answered_as_on_stdio(receive, send)
        await self._checked(scope, receive, send)

    async def _checked(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        refused = _refusal(headers, self.origins)
        if refused is not None:
            await _plain(send, *refused)
            return
        header = headers.get(b"authorization", [None])[0]
        if header is None:
            if self.required:
                await _unauthorized(send, None, "a bearer token is required")
                return
        else:
            scheme, _, presented = header.partition(" ")
            row = None
            if scheme.lower() == "bearer":
                row = await anyio.to_thread.run_sync(verify, self.repository, presented.strip())
            if row is None:
                await _unauthorized(send, "invalid_token", "the bearer token is not valid")
                return
            # The SDK binds a session to the credential that opened it (its client_id): another token's request
            # for that session id is answered 404, as an unknown session.
            scope["user"] = AuthenticatedUser(AccessToken(token=row.id, client_id=row.id,
                                                          scopes=list(row.capabilities)))
            scope[TOKEN_ROW] = row
        if scope["method"] == "POST" and _opens_a_session(headers):
            body = await _read_at_most(receive, OPENING_BODY_BYTES)
            if body is None:
                await _plain(send, 413, f"a request opening a session may carry at most {OPENING_BODY_BYTES} bytes")
                return
            await self._open_session(scope, _replay(body, receive), send)
            return
        length = headers.get(b"content-length", [None])[0]
        if scope["method"] == "POST" and (length is None or not length.isdigit() or int(length) > LARGE_BODY_BYTES):
            async with self.large:
                await self.app(scope, receive, send)
            return
        await self.app(scope, receive, send)


    async def _open_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request that opens a session: room is made in the caller's share first (closing the oldest idle
        session that must go), or it is refused with 503 saying why; the session it opens is recorded."""
        shares, owner = self.shares, _owner(scope)
        async with shares.lock:
            now = time.monotonic()
            shares._prune(now)
            while True:
                victim, refusal = shares._victim(owner)
                if victim is None:
                    break
                await self._close_session(shares.open.pop(victim), victim)
            if refusal is not None:
                log.warning("refusing a new session for %s: %s", owner, refusal)
                await _respond(send, 503, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32603, "message": f"Too many open sessions: {refusal}"}})
                return
            shares.opening[owner] += 1
        opened: list[str] = []

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 200:
                found = [v.decode("latin-1") for k, v in message.get("headers", []) if k.lower() == SESSION_HEADER.encode()]
                opened.extend(found[:1])
            await send(message)

        try:
            await self.app(scope, receive, noting)
        finally:
            shares.opening[owner] -= 1
            if shares.opening[owner] <= 0:
                del shares.opening[owner]
            if opened:
                shares.open[opened[0]] = _Session(owner, {k: v for k, v in scope.items() if k != "state"},
                                                  last_used=time.monotonic())

    async def _close_session(self, session: _Session, session_id: str) -> None:
        """End a session through the SDK's own DELETE, as its owner would (the SDK checks the credential)."""
        log.info("closing the idle session %s of %s to make room", session_id[:12], session.owner)
        headers = [(k, v) for k, v in session.scope["headers"]
                   if k not in (b"content-length", b"content-type", SESSION_HEADER.encode(), b"mcp-protocol-version")]
        scope = {**session.scope, "method": "DELETE",
                 "headers": [*headers, (SESSION_HEADER.encode(), session_id.encode()),
                             (b"mcp-protocol-version", HANDSHAKE_PROTOCOL_VERSIONS[-1].encode())]}
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await anyio.sleep_forever()

        async def discard(message: Message) -> None:
            pass

        try:
            with anyio.fail_after(5):
                await self.app(scope, receive, discard)
        except Exception:  # noqa: BLE001 - the session is forgotten here whatever the SDK made of it
            log.warning("could not close session %s", session_id[:12], exc_info=True)


def _answered_as_on_stdio(receive: Receive, send: Send) -> tuple[Receive, Send]:
    """The SDK's HTTP transport parses a body with a stricter parser than the stdio loop: well-formed JSON that
    nests deeper than it descends or holds an unpaired surrogate escape gets `-32700 Parse error` with id
    null there, and the client waits on its id for ever. Such a response is replaced by the stdio loop's
    answer to the same text (`read_message`: -32600 on the request's own id, saying why). The body is kept
    only while its request is served (it is at most MAX_BODY_BYTES, and the SDK holds it too)."""
    chunks: list[bytes] = []
    held: list[Message] = []

    async def recording() -> Message:
        message = await receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
        return message

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message.get("status") == 400:
            held.append(message)  # an error: seen whole before it is sent
            return
        if held and message["type"] == "http.response.body":
            start = held.pop()
            replaced = _stdio_answer(b"".join(chunks), message.get("body", b"")) if not message.get("more_body") \
                else None
            if replaced is not None:
                headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(replaced)).encode())]})
                await send({"type": "http.response.body", "body": replaced})
                return
            await send(start)
        await send(message)

    return recording, sending


def _stdio_answer(request: bytes, response: bytes) -> bytes | None:
    """The stdio loop's error reply to `request`, when the SDK answered it with a parse error but stdio reads
    it as well-formed JSON; None otherwise (the SDK's answer stands)."""
    try:
        sent = json.loads(response)
    except ValueError:
        return None
    if not isinstance(sent, dict) or not isinstance(sent.get("error"), dict) or sent["error"].get("code") != PARSE_ERROR:
        return None
    answer = read_message(decode_line(request))
    if not isinstance(answer, tuple) or answer[0].message.error.code == PARSE_ERROR:
        return None
    return answer[0].message.model_dump_json(by_alias=True, exclude_none=True).encode()


def _headers(scope: Scope) -> dict[bytes, list[str]]:
    found: dict[bytes, list[str]] = {}
    for key, value in scope["headers"]:
        found.setdefault(key, []).append(value.decode("latin-1"))
    return found


def _refusal(headers: dict[bytes, list[str]], origins: frozenset[str] | None) -> tuple[int, str] | None:
    """Why a request is refused before its credentials are looked at: (status, reason), or None."""
    for name in (b"authorization", b"origin", SESSION_HEADER.encode(), b"content-length"):
        if len(headers.get(name, ())) > 1:  # which one counts is where a proxy and this server could disagree
            return 400, f"more than one {name.decode()} header"
    origin = headers.get(b"origin", [None])[0]
    if origin is not None and origins is not None and not _local_origin(origin, origins):
        return 403, "the Origin header does not name this machine"
    return None


def _local_origin(origin: str, hosts: frozenset[str]) -> bool:
    """Whether an Origin is exactly http://<one of hosts>[:<port>]: no user, no path, digits after a colon."""
    found = ORIGIN.fullmatch(origin)
    return found is not None and found.group(1).lower() in hosts


def _opens_a_session(headers: dict[bytes, list[str]]) -> bool:
    """A handshake-era request with no session: the one that opens a session and whose content it keeps."""
    if SESSION_HEADER.encode() in headers:
        return False
    version = headers.get(b"mcp-protocol-version", [None])[0]
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


async def _read_at_most(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it is longer than `limit` (the rest is not read)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client went away: the app sees an empty body, then the disconnect
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` in one message, then whatever `receive` gives (a disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _plain(send: Send, status: int, reason: str) -> None:
    await _respond(send, status, {"error": reason})


async def _respond(send: Send, status: int, content: dict, headers: tuple = ()) -> None:
    """A whole JSON response, sent by the gate itself (the request goes no further)."""
    body = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send, error: str | None, description: str) -> None:
    """401 with the RFC 6750 challenge: no error code when the request had no credentials at all."""
    challenge = f'Bearer realm="{REALM}"' + (f', error="{error}", error_description="{description}"' if error else "")
    await _respond(send, 401, {"error": error or "unauthorized", "error_description": description},
                   ((b"www-authenticate", challenge.encode()),))


def identify(base: CallerContext):
    """The caller of a request's context: its token's (or `base`, the process's, without one), in the session
    of its connection."""

    def caller(ctx) -> CallerContext | None:
        request = ctx.request
        if request is None:
            return None
        row: TokenRow | None = request.scope.get(TOKEN_ROW)
        # A handshake-era request reaches here only with a session id the SDK issued to this credential; a
        # 2026-07-28 request has no session, and whatever such a header says is not one.
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        connection = None if modern else request.headers.get(SESSION_HEADER)
        if row is None:
            return dataclasses.replace(base, session_id=f"http-{connection}") if connection else None
        return caller_of(row, f"http-{connection}" if connection else f"token-{row.id}")

    return caller


def _local_names(host: str) -> set[str]:
    return {"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host}


def _security(host: str) -> TransportSecuritySettings | None:
    """On loopback, the Host and Origin headers must name this machine (no DNS rebinding from a web page);
    beyond it every request carries a token, and the names clients use are the operator's to choose."""
    if not is_loopback(host):
        return None
    named = _local_names(host)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[f"{h}:*" for h in sorted(named)],
                                     allowed_origins=[f"http://{h}:*" for h in sorted(named)])


def session_shares(environ=None) -> SessionShares:
    """The session caps from the operator's environment (SESSIONS_ENV, SESSIONS_PER_CALLER_ENV): a fair share per
    caller never above the whole."""
    env = os.environ if environ is None else environ
    total = positive(env, SESSIONS_ENV, int, MAX_SESSIONS)
    per_caller = positive(env, SESSIONS_PER_CALLER_ENV, int, max(1, total // SESSION_SHARE))
    return SessionShares(total, min(per_caller, total))


def build_app(memory: Memory, workers: WorkerPool | None, host: str, required: bool) -> ASGIApp:
    shares = session_shares()
    server = build_server(memory, workers, identify(memory.context))
    app = server.streamable_http_app(streamable_http_path=PATH, host=host, transport_security=_security(host),
                                     max_request_body_size=MAX_BODY_BYTES, max_sessions=shares.total)
    # Its own connection: checking a token never waits behind a call on the server's Memory.
    tokens = Repository(open_store(memory.path, clock=memory.clock))
    origins = frozenset(h.lower() for h in _local_names(host)) if is_loopback(host) else None
    return TokenGate(app, tokens, required, origins, shares)


def serve_http(memory: Memory, sock: socket.socket, required: bool, level: str | None = None,
               workers: WorkerPool | None = None) -> None:
    """Serve MCP over Streamable HTTP on `sock` until SIGINT or SIGTERM. Logs go to stderr; the first line
    names the URL (tests and scripts read the port from it)."""
    configure_logging(level)
    host, port = sock.getsockname()[:2]
    app = build_app(memory, workers, host, required)
    shown = f"[{host}]" if ":" in host else host
    # Printed, not logged: whatever the log level, whoever started the server learns where it listens.
    print(f"datalog-memory {__version__} serving {displayed(absolute(memory.path))} over MCP Streamable HTTP at "
          f"http://{shown}:{port}{PATH} (" + ("a bearer token is required" if required else
                                             f"no token: local callers act as {memory.context.principal}") + ")",
          file=sys.stderr, flush=True)
    announce_storage(memory)
    if workers is not None and not workers.wait_ready():
        log.error("the evaluation process did not start; evaluating calls will fail (see the log above)")
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", http=GuardedH11Protocol,
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_S, log_level=logging.WARNING)
    uvicorn.Server(config).run(sockets=[sock])
