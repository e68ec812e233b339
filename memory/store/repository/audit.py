"""The audit log: append-only, one row per mutation, written in the mutation's own transaction."""

from __future__ import annotations

import json
from typing import Any

from ...clock import utc_now
from .records import AuditRow

ERASED = "[erased]"


def _dump(payload: dict) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)


class Audit:
    def __init__(self, conn) -> None:
        self._conn = conn

    def record(self, actor: str, operation: str, segment: str | None, payload: dict[str, Any]) -> int:
        """Append one row; returns its id (which is also the order of events)."""
        self._conn.execute("INSERT INTO audit_log(at, actor, operation, segment, payload) VALUES (?, ?, ?, ?, ?)",
                           (utc_now(self._conn.clock), actor, operation, segment, _dump(payload)))
        return self._conn.last_insert_rowid()

    def last(self, operation: str) -> AuditRow | None:
        """The newest row of an operation."""
        row = self._conn.execute("SELECT at, payload FROM audit_log WHERE operation = ? ORDER BY id DESC LIMIT 1",
                                 (operation,)).fetchone()
        return None if row is None else AuditRow(row[0], json.loads(row[1]))

    def redact(self, strings: set[str], now: str) -> int:
        """Replace every payload string holding one of `strings` with "[erased]" and mark the payload with
        `redacted_at` (the one change the log allows). Returns how many rows were redacted."""
        if not strings:
            return 0
        # A payload is JSON text: look for each string as JSON writes it (ensure_ascii=False, as record does).
        needles = [json.dumps(s, ensure_ascii=False)[1:-1] for s in strings]
        condition = " OR ".join("instr(payload, ?) > 0" for _ in needles)
        rows = self._conn.execute(f"SELECT id, payload FROM audit_log WHERE {condition}", needles).fetchall()
        for row_id, payload in rows:
            redacted = _redact(json.loads(payload), strings)
            redacted["redacted_at"] = now
            self._conn.execute("UPDATE audit_log SET payload = ? WHERE id = ?", (_dump(redacted), row_id))
        return len(rows)


def _redact(value: Any, strings: set[str]) -> Any:
    if isinstance(value, str):
        return ERASED if any(s in value for s in strings) else value
    if isinstance(value, list):
        return [_redact(v, strings) for v in value]
    if isinstance(value, dict):
        return {k: _redact(v, strings) for k, v in value.items()}
    return value
