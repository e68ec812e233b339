"""The MCP stdio adapter over the tool registry (both protocol eras, via the mcp v2 SDK).

The SDK's dual-era loop serves the 2025-11-25 handshake (initialize, ping, …) and
the 2026-07-28 stateless envelope (server/discover, per-request _meta, -32022).
The Streamable HTTP transport (http_server.py) serves the same `build_server`, naming each request's caller.
This module only maps the registry onto it: tool definitions, results with text
and structured content, and every tool failure (argument schema included) as an
isError result whose text starts with the stable error name. Error results carry
no structuredContent (official clients validate any structuredContent against the
tool's outputSchema, which describes success); their code and details go in
`_meta["datalog-memory/error"]`. Only an unknown tool or a malformed request is a
JSON-RPC error (-32602).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
import signal
import stat
import sys
import threading
import time
import typing
import warnings

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp.types as types
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.shared.dispatcher import coerce_request_id
from mcp_types.jsonrpc import (INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCNotification,
                               JSONRPCRequest, JSONRPCResponse)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from . import __version__
from .api import CallerMemories, Memory
from . import guide, resources
from .datalog.budget import CURRENT_CANCELLATION, Cancellation, cancellable
from .early_initialize import EarlyStart, decode_line, undecodable
from .early_initialize import keep as keep_answer
from .errors import DatalogMemoryError, InvalidArguments, NotFound
from .log_level import log_level
from .access.context import CallerContext
from .store import absolute, shown
from .tools import REGISTRY, ToolResult, UnknownTool, error_result, get_tool
from .tools.toolsets import ENVIRONMENT, from_environment
from .workers import WorkerPool, run_call
from .workers.calls import INTERNAL, OK

log = logging.getLogger("datalog-memory")

INSTRUCTIONS = guide.INSTRUCTIONS  # a routing guide: memory/guide.py
INVALID_PARAMS = -32602
ERROR_META = "datalog-memory/error"  # where an error result's code and details go
LIST_TTL_MS = 3_600_000
PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
# The tool list changes when a model enables a toolset (enable_toolsets); nothing else we list changes.
NOTIFICATIONS = NotificationOptions(tools_changed=True)
ENABLED_TOOLS = "datalog-memory/enabled-tools"  # a connection's enabled tools, in its state


def mcp_tools(names: typing.Collection[str] | None = None) -> list[types.Tool]:
    """The MCP definitions of the registry's tools (of `names` only, when given), in registry order. Output
    schemas are listed with every tool (`--toolsets all`, the references' whole contract, for programs); a
    smaller listing is sized for a model, which reads the text, and leaves them out (structuredContent is
    the same either way)."""
    complete = names is None or set(REGISTRY) <= set(names)
    return [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema,
            output_schema=t.output_schema if complete else None,
            annotations=types.ToolAnnotations(**{
                "title": t.title,
                "read_only_hint": t.annotations.read_only,
                "destructive_hint": t.annotations.destructive,
                "idempotent_hint": t.annotations.idempotent,
                "open_world_hint": t.annotations.open_world,
            }),
        )
        for t in REGISTRY.values() if names is None or t.name in names
    ]


def _result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=result.text)],
                                structured_content=result.structured)


def _error(failure: ToolResult) -> types.CallToolResult:
    """A tool failure: the text the model reads, the typed error under `_meta`, no structuredContent."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=failure.text)], is_error=True,
                                _meta={ERROR_META: failure.structured["error"]})


LOG_THRESHOLD = "datalog-memory/log-threshold"
# Where the HTTP gate leaves a handshake-era session's own state in the request's ASGI scope (http_server.py).
SESSION_STATE = "datalog-memory.session-state"


@contextlib.asynccontextmanager
async def _per_connection(_server):
    """The server's lifespan, which the SDK enters once per `Server.run` (one stdio process, one in-memory
    client): its value (`ctx.lifespan_context`) is that connection's own state."""
    yield {}


def _own_state(ctx) -> dict | None:
    """The state of the connection a request belongs to (its enabled tools, its log threshold), through the SDK's
    public request context only: over HTTP, the gate's record of the request's session (none for a stateless
    2026-07-28 request); otherwise the lifespan of the `Server.run` serving it."""
    if ctx.request is not None:
        state = ctx.request.scope.get(SESSION_STATE)
    else:
        state = ctx.lifespan_context
    return state if isinstance(state, dict) else None


