"""What crosses the pipe between the server and an evaluation worker: one JSON object per line, each
way. Messages are parsed (json.loads) and checked field by field, never evaluated.

server -> worker: `start` (once, first: what Memory's constructor takes), `call` (with its caller when that
is not the start's: an HTTP server serves many), `cancel`.
worker -> server: `ready` (once), then per call `started` (the call is taken: from here on it may
have run, so the server never sends it elsewhere) and `result`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ..datalog.budget import Budget
from ..access.context import CallerContext
from ..tools import ToolResult
from .calls import ERROR, INTERNAL, OK, Outcome

MAX_LINE = 256 << 20  # a line longer than this is a broken peer, not a message


class ProtocolError(ValueError):
    """A line that is not a message of this protocol."""


def encode(message: dict) -> bytes:
    # allow_nan: a result may hold an IEEE special float; the server's own JSON writer decides how it is sent
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes) -> dict:
    if len(line) > MAX_LINE:
        raise ProtocolError("message too long")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("not a message")
    return message


def _field(message: dict, name: str, kinds, optional: bool = False):
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    value = message.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise ProtocolError(f"{message.get('type', 'message')}: field {name} is missing or of the wrong type")
    return value


def _context_message(c: CallerContext) -> dict:
    return {"principal": c.principal, "session_id": c.session_id, "project_remote": c.project_remote,
            "source_class": c.source_class, "capabilities": sorted(c.capabilities)}


def _context_of(context: dict) -> CallerContext:
    capabilities = _field(context, "capabilities", list)
    if not all(isinstance(c, str) for c in capabilities):
        raise ProtocolError("context: capabilities must be names")
    return CallerContext(principal=_field(context, "principal", str), session_id=_field(context, "session_id", str),
                         project_remote=_field(context, "project_remote", str, optional=True),
                         source_class=_field(context, "source_class", str), capabilities=frozenset(capabilities))


@dataclass(frozen=True)
class Start:
    """Everything a worker's Memory is built from, given explicitly by the server: the same database, the
    same caller (principal, session, project, source class, capabilities: never from a tool's arguments)
    and the same budget as the server's own Memory."""

    path: str
    global_path: str
    context: CallerContext
    budget: Budget
    # A database lives at `path` (it did when the server started): a worker that finds none there reports it
    # lost instead of answering from an empty memory.
    expected: bool = False

    @classmethod
    def of(cls, memory) -> "Start":
        from ..store import absolute

        store = memory.store
        expected = store.is_file and (store.expected or store.exists)
        return cls(absolute(memory.path), absolute(memory.global_path), memory.context,
                   memory.kb.budget.copy(), expected)

    def to_message(self) -> dict:
        b = self.budget
        return {"type": "start", "path": self.path, "global_path": self.global_path,
                "context": _context_message(self.context), "expected": self.expected,
                "budget": {"timeout_s": b.timeout_s, "max_tuples": b.max_tuples, "max_rows": b.max_rows,
                           "max_memory_mb": b.max_memory_mb}}

    @classmethod
    def from_message(cls, message: dict) -> "Start":
        if message.get("type") != "start":
            raise ProtocolError("the first message must be start")
        context, budget = _field(message, "context", dict), _field(message, "budget", dict)
        limits = (_field(budget, "timeout_s", (int, float)), _field(budget, "max_tuples", int),
                  _field(budget, "max_rows", int), _field(budget, "max_memory_mb", int))
        if not all(math.isfinite(v) and v > 0 for v in limits):
            raise ProtocolError("start: every budget limit must be positive")
        return cls(
            _field(message, "path", str), _field(message, "global_path", str), _context_of(context),
            Budget(float(limits[0]), *limits[1:]), bool(_field(message, "expected", bool, optional=True)))


@dataclass(frozen=True)
class Call:
    id: int
    tool: str
    arguments: Any
    elapsed: float  # seconds the call has already run (since it arrived at the server): its budget counts them
    context: CallerContext | None = None  # who calls, when not the start message's caller (HTTP: per caller)
    expected: bool = False  # the server knows a database at the path (opened or created it since its start)

    def to_message(self) -> dict:
        message = {"type": "call", "id": self.id, "tool": self.tool, "arguments": self.arguments,
                   "elapsed": self.elapsed}
        if self.context is not None:
            message["context"] = _context_message(self.context)
        if self.expected:
            message["expected"] = True
        return message

    @classmethod
    def from_message(cls, message: dict) -> "Call":
        elapsed = _field(message, "elapsed", (int, float))
        if not (math.isfinite(elapsed) and elapsed >= 0):
            raise ProtocolError("call: elapsed must be a duration")
        context = _field(message, "context", dict, optional=True)
        return cls(_field(message, "id", int), _field(message, "tool", str), message.get("arguments"), float(elapsed),
                   None if context is None else _context_of(context),
                   bool(_field(message, "expected", bool, optional=True)))


def cancel_message(call_id: int, reason: str) -> dict:
    return {"type": "cancel", "id": call_id, "reason": reason}


def result_message(call_id: int, outcome: Outcome) -> dict:
    return {"type": "result", "id": call_id, "kind": outcome.kind, "text": outcome.result.text,
            "structured": outcome.result.structured}


def outcome_of(message: dict) -> Outcome:
    kind = _field(message, "kind", str)
    if kind not in (OK, ERROR, INTERNAL):
        raise ProtocolError("result: unknown kind")
    structured = _field(message, "structured", dict)
    if kind != OK and not isinstance(structured.get("error"), dict):
        raise ProtocolError("result: a failure without its error")
    return Outcome(kind, ToolResult(_field(message, "text", str), structured))
