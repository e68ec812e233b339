"""`datalog-memory explore`: a local, read-only web view of one store, a surface beside the MCP server and
the command line. Pages are filled from the registry's read-only tools for one principal (memory.explorer.pages),
rendered with escaping builders (memory.explorer.html), served by memory.explorer.app."""

from .app import build_app, new_token, read_only, serve

__all__ = ["build_app", "new_token", "read_only", "serve"]