async def _in_thread(function, *args):
    """`function(*args)` in a worker thread, under the request's cancellation. The stdio loop gives each request
    one (and cancels it on notifications/cancelled); on HTTP the SDK cancels the handler when the client cancels
    or goes away, and then the evaluation is told to stop at its next budget check rather than run to its
    budget with nobody waiting."""
    if CURRENT_CANCELLATION.get() is not None:
        return await anyio.to_thread.run_sync(function, *args)
    with cancellable(Cancellation()) as token:
        try:
            return await anyio.to_thread.run_sync(function, *args, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            token.cancel("the client cancelled the request or went away")
            raise


LOG_LEVELS: tuple[str, ...] = typing.get_args(types.LoggingLevel)  # RFC 5424 order, least severe first
RESOURCE_NOT_FOUND = -32002


Identify = typing.Callable[[typing.Any], "CallerContext | None"]
# A request's cancellation and place in its connection's order, by its JSON-RPC id (stdio's `Requests`).
Tracked = typing.Callable[[typing.Any], "tuple[Cancellation, Turn] | None"]


class Turn:
    """One request's place in the arrival order of its connection (stdio) or session (HTTP).

    A caller reads its own writes: a request that writes starts once every request that arrived before it
    has ended; one that only reads starts once every earlier request that writes has ended (earlier reads
    may still run: independent reads run side by side). Whether a request writes is known when it is
    classified (at arrival over stdio; when its handler starts over HTTP, whose gate sees no body): until
    then the requests after it treat it as a write. A turn that ends unclassified (a ping, a request the SDK
    answered itself, one cancelled before it started) holds nobody back."""

    __slots__ = ("before", "writes", "classified", "done", "entered")

    def __init__(self, before: list["Turn"]) -> None:
        self.before = before
        self.writes: bool | None = None
        self.classified = anyio.Event()
        self.done = anyio.Event()
        self.entered = False

    def classify(self, writes: bool) -> None:
        if self.writes is None:
            self.writes = writes
            self.classified.set()

    async def wait(self) -> None:
        """Until the requests this one must follow have ended (classify it first)."""
        self.entered = True
        for earlier in self.before:
            if not self.writes:
                await earlier.classified.wait()
                if not earlier.writes:
                    continue
            await earlier.done.wait()
        self.before = []

    def finish(self) -> None:
        """It has ended (or will never run): the requests after it may go. Idempotent."""
        self.classify(False)
        self.done.set()
        self.before = []


class Arrivals:
    """The requests of one connection or session that have not ended, in arrival order."""

    def __init__(self) -> None:
        self.live: list[Turn] = []

    def arrive(self) -> Turn:
        self.live = [t for t in self.live if not t.done.is_set()]
        turn = Turn(list(self.live))
        self.live.append(turn)
        return turn

    @property
    def idle(self) -> bool:
        return all(t.done.is_set() for t in self.live)


CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("datalog_memory_turn", default=None)


@contextlib.contextmanager
def taking(turn: Turn | None):
    """Handlers started from within this block (in a copy of this context) take `turn`."""
    reset = CURRENT_TURN.set(turn)
    try:
        yield turn
    finally:
        CURRENT_TURN.reset(reset)


def writes(method: str, params) -> bool:
    """Whether a request may change what a later request of its caller reads: a tool call unless the tool is
    read-only (an unknown tool changes nothing); resources and everything else only read."""
    if method != "tools/call":
        return False
    name = params.get("name") if isinstance(params, dict) else getattr(params, "name", None)
    try:
        return not get_tool(name).annotations.read_only if isinstance(name, str) else False
    except UnknownTool:
        return False


@contextlib.asynccontextmanager
async def in_turn(writing: bool):
    """The body runs in the current request's turn (none outside a connection's order: nothing to wait for)."""
    turn = CURRENT_TURN.get()
    if turn is None:
        yield
        return
    try:
        turn.classify(writing)
        await turn.wait()
        yield
    finally:
        turn.finish()


def build_server(memory: Memory, workers: WorkerPool | None = None, identify: Identify | None = None,
                 toolsets: typing.Collection[str] | None = None, tracked: Tracked | None = None) -> Server:
    """The MCP server over `memory`. With `workers`, the calls of tools that evaluate (the registry's
    `evaluates`) run in its worker processes; without, every call runs in this process. `identify` names
    the caller of a request from its context (the HTTP transport: the request's token and connection);
    None, or it returning None, means the caller `memory` was opened with (stdio: the host's environment).
    `toolsets`: the tool names every connection starts with (default: $DATALOG_MEMORY_TOOLSETS, else the
    default set); a connection adds more with enable_toolsets, and any other tool is unknown to it. `tracked`
    gives a request's cancellation and turn by its id (the stdio loop notes both as it reads the request); over
    HTTP they come with the request's context instead (the gate sets them around the SDK's handling)."""
    starting = frozenset(toolsets) if toolsets is not None else from_environment()
    listings: dict[frozenset[str], list[types.Tool]] = {}
    memories = CallerMemories(memory)
    # The 2025-11-25 era's logging/setLevel threshold, per connection (stdio has one, HTTP one per session).
    # Before the client sets one, only warnings and worse are sent. The 2026-07-28 era opts in per request.
    shared: dict = {}  # a stateless request's (2026-07-28 over HTTP), which has no connection of its own

    def thresholds(ctx) -> dict:
        state = _own_state(ctx)
        return state if state is not None else shared

    @contextlib.contextmanager
    def scoped(ctx):
        """The handler's body runs under its request's cancellation and in its turn, when the loop noted them."""
        found = tracked(ctx.request_id) if tracked is not None and ctx.request_id is not None else None
        if found is None:
            yield
            return
        token, turn = found
        with cancellable(token), taking(turn):
            yield

    def caller(ctx) -> CallerContext | None:
        return identify(ctx) if identify is not None else None

    def enabled(ctx) -> frozenset[str]:
        state = _own_state(ctx)
        return state.get(ENABLED_TOOLS, starting) if state is not None else starting

    async def list_tools(ctx, params) -> types.ListToolsResult:
        names = enabled(ctx)
        if names not in listings:
            listings[names] = mcp_tools(names)
        return types.ListToolsResult(tools=listings[names])

    async def enable(ctx, tools: list[str]) -> None:
        """Add a toolset's tools to this connection, and tell a client that follows list changes."""
        state = _own_state(ctx)
        names = enabled(ctx) | frozenset(tools)
        if state is None or names == enabled(ctx):
            return
        state[ENABLED_TOOLS] = names
        try:
            await ctx.session.send_tool_list_changed()
        except Exception:  # a client that cannot take the notification still calls the tools by name
            log.debug("could not send notifications/tools/list_changed", exc_info=True)

    async def notify(ctx, level: str, data: dict) -> None:
        """A notifications/message to the client, when its level is wanted; never fails the call."""
        # 2026-07-28: the request's own opt-in decides (the SDK filters); before, logging/setLevel's threshold.
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if not modern and LOG_LEVELS.index(level) < LOG_LEVELS.index(thresholds(ctx).get(LOG_THRESHOLD, "warning")):
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the SDK marks logging deprecated at 2026-07-28 but still serves it
                await ctx.session.send_log_message(level, data, logger="datalog-memory",
                                                   related_request_id=ctx.request_id)
        except Exception:  # a client that went away must not turn a result into a failure
            log.debug("could not send a log message", exc_info=True)

    async def call(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        with scoped(ctx):
            return await calling(ctx, params)

    async def calling(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        started = time.perf_counter()
        try:
            spec = get_tool(params.name)
        except UnknownTool as exc:
            raise MCPError(INVALID_PARAMS, exc.message, {"code": exc.code, "tool": params.name}) from None
        if spec.name == "enable_toolsets" and (params.arguments or {}).get("enable") and _own_state(ctx) is None:
            return _error(error_result(InvalidArguments(
                "this request belongs to no lasting connection (a stateless HTTP request), so nothing can be "
                f"enabled for it: start the server with {ENVIRONMENT}=default,<toolsets> or serve --toolsets")))
        context = caller(ctx)
        async with in_turn(not spec.annotations.read_only):  # after the caller's earlier writes (and reads)
            # In the turn: a call sent right after enable_toolsets sees what it enabled (enabling is a write).
            if spec.name not in enabled(ctx):
                raise MCPError(INVALID_PARAMS, f"Unknown tool: {spec.name} (it is in the {spec.group} toolset: "
                               f'call enable_toolsets {{"enable": ["{spec.group}"]}} first)',
                               {"code": UnknownTool.code, "tool": spec.name, "toolset": spec.group})
            if workers is not None and spec.evaluates:
                # In a worker process: an evaluation can neither hold this process nor leave its memory here.
                outcome = await _in_thread(workers.call, params.name, params.arguments, None, context)
            else:
                # A thread keeps the protocol loop answering meanwhile.
                outcome = await _in_thread(run_call, memories.of(context), params.name, params.arguments)
            if outcome.kind == OK and spec.name == "enable_toolsets":
                await enable(ctx, outcome.result.structured.get("tools", []))
        if outcome.kind != OK:
            level = "error" if outcome.kind == INTERNAL else "info"
            await notify(ctx, level, {"tool": params.name, "error": outcome.code, "message": outcome.result.text[:500]})
            return _error(outcome.result)
        await notify(ctx, "debug", {"tool": params.name, "ms": round((time.perf_counter() - started) * 1000, 3)})
        return _result(outcome.result)

    async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        thresholds(ctx)[LOG_THRESHOLD] = params.level
        return types.EmptyResult()

    async def list_resources(ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        try:
            with scoped(ctx):
                async with in_turn(False):
                    page, after = await anyio.to_thread.run_sync(resources.list_resources, memories.of(caller(ctx)),
                                                                 cursor)
        except DatalogMemoryError as exc:
            raise MCPError(INVALID_PARAMS, exc.message, exc.to_dict()) from None
        return types.ListResourcesResult(next_cursor=after, resources=[
            types.Resource(uri=r.uri, name=r.name, title=r.title, description=r.description, mime_type=r.mime_type)
            for r in page])

    async def list_templates(ctx, params) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template=t.uri_template, name=t.name, description=t.description,
                                   mime_type=t.mime_type) for t in resources.TEMPLATES])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            with scoped(ctx):
                async with in_turn(False):
                    text, mime = await anyio.to_thread.run_sync(resources.read_resource, memories.of(caller(ctx)),
                                                                uri)
        except (NotFound, InvalidArguments):  # one answer for unknown and invisible: no existence oracle
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri[:200]}", {"uri": uri[:200]}) from None
        except DatalogMemoryError as exc:
            raise MCPError(INVALID_PARAMS, exc.message, exc.to_dict()) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=p.name, title=p.title, description=p.description, arguments=[
                types.PromptArgument(name=a.name, description=a.description, required=a.required)
                for a in p.arguments]) for p in guide.PROMPTS])

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        found = guide.prompt(params.name)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name[:100]} (prompts/list names them)",
                           {"prompt": params.name[:100]})
        try:
            text = found.render(params.arguments)
        except KeyError as missing:
            raise MCPError(INVALID_PARAMS, f"Prompt {found.name} needs the argument(s) {missing.args[0]}",
                           {"prompt": found.name}) from None
        return types.GetPromptResult(description=found.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    async def discover(ctx, params) -> types.DiscoverResult:
        """Every protocol version we serve (both eras), and the same capabilities initialize reports."""
        return types.DiscoverResult(supported_versions=list(PROTOCOL_VERSIONS),
                                    capabilities=server.get_capabilities(NOTIFICATIONS),
                                    instructions=INSTRUCTIONS)

    # The tool list is the connection's own (its enabled toolsets) and changes when it enables more.
    hints = {"tools/list": CacheHint(ttl_ms=0, scope="private"),
             "server/discover": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
             # what a caller may browse changes with every write and depends on who asks
             "resources/list": CacheHint(ttl_ms=0, scope="private"),
             "resources/templates/list": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
             "prompts/list": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
             "resources/read": CacheHint(ttl_ms=0, scope="private")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # logging is deprecated at 2026-07-28, still part of 2025-11-25
        server = Server("datalog-memory", version=__version__, title="datalog-memory", instructions=INSTRUCTIONS,
                        cache_hints=hints, lifespan=_per_connection, on_list_tools=list_tools, on_call_tool=call,
                        on_list_resources=list_resources, on_list_resource_templates=list_templates,
                        on_list_prompts=list_prompts, on_get_prompt=get_prompt,
                        on_read_resource=read_resource, on_set_logging_level=set_level)
    server.add_request_handler("server/discover", types.RequestParams, discover)
    return server


def initialization_options(server: Server):
    """What initialize reports: the capabilities discover reports too (tools.listChanged: enable_toolsets
    changes a connection's tool list)."""
    return server.create_initialization_options(NOTIFICATIONS)


def _unparsable(exc: Exception) -> SessionMessage:
    """-32700 for text that is not JSON, -32600 for JSON that is not a JSON-RPC message."""
    not_json = isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors())
    code, message = (PARSE_ERROR, "Parse error") if not_json else (INVALID_REQUEST, "Invalid Request")
    detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message, data=detail)))


