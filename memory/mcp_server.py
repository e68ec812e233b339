"""The MCP stdio adapter over the tool registry (both protocol eras, via the mcp v2 SDK).

The SDK's dual-era loop serves the 2025-11-25 handshake (initialize, ping, …) and
the 2026-07-28 stateless envelope (server/discover, per-request _meta, -32022).
This module only maps the registry onto it: tool definitions, results with text
and structured content, tool errors as isError results with a stable code, and
schema failures or unknown tools as -32602.
"""

from __future__ import annotations

import logging
import sys

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from . import __version__
from .api import Memory
from .errors import DatalogMemoryError
from .tools import REGISTRY, ArgumentsRejected, UnknownTool, call_tool, error_result

log = logging.getLogger("datalog-memory")

INSTRUCTIONS = (
    "Durable, explainable memory: store ground facts (remember_fact) and Datalog rules (define_rule), "
    "query with any Prolog-style goal (query_logic), and ask for proofs (explain_why). Keep exact source "
    "text with memory_remember (get, search, recall, forget it by id); record time-stamped observations with "
    "remember, then recall, reason, prove, verify an answer against them, or detect patterns. "
    "Host configuration defines identity and authority. Everything is kept in one SQLite file and audited."
)
INVALID_PARAMS = -32602
LIST_TTL_MS = 3_600_000


def mcp_tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema,
            output_schema=t.output_schema,
            annotations=types.ToolAnnotations(**{
                "title": t.title,
                "read_only_hint": t.annotations.read_only,
                "destructive_hint": t.annotations.destructive,
                "idempotent_hint": t.annotations.idempotent,
                "open_world_hint": t.annotations.open_world,
            }),
        )
        for t in REGISTRY.values()
    ]


def _result(text: str, structured: dict, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=is_error,
    )


def build_server(memory: Memory) -> Server:
    tools = mcp_tools()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # The engine is synchronous; a worker thread keeps the protocol loop answering meanwhile.
            result = await anyio.to_thread.run_sync(call_tool, memory, params.name, params.arguments)
        except UnknownTool as exc:
            raise MCPError(INVALID_PARAMS, exc.message, {"code": exc.code, "tool": params.name}) from None
        except ArgumentsRejected as exc:
            raise MCPError(INVALID_PARAMS, f"InvalidArguments: {exc.message}", exc.to_dict()) from None
        except DatalogMemoryError as exc:
            failure = error_result(exc)
            return _result(failure.text, failure.structured, is_error=True)
        except Exception as exc:  # a bug: report it, keep serving
            log.exception("tool %s failed", params.name)
            return _result(f"Internal error: {type(exc).__name__}: {exc}",
                           {"error": {"code": "internal_error", "message": str(exc)}}, is_error=True)
        return _result(result.text, result.structured)

    hints = {"tools/list": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
             "server/discover": CacheHint(ttl_ms=LIST_TTL_MS, scope="public")}
    return Server("datalog-memory", version=__version__, title="datalog-memory", instructions=INSTRUCTIONS,
                  cache_hints=hints, on_list_tools=list_tools, on_call_tool=call)


def _unparsable(exc: Exception) -> SessionMessage:
    """-32700 for text that is not JSON, -32600 for JSON that is not a JSON-RPC message."""
    not_json = isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors())
    code, message = (PARSE_ERROR, "Parse error") if not_json else (INVALID_REQUEST, "Invalid Request")
    detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message, data=detail)))


async def _serve(memory: Memory) -> None:
    server = build_server(memory)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        # The SDK drops lines it cannot decode; answer them instead, and keep serving.
        forward, inbound = create_context_streams[SessionMessage | Exception](0)

        async def screen() -> None:
            async with forward:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(_unparsable(item))
                    else:
                        await forward.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen)
            await server.run(inbound, write_stream, options)
            tasks.cancel_scope.cancel()


def serve(memory: Memory) -> None:
    """Serve MCP over stdin/stdout until stdin closes. Logs go to stderr only."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    anyio.run(_serve, memory)
