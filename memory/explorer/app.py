"""The explorer's web application: Starlette, served by uvicorn on 127.0.0.1 (both come with the mcp package).

Security model: bound to the loopback address only; a random token made at start is the first segment of
every path (http://127.0.0.1:PORT/<token>/..., the link the command prints; every page's links carry it),
and a request without it gets a bare 403. No cookie: a browser would send it to every other server on the
host's other ports. Only GET and HEAD exist: any other method is 405, after the token check.
The Host header must name the loopback address (no DNS rebinding). Pages carry no script, and a
Content-Security-Policy forbids any. The Memory behind it is opened with the configured principal's
context narrowed to memory_read, so even a bug here could not call a tool that writes."""

from __future__ import annotations

import dataclasses
import secrets
import threading
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..errors import DatalogMemoryError
from ..access.context import READ, CallerContext
from .html import PREFIX, Markup, document, h, url
from .pages import NAV, NAV_PARENT, PAGES, Page, View, failure, memory_page

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
    """ASGI middleware: host and token checks before any page runs, then the method; security headers on
    every answer. The token is the path's first segment; the rest of the path is what the routes see."""

    def __init__(self, app, token: str, port_hosts: set[str]) -> None:
        self.app = app
        self.token = token
        self.hosts = port_hosts

    def _rest(self, path: str) -> str | None:
        """The path after a correct /<token> prefix ("/" for the bare prefix); None without it."""
        _, _, tail = path.partition("/")
        given, slash, rest = tail.partition("/")
        if not secrets.compare_digest(given.encode("utf-8", "surrogatepass"), self.token.encode()):
            return None
        return "/" + rest if slash else "/"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")

        async def secured(message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        rest = self._rest(scope["path"])
        if host not in self.hosts or rest is None:
            await PlainTextResponse("Forbidden", 403)(scope, receive, secured)
            return
        if scope["method"].encode() not in METHODS:
            await PlainTextResponse("Method Not Allowed", 405, headers={"Allow": "GET, HEAD"})(scope, receive, secured)
            return
        prefix = f"/{self.token}"
        scope = {**scope, "path": rest, "raw_path": rest.encode("utf-8", "surrogatepass"), "root_path": ""}
        reset = PREFIX.set(prefix)
        try:
            await self.app(scope, receive, secured)
        finally:
            PREFIX.reset(reset)


def _nav(view: View, current: str) -> Markup:
    ctx = view.context
    who = f"{ctx.principal}" + (f" · project {ctx.project_remote}" if ctx.project_remote else " · no project") + \
        f" · session {ctx.session_id}"
    return h("header", None,
             h("nav", {"class": "top"}, h("span", {"class": "brand"}, "datalog-memory"),
               [h("a", {"href": url(path), "class": "current" if path == current else None}, label)
                for path, label in NAV]),
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
    return Guard(app, token, hosts)  # type: ignore[return-value]


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
    announce(f"http://{HOST}:{bound}/{token}/")
    server.run(sockets=[sock])


__all__ = ["build_app", "new_token", "read_only", "serve"]