class _TooLong:
    """An integer in the input with more digits than Python converts (its text is not kept)."""

    def __repr__(self) -> str:
        return "an integer with too many digits"


def _integer(text: str):
    try:
        return int(text)
    except ValueError:
        return _TooLong()


class _TooDeep:
    """Well-formed JSON nested deeper than a parser here descends; `members` are its top-level scalars."""

    def __init__(self, members: dict) -> None:
        self.members = members


def _raw(line: str):
    """The line as plain JSON (numbers of any length tolerated), None when it is not JSON, or a `_TooDeep`
    with what its top level says when it nests deeper than the parser's recursion allows."""
    try:
        return json.loads(line, parse_int=_integer)
    except RecursionError:
        members = _shallow_members(line)
        return None if members is None else _TooDeep(members)
    except ValueError:
        return None


SHALLOW_SCAN_CHARS = 1 << 20  # how far a message too deep to parse is read for its id and method
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _shallow_members(text: str) -> dict | None:
    """The scalar members of a JSON object's top level (a request's id and method), read without descending
    into nested values (each string is decoded on its own): what a message too deep to parse still tells."""
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text.startswith("{", start):
        return None
    members: dict = {}
    depth, i, key, expecting_key = 1, start + 1, None, True
    end = min(len(text), start + SHALLOW_SCAN_CHARS)  # a bounded look: this runs on the protocol loop
    try:
        while i < end and depth and not ("id" in members and "method" in members):
            c = text[i]
            if c == '"':
                value, i = decoder.raw_decode(text, i)
                if depth == 1:
                    if expecting_key:
                        key, expecting_key = value, False
                    elif key is not None:
                        members.setdefault(key, value)
                        key = None
                continue
            if depth == 1 and key is not None and (found := _SCALAR.match(text, i)):
                literal = found.group()
                members.setdefault(key, _integer(literal) if literal.lstrip("-").isdigit() else json.loads(literal))
                key, i = None, found.end()
                continue
            if c in "{[":
                key = None if depth == 1 else key
                depth += 1
            elif c in "}]":
                depth -= 1
            elif c == "," and depth == 1:
                key, expecting_key = None, True
            i += 1
    except ValueError:
        return None
    return members if depth == 0 or i >= end or ("id" in members and "method" in members) else None


