"""Evaluation processes: the MCP server runs every tool call that evaluates Datalog (the registry's
`evaluates` tools) in a separate, pre-started worker process, so an evaluation can neither stall the
server's protocol loop (a resize of millions of entries holds the interpreter for hundreds of
milliseconds) nor leave its memory in the server; the server enforces the budget from outside.

`calls` runs one tool call and classifies its outcome (the same code in the server and in a worker),
`protocol` is what crosses the pipe, `worker` is the process's main, `pool` the server's side, `fairness`
which waiting caller gets the next free worker."""

from .calls import Outcome, run_call
from .pool import WorkerPool, WorkerSettings

__all__ = ["Outcome", "WorkerPool", "WorkerSettings", "run_call"]
