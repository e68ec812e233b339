"""The tool registry. Importing this package registers every tool."""

from . import basic, beliefs, evidence, knowledge, persistence, refactoring, segments, sources, toolsets  # noqa: F401  (registration side effects)
from .registry import REGISTRY, Annotations, ArgumentsRejected, Tool, ToolResult, UnknownTool, call_tool, error_result, get_tool

__all__ = ["REGISTRY", "Annotations", "ArgumentsRejected", "Tool", "ToolResult", "UnknownTool", "call_tool",
           "error_result", "get_tool"]