def _unreadable(exc: Exception) -> str:
    """Why the SDK's parser refused well-formed JSON, in words a client can act on."""
    text = str(exc)
    if "hex escape" in text or "surrogate" in text:
        return "a string holds an unpaired surrogate escape (\\ud800-\\udfff), which is not Unicode text"
    if "recursion limit" in text:
        return "the message is nested too deeply to be read"
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _jsonrpc_error(request_id, code: int, message: str, detail: str) -> SessionMessage:
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                       error=ErrorData(code=code, message=message, data=detail)))


def read_message(line: str) -> SessionMessage | tuple[SessionMessage]:
    """One line of input: a message for the server, or (an error reply to send back instead,).

    A request whose id is neither a string nor an integer (null, true, 1.5, an object, 1e400, ...)
    gets -32600 with id null: the SDK would read it as a notification, and the client would wait
    forever. A request the SDK cannot read otherwise is answered with its own id when it has a
    valid one (the client waits on that id), else with id null."""
    raw = _raw(line)
    bad = undecodable(line)
    if bad is not None:  # answered on the request's id when it has one: the client waits on it
        rid = raw.get("id") if isinstance(raw, dict) and "method" in raw else None
        return (_jsonrpc_error(rid if type(rid) in (str, int) else None, INVALID_REQUEST, "Invalid Request",
                               f"the message is not UTF-8 text (a byte that is not UTF-8 at character {bad}); "
                               "send it encoded as UTF-8"),)
    if isinstance(raw, _TooDeep):  # well-formed, but nested past what any parser here descends
        top = raw.members
        answerable = "method" in top and type(top.get("id")) in (str, int)
        return (_jsonrpc_error(top["id"] if answerable else None, INVALID_REQUEST, "Invalid Request",
                               "the message is nested too deeply to be read"),)
    is_request = isinstance(raw, dict) and "method" in raw and "id" in raw
    if is_request and not (type(raw["id"]) is str or type(raw["id"]) is int):
        shown = raw["id"] if isinstance(raw["id"], _TooLong) else json.dumps(raw["id"], default=repr)[:40]
        return (_jsonrpc_error(None, INVALID_REQUEST, "Invalid Request",
                       f"a request id must be a string or an integer, got {shown}"),)
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:  # noqa: BLE001 - whatever the SDK's parser refuses is answered, not fatal
        # A request with a usable id (a method missing or malformed, say) is answered on that id; a response
        # from the client carries an id too, but nobody waits on a reply to it.
        answerable = isinstance(raw, dict) and "id" in raw and type(raw["id"]) in (str, int) \
            and "result" not in raw and "error" not in raw
        if is_request or answerable:
            return (_jsonrpc_error(raw["id"], INVALID_REQUEST, "Invalid Request", _unreadable(exc)),)
        return (_unparsable(exc),)


