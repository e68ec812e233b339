"""Raw Streamable HTTP requests to `serve --http`, shared by the HTTP tests and benchmarks/faults.py."""

from __future__ import annotations


def mcp_headers(token: str | None, session: str | None = None) -> dict:
    """The headers of one MCP POST: JSON in, JSON or SSE out, the bearer token and the session when given."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    if session:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    return headers
