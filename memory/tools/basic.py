"""Connectivity: echo (reference: zpm-mcp-tools.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..api import Memory
from .models import ToolInput, ToolOutput
from .registry import Annotations, Reply, tool


class EchoInput(ToolInput):
    message: Annotated[str, Field(max_length=65536, description="The message to echo")]


class EchoOutput(ToolOutput):
    message: str


@tool(
    "echo",
    title="Echo",
    group="admin",
    description="Echoes back a message string. Useful for testing server connectivity and tool invocation.",
    details="Echoes back a message string. Useful for testing server connectivity and tool invocation.",
    capability=None,
    annotations=Annotations(read_only=True),
)
def echo(api: Memory, args: EchoInput) -> Reply[EchoOutput]:
    return Reply(args.message, EchoOutput(message=args.message))