# After a second signal, how long the calls in flight get to come back with their `cancelled` answer (a worker
# that does not stop is killed after 0.2 s) before the server stops regardless.
STOP_GRACE_S = 1.0


def _key(request_id):
    return coerce_request_id(request_id)


class Requests:
    """The requests read and not answered yet, each with the cancellation its evaluations watch."""

    def __init__(self) -> None:
        self.open: dict = {}
        self.turns: dict = {}  # each open request's place in the connection's order
        # What each request's handler runs under, until it takes it (`lookup`) or the request is answered. One of
        # a request cancelled before its handler starts stays (it never starts): a few hundred bytes each.
        self.scopes: dict = {}
        self.arrivals = Arrivals()
        self._idle = anyio.Event()
        self._idle.set()

    def opened(self, request_id, writing: bool = False) -> tuple[Cancellation, Turn]:
        token = self.open[_key(request_id)] = Cancellation()
        turn = self.turns[_key(request_id)] = self.arrivals.arrive()
        turn.classify(writing)  # over stdio the line is read here: known at arrival
        self.scopes[_key(request_id)] = (token, turn)
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        return token, turn

    def lookup(self, request_id) -> tuple[Cancellation, Turn] | None:
        """The cancellation and turn of a request read and not answered yet, for its handler (`build_server`'s
        `tracked`): they go by id, since the SDK runs a handler in a context of its own."""
        return self.scopes.pop(_key(request_id), None)

    def closed(self, request_id, reason: str | None = None) -> None:
        token = self.open.pop(_key(request_id), None)
        turn = self.turns.pop(_key(request_id), None)
        if not reason:
            self.scopes.pop(_key(request_id), None)
        if token is not None and reason:
            token.cancel(reason)
        # Answered, or cancelled before its handler started (it never will): it holds nobody back. One cancelled
        # while it runs ends its turn itself, once it has stopped.
        if turn is not None and (not reason or not turn.entered):
            turn.finish()
        if not self.open:
            self._idle.set()

    def cancel_all(self, reason: str) -> None:
        for token in self.open.values():
            token.cancel(reason)

    async def drained(self) -> None:
        await self._idle.wait()


