"""The explorer's web application: Starlette, served by uvicorn on 127.0.0.1 (both come with the mcp package).

Security model: bound to the loopback address only; a random token made at start is required on every
request (in the URL the command prints, then in a cookie the first tokened request sets); a request
without it gets a bare 403. Only GET and HEAD exist: any other method is 405 before anything is read.
The Host header must name the loopback address (no DNS rebinding). Pages carry no script, and a
Content-Security-Policy forbids any. The Memory behind it is opened with the configured principal's
context narrowed to memory_read, so even a bug here could not call a tool that writes."""

from __future__ import annotations

import dataclasses
import secrets
import threading
from http.cookies import SimpleCookie
from importlib import resources
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..errors import DatalogMemoryError
from ..sources.context import READ, CallerContext
from .html import Markup, document, h
from .pages import NAV, NAV_PARENT, PAGES, Page, View, failure, memory_page

COOKIE = "datalog_memory_explorer"
HOST = "127.0.0.1"
METHODS = (b"GET", b"HEAD")
HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                                 b"frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
]


def read_only(context: CallerContext) -> CallerContext:
    """The principal's own identity and reach, with no capability but reading (if it had that one)."""
    return dataclasses.replace(context, capabilities=context.capabilities & {READ})


class Guard:
    """ASGI middleware: method, host and token checks before any page runs; security headers on every answer."""

    def __init__(self, app, token: str, port_hosts: set[str], cookie: str = COOKIE) -> None:
        self.app = app
        self.token = token
        self.hosts = port_hosts
        self.cookie = cookie  # browsers share cookies across ports: one name per port keeps explorers apart

    def _authorized(self, scope) -> tuple[bool, bool]:
        """(allowed, came with the URL token)"""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [""])[-1]
        if given and secrets.compare_digest(given.encode(), self.token.encode()):
            return True, True
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                cookie = SimpleCookie()
                try:
                    cookie.load(value.decode("latin-1"))
                except Exception:  # a malformed cookie header is no credential
                    continue
                if self.cookie in cookie and secrets.compare_digest(cookie[self.cookie].value.encode(),
                                                                    self.token.encode()):
                    return True, False
        return False, False

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")

        async def secured(message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *HEADERS, *extra]
            await send(message)

        extra: list[tuple[bytes, bytes]] = []
        if scope["method"].encode() not in METHODS:
            await PlainTextResponse("Method Not Allowed", 405, headers={"Allow": "GET, HEAD"})(scope, receive, secured)
            return
        allowed, by_url = self._authorized(scope)
        if host not in self.hosts or not allowed:
            await PlainTextResponse("Forbidden", 403)(scope, receive, secured)
            return
        if by_url:
            extra.append((b"set-cookie", f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()))
        await self.app(scope, receive, secured)


def _nav(view: View, current: str) -> Markup:
    ctx = view.context
    who = f"{ctx.principal}" + (f" · project {ctx.project_remote}" if ctx.project_remote else " · no project") + \
        f" · session {ctx.session_id}"
    return h("header", None,
             h("nav", {"class": "top"}, h("span", {"class": "brand"}, "datalog-memory"),
               [h("a", {"href": path, "class": "current" if path == current else None}, label) for path, label in NAV]),
             h("p", {"class": "who"}, "Read-only view as ", h("strong", None, who)))


def _failure(exc: DatalogMemoryError) -> Page:
    shown, status = failure(exc)
    return Page("Cannot show this", shown, status)


def build_app(memory, token: str, port: int | None = None) -> Starlette:
    """The application over `memory` (whose context should already be read_only(...))."""
    view = View(memory)
    lock = threading.Lock()  # one page at a time: each page reads one consistent store
    stylesheet = resources.files(__package__).joinpath("explorer.css").read_bytes()

    def render(path: str, build) -> Response:
        with lock:
            try:
                page = build()
            except DatalogMemoryError as exc:
                page = _failure(exc)
        return HTMLResponse(document(page.title, _nav(view, NAV_PARENT.get(path, path)), page.body), page.status)

    def endpoint(path: str):
        def run(request: Request) -> Response:
            return render(path, lambda: PAGES[path](view, request.query_params))
        return run

    def memory_endpoint(request: Request) -> Response:
        return render("/memories", lambda: memory_page(view, request.query_params, request.path_params["ident"]))

    def css(request: Request) -> Response:
        return Response(stylesheet, media_type="text/css")

    routes = [Route(path, endpoint(path), methods=["GET"]) for path in PAGES]
    routes += [Route("/memories/{ident}", memory_endpoint, methods=["GET"]),
               Route("/static/explorer.css", css, methods=["GET"])]
    app = Starlette(routes=routes)
    hosts = {HOST, "localhost"} if port is None else {f"{HOST}:{port}", f"localhost:{port}"}
    return Guard(app, token, hosts, COOKIE if port is None else f"{COOKIE}_{port}")  # type: ignore[return-value]


def new_token() -> str:
    return secrets.token_urlsafe(32)


def serve(memory, port: int = 0, announce=print) -> None:
    """Serve until interrupted. Port 0 picks a free port; the URL with the token is announced once bound."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)  # before the link is printed: a request made at once waits in the backlog, not refused
    bound = sock.getsockname()[1]
    token = new_token()
    app = build_app(memory, token, bound)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="off")
    server = uvicorn.Server(config)
    announce(f"http://{HOST}:{bound}/?token={token}")
    server.run(sockets=[sock])


__all__ = ["build_app", "new_token", "read_only", "serve"]
