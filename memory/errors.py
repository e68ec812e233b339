"""Typed errors. Each carries a stable `code` that every surface reports verbatim."""

from __future__ import annotations

from typing import Any


class DatalogMemoryError(Exception):
    """Base of every error the library raises on purpose."""

    code = "internal_error"

    def __init__(self, message: str, *, plain: bool = False, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        # plain: the message is a reference tool's exact error text; surfaces show it unprefixed
        self.plain = plain

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class InternalError(DatalogMemoryError):
    """An unexpected failure (a bug), reported as a result so the caller and the server carry on."""

    code = "internal_error"


class InvalidArguments(DatalogMemoryError):
    code = "invalid_arguments"


class InvalidConfiguration(DatalogMemoryError, ValueError):
    """A setting from the host (an environment variable such as DATALOG_MEMORY_TIMEOUT_S) that cannot be
    used: refused when it is read, naming the setting and what it takes."""

    code = "invalid_configuration"


class TermSyntaxError(DatalogMemoryError):
    """Text that does not parse; `line` and `column` are 1-based."""

    code = "syntax_error"

    def __init__(self, message: str, line: int, column: int, **details: Any) -> None:
        super().__init__(f"{message} at line {line}, column {column}", line=line, column=column, **details)
        self.line = line
        self.column = column


class InvalidProgram(DatalogMemoryError):
    """A rule or program the engine refuses: unsafe, unstratifiable, or not Datalog."""

    code = "invalid_program"


class NotFound(DatalogMemoryError):
    code = "not_found"


class ReadOnly(DatalogMemoryError):
    code = "read_only"


class PermissionDenied(DatalogMemoryError):
    code = "permission_denied"


class Conflict(DatalogMemoryError):
    code = "conflict"


class BudgetExceeded(DatalogMemoryError):
    code = "budget_exceeded"


class Cancelled(DatalogMemoryError):
    """The caller cancelled the call (MCP notifications/cancelled) while it was evaluating."""

    code = "cancelled"


class EvaluationError(DatalogMemoryError):
    """A goal that is well formed but fails at run time (e.g. arithmetic on an atom)."""

    code = "evaluation_error"


class SchemaTooNew(DatalogMemoryError):
    code = "schema_too_new"


class StorageError(DatalogMemoryError):
    code = "storage_error"


class SQLiteOnly(StorageError):
    """What only an SQLite file has (the sqlite3 face's schema text, the file's own checks), asked of a
    PostgreSQL store: refused, never answered with something else. Its code stays `storage_error`."""