STOP = None  # put in the line stream by a signal: read no further


def _read_lines(lines, token, early: EarlyStart | None = None) -> None:
    """Read stdin in a daemon thread, so a blocked read never keeps the process from exiting. It reads
    the descriptor itself: a daemon thread blocked inside `sys.stdin`'s buffered reader holds its lock,
    and the interpreter aborts when it finalizes `sys.stdin` at exit. What `early` read ahead goes first."""
    fd = sys.stdin.fileno()
    pending: list[bytes] = []
    try:
        if early is not None:
            for line in early.lines:
                anyio.from_thread.run(lines.send, line, token=token)
            if early.rest:
                pending.append(early.rest)
        while not (early is not None and early.ended) and (chunk := os.read(fd, 1 << 16)):
            *complete, rest = chunk.split(b"\n")
            for part in complete:
                pending.append(part)
                anyio.from_thread.run(lines.send, decode_line(b"".join(pending)), token=token)
                pending = []
            if rest:
                pending.append(rest)
        if pending:
            anyio.from_thread.run(lines.send, decode_line(b"".join(pending)), token=token)
        anyio.from_thread.run_sync(lines.close, token=token)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError, OSError):
        return  # the server stopped reading, or is gone


async def _serve(memory: Memory, interactive: bool = False, workers: WorkerPool | None = None,
                 early: EarlyStart | None = None) -> None:
    """Serve until end of input or a signal; every request read is answered before the server exits.

    SIGINT or SIGTERM stops reading and lets the calls in flight finish (their evaluations are bounded
    by the budget); a second signal, or Ctrl-C when a person started the server on a terminal,
    cancels them at once. `workers`, started by the caller, evaluate; the caller closes them."""
    if workers is not None:
        # Serving does not wait for the worker (initialize, tools/list and the calls that do not evaluate are
        # answered meanwhile; an evaluating call waits for it), but one that cannot start is said at once.
        threading.Thread(target=_report_unready, args=(workers,), name="workers-ready", daemon=True).start()
    await _serve_with(memory, workers, interactive, early)


def _report_unready(workers: WorkerPool) -> None:
    if not workers.wait_ready() and not workers.closed:  # closed: the server ended before it was needed
        log.error("the evaluation process did not start; evaluating calls will fail (see the log above)")


