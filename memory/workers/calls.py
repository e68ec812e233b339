"""One tool call, run and classified: its result, its typed failure, or a bug reported as a result.

The server (in process) and an evaluation worker both run calls through `run_call`, so a call answers
the same on either side of the pipe."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..errors import DatalogMemoryError, InternalError
from ..store.connection import storage_error, storage_reason
from ..tools import ToolResult, call_tool, error_result

log = logging.getLogger("datalog-memory")

OK, ERROR, INTERNAL = "ok", "error", "internal"


@dataclass
class Outcome:
    """How a call ended: `ok` (a result), `error` (a typed failure the caller can act on) or `internal`
    (a bug, reported as an internal_error result); `result` is what the caller is shown."""

    kind: str
    result: ToolResult

    @property
    def code(self) -> str | None:
        """The failure's stable code (None for a success)."""
        return None if self.kind == OK else self.result.structured["error"]["code"]

    @classmethod
    def failed(cls, error: DatalogMemoryError) -> "Outcome":
        return cls(INTERNAL if isinstance(error, InternalError) else ERROR, error_result(error))


def run_call(memory, name: str, arguments: Any) -> Outcome:
    """Run one call. (The server looks the tool up first: an unknown tool is a protocol error there.)"""
    try:
        return Outcome(OK, call_tool(memory, name, arguments))
    except DatalogMemoryError as exc:  # arguments that fail the input schema included: the model can fix them
        return Outcome.failed(exc)
    except Exception as exc:  # a bug: report it, keep serving
        if storage_reason(exc) is not None:  # the disk, not the code: a full disk, a read-only file, an I/O error
            log.warning("tool %s: storage failure: %s", name, exc)
            return Outcome.failed(storage_error(exc, f"{name} could not use the database"))
        log.exception("tool %s failed", name)
        return Outcome(INTERNAL, error_result(InternalError(f"{type(exc).__name__}: {exc}", tool=name)))
