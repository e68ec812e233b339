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
has its own session. Once a token is required, it is required of every request (memory/sources/tokens.py
`token_required` decides, at start)."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import sys

import anyio.to_thread
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from . import __version__
from .api import Memory
from .mcp_server import build_server, configure_logging
from .sources.context import CallerContext
from .sources.tokens import caller_of, is_loopback, verify
from .store import Store, absolute
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
SHUTDOWN_GRACE_S = 3  # at a signal, how long open requests and streams get before the server stops


class TokenGate:
    """ASGI middleware: authenticates each HTTP request by its bearer token before anything else runs."""

    def __init__(self, app: ASGIApp, repository: Repository, required: bool) -> None:
        self.app = app
        self.repository = repository
        self.required = required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None)
        if header is None:
            if self.required:
                await _unauthorized(send, None, "a bearer token is required")
                return
            await self.app(scope, receive, send)
            return
        scheme, _, presented = header.partition(" ")
        row = None
        if scheme.lower() == "bearer":
            row = await anyio.to_thread.run_sync(verify, self.repository, presented.strip())
        if row is None:
            await _unauthorized(send, "invalid_token", "the bearer token is not valid")
            return
        # The SDK binds a session to the credential that opened it (its client_id): another token's request for
        # that session id is answered 404, as an unknown session.
        scope["user"] = AuthenticatedUser(AccessToken(token=row.id, client_id=row.id, scopes=list(row.capabilities)))
        scope[TOKEN_ROW] = row
        await self.app(scope, receive, send)


async def _unauthorized(send: Send, error: str | None, description: str) -> None:
    """401 with the RFC 6750 challenge: no error code when the request had no credentials at all."""
    body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
    challenge = f'Bearer realm="{REALM}"' + (f', error="{error}", error_description="{description}"' if error else "")
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge.encode())]})
    await send({"type": "http.response.body", "body": body})


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


def _security(host: str) -> TransportSecuritySettings | None:
    """On loopback, the Host and Origin headers must name this machine (no DNS rebinding from a web page);
    beyond it every request carries a token, and the names clients use are the operator's to choose."""
    if not is_loopback(host):
        return None
    named = {"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host}
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[f"{h}:*" for h in sorted(named)],
                                     allowed_origins=[f"http://{h}:*" for h in sorted(named)])


def build_app(memory: Memory, workers: WorkerPool | None, host: str, required: bool) -> ASGIApp:
    server = build_server(memory, workers, identify(memory.context))
    app = server.streamable_http_app(streamable_http_path=PATH, host=host, transport_security=_security(host),
                                     max_request_body_size=MAX_BODY_BYTES)
    # Its own connection: checking a token never waits behind a call on the server's Memory.
    tokens = Repository(Store(memory.path, clock=memory.clock))
    return TokenGate(app, tokens, required)


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
    if workers is not None and not workers.wait_ready():
        log.error("the evaluation process did not start; evaluating calls will fail (see the log above)")
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_S, log_level=logging.WARNING)
    uvicorn.Server(config).run(sockets=[sock])