async def _serve_with(memory: Memory, workers: WorkerPool | None, interactive: bool,
                      early: EarlyStart | None = None) -> None:
    """The protocol loop of `_serve`, its evaluating calls sent to `workers` when there are any."""
    requests = Requests()
    # The initialize requests read and not answered yet, with the version each asked for: the SDK's answer is
    # kept for the next start (early_initialize.py), and not sent again to the one answered before it loaded.
    initializing: dict = {}
    early_key = _key(early.answered) if early is not None and early.answered is not None else None
    server = build_server(memory, workers, tracked=requests.lookup)
    options = initialization_options(server)
    stopping = False
    async with _wire_out() as stdout, stdio_server(stdin=_NO_INPUT, stdout=stdout) as (_, write_stream):
        # Plain memory streams into `Server.run` (its public entry): a handler finds its request's cancellation
        # and turn by id (`Requests.lookup`), so nothing rides on the SDK's sender-context streams.
        forward, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        outbound, relay = anyio.create_memory_object_stream[SessionMessage](0)
        lines_in, lines = anyio.create_memory_object_stream[str | None](0)

        async def screen() -> None:
            """Answer what the SDK cannot parse, note each request and its cancellation; at end of
            input (or a signal), wait until every request read has its answer, then close."""
            async with forward:
                async for line in lines:
                    if line is STOP:
                        break
                    item = read_message(line)
                    if isinstance(item, tuple):
                        await write_stream.send(item[0])
                        continue
                    message = item.message
                    if isinstance(message, JSONRPCRequest):
                        # Noted before the SDK sees it: its handler looks its cancellation and turn up by id.
                        requests.opened(message.id, writes(message.method, message.params))
                        if message.method == "initialize" and isinstance(message.params, dict):
                            initializing[_key(message.id)] = message.params.get("protocolVersion")
                        await forward.send(item)
                        continue
                    if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                        target = (message.params or {}).get("requestId")
                        if target is not None:
                            requests.closed(target, "cancelled by the client")
                    await forward.send(item)
                await requests.drained()

        async def answer() -> None:
            """Relay the server's messages to stdout, marking requests answered once written."""
            nonlocal early_key
            async with relay, write_stream:
                async for item in relay:
                    message = item.message
                    answered = isinstance(message, (JSONRPCResponse, JSONRPCError)) and message.id is not None
                    key = _key(message.id) if answered else None
                    version = initializing.pop(key, None) if key is not None else None
                    if key is not None and key == early_key:  # answered before the SDK loaded: not sent twice
                        early_key = None
                        _check_early(early, _wire_result(message))
                    else:
                        await write_stream.send(item)
                    if answered:
                        requests.closed(message.id)
                    if isinstance(version, str) and (result := _wire_result(message)) is not None:
                        await anyio.to_thread.run_sync(keep_answer, version, result)  # for the next start

        async def signals(serving: anyio.CancelScope) -> None:
            nonlocal stopping
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                async for signum in received:
                    name = signal.Signals(signum).name
                    if interactive or stopping:
                        log.info("stopping now (%s)", name)
                        requests.cancel_all("the server is stopping")
                        if not interactive:  # a client waits on each call in flight: its `cancelled` answer
                            with anyio.move_on_after(STOP_GRACE_S):
                                await requests.drained()
                        serving.cancel()
                        return
                    stopping = True
                    log.info("stopping (%s): finishing %d call(s) in flight", name, len(requests.open))
                    try:
                        await lines_in.send(STOP)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        pass  # input had ended already

        reader = threading.Thread(target=_read_lines, args=(lines_in, anyio.lowlevel.current_token(), early),
                                  name="stdin", daemon=True)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer)  # ends when the server closes its side
            async with anyio.create_task_group() as serving:
                reader.start()
                serving.start_soon(screen)
                serving.start_soon(signals, serving.cancel_scope)
                await server.run(inbound, outbound, options)
                serving.cancel_scope.cancel()


def _wire_result(message) -> dict | None:
    """A response's result as it goes on the wire (the SDK's own serialization), None for an error."""
    if not isinstance(message, JSONRPCResponse):
        return None
    return json.loads(message.model_dump_json(by_alias=True, exclude_unset=True)).get("result")


def _check_early(early: EarlyStart | None, result: dict | None) -> None:
    """The SDK's answer to the initialize answered early must be what was sent (else the fingerprint missed a
    change: the SDK's answer is kept for the next start, and this one is said)."""
    if early is not None and result is not None and result == early.sent:
        return
    log.warning("initialize was answered from the answer kept by an earlier start, and the SDK's answer differs "
                "(%s); the SDK's is kept for the next start. If the client misbehaves, restart the server",
                "an error" if result is None else "another result")


