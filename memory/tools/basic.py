"""Connectivity: echo (reference: zpm-mcp-tools.md)."""

from __future__ import annotations

from .registry import Annotations, ToolResult, tool
from .schemas import STRING, obj, out


@tool(
    "echo",
    title="Echo",
    group="admin",
    description="Echoes back a message string. Useful for testing server connectivity and tool invocation.",
    input_schema=obj({"message": {"type": "string", "maxLength": 65536, "description": "The message to echo"}},
                     ["message"]),
    output_schema=out({"message": STRING}),
    capability=None,
    annotations=Annotations(read_only=True),
)
def echo(api, message: str) -> ToolResult:
    return ToolResult(message, {"message": message})