class _PipeOut:
    """The wire's stdout written by the event loop itself: each message goes out in a non-blocking write as
    soon as it is answered, instead of a worker-thread round trip for the write and another for the flush
    (the SDK's writer; about a fifth of the server's CPU time per call). A client that reads slowly still
    holds the writer back: with a high-water mark of 0, `drain` returns only once everything is written."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))
        await self._writer.drain()

    async def flush(self) -> None:
        """Every write has been written by the time it returns."""


@contextlib.asynccontextmanager
async def _wire_out():
    """What the SDK's stdio transport writes to: a `_PipeOut` when stdout is a pipe or a socket (what MCP
    clients give a server); else None, and the SDK writes as it does by default (a terminal or a file, whose
    open file description other processes may share: it is never made non-blocking).

    Like the SDK's own claim of fd 1, stray output of this process goes to stderr while it serves: the wire
    is a private duplicate, and fd 1 points at stderr until serving ends."""
    try:
        mode = os.fstat(1).st_mode
    except OSError:
        mode = 0
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        yield None
        return
    wire = os.dup(1)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(lambda: asyncio.streams.FlowControlMixin(loop),
                                                        os.fdopen(wire, "wb", buffering=0, closefd=False))
    transport.set_write_buffer_limits(high=0)
    try:
        yield _PipeOut(asyncio.StreamWriter(transport, protocol, None, loop))
    finally:
        transport.close()
        os.set_blocking(wire, True)
        os.dup2(wire, 1)
        os.close(wire)


class _NoInput:
    """The SDK's stdin reader gets nothing: the server reads stdin itself (see `_read_lines`)."""

    def __aiter__(self):
        return self

    async def __anext__(self):
        raise StopAsyncIteration


_NO_INPUT = _NoInput()


def configure_logging(level: str | None) -> None:
    """Logs go to stderr: the SDK's own records only from warning up, unless debugging; ours at `level`."""
    chosen = log_level(level)
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if chosen <= logging.DEBUG else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.setLevel(chosen)


STORAGE_CHECK_S = 5.0  # how often a serving process looks whether its database file is still there


def announce_storage(memory: Memory) -> None:
    """A server never starts an empty or read-only memory silently: it says so on stderr, whatever the log level.
    Then, every STORAGE_CHECK_S, a daemon thread looks whether the database file is still the one it opened
    (one stat): a removed folder is logged, and the status says degraded, before the next write finds it."""
    warn = getattr(memory.store, "startup_warning", None)
    note = warn() if warn is not None else None
    if note is not None:
        # No file yet is what every first start looks like: a notice (INFO), not a warning; a memory it can
        # only read is a warning. Below the log level, the note is still printed on one line.
        level = logging.INFO if not getattr(memory.store, "exists", True) else logging.WARNING
        log.log(level, "%s", note)
        if log.getEffectiveLevel() > level:
            print(f"datalog-memory: {note}", file=sys.stderr, flush=True)
    lost = getattr(memory.store, "lost", None)
    if lost is not None:
        def watch() -> None:
            while lost() is None:  # logs the loss once, when it is found
                time.sleep(STORAGE_CHECK_S)
        threading.Thread(target=watch, name="storage-watch", daemon=True).start()


def serve(memory: Memory, level: str | None = None, workers: WorkerPool | None = None,
          early: EarlyStart | None = None) -> None:
    """Serve MCP over stdin/stdout until stdin closes or a signal. Logs go to stderr only.

    `workers` is the started pool the evaluating calls go to (its owner closes it; `datalog-memory serve`
    starts it before this module is imported, see cli/main.py); None evaluates in this process. `early`: what
    was read from stdin, and answered, before this module was imported (memory/early_initialize.py)."""
    configure_logging(level)
    interactive = sys.stdin.isatty()
    log.info("datalog-memory %s serving %s (MCP %s by handshake; %s stateless)", __version__,
             shown(absolute(memory.path)),
             ", ".join(HANDSHAKE_PROTOCOL_VERSIONS), ", ".join(MODERN_PROTOCOL_VERSIONS))
    announce_storage(memory)
    if interactive:
        print(f"datalog-memory {__version__}: an MCP server on stdin/stdout, meant to be started by an MCP "
              "client (see README). Press Ctrl-C to stop it.", file=sys.stderr, flush=True)
    try:
        anyio.run(_serve, memory, interactive, workers, early)
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were in place
        pass
