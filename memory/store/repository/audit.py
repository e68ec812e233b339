"""The audit log: append-only, one row per mutation, written in the mutation's own transaction."""

from __future__ import annotations

import json
from typing import Any

from ...clock import utc_now
from ..dialect import Dialect
from ._visibility import visible
from .records import AuditRow, Visibility

ERASED = "[erased]"


def _dump(payload: dict) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)


class Audit:
    def __init__(self, conn) -> None:
        self._conn = conn

    def record(self, actor: str, operation: str, segment: str | None, payload: dict[str, Any]) -> int:
        """Append one row; returns its id (which is also the order of events)."""
        return self._conn.execute(
            "INSERT INTO audit_log(at, actor, operation, segment, payload) VALUES (?, ?, ?, ?, ?) RETURNING id",
            (utc_now(self._conn.clock), actor, operation, segment, _dump(payload))).fetchall()[0][0]

    def newest_id(self) -> int:
        """The id of the newest row (0 for an empty log): a copy that has it has every event before it."""
        return self._conn.execute("SELECT coalesce(max(id), 0) FROM audit_log").fetchone()[0]

    def last(self, operation: str) -> AuditRow | None:
        """The newest row of an operation."""
        row = self._conn.execute("SELECT at, payload FROM audit_log WHERE operation = ? ORDER BY id DESC LIMIT 1",
                                 (operation,)).fetchone()
        return None if row is None else AuditRow(row[0], json.loads(row[1]))

    def redact(self, strings: set[str], now: str, actors: set[str]) -> int:
        """Replace every payload string holding one of `strings` with "[erased]" in the rows these `actors` wrote,
        and mark the payload with `redacted_at` (the one change the log allows). Returns how many rows were
        redacted."""
        if not strings or not actors:
            return 0
        # A payload is JSON text: look for each string as JSON writes it (ensure_ascii=False, as record does).
        needles = [json.dumps(s, ensure_ascii=False)[1:-1] for s in strings]
        condition = " OR ".join("instr(payload, ?) > 0" for _ in needles)
        rows = self._conn.execute(f"SELECT id, payload FROM audit_log WHERE actor IN ({', '.join('?' * len(actors))}) "
                                  f"AND ({condition})", [*sorted(actors), *needles]).fetchall()
        for row_id, payload in rows:
            redacted = _redact(json.loads(payload), strings)
            redacted["redacted_at"] = now
            self._conn.execute("UPDATE audit_log SET payload = ? WHERE id = ?", (_dump(redacted), row_id))
        return len(rows)

    def page(self, visibility: Visibility | None, namespaces: tuple[str, ...], reader: str, *, actor: str | None = None,
             operation: str | None = None, since: str | None = None, until: str | None = None, limit: int = 50,
             offset: int = 0) -> dict[str, Any]:
        """{items, total, actors, operations}: the rows matching the filter (since inclusive, until
        exclusive), and every actor and operation the reader could filter by."""
        visible_rows, params = _readable(self._conn.sql, visibility, namespaces, reader)
        conditions, chosen = [visible_rows], list(params)
        for column, op, value in (("a.actor", "=", actor), ("a.operation", "=", operation), ("a.at", ">=", since),
                                  ("a.at", "<", until)):
            if value is not None:
                conditions.append(f"{column} {op} ?")
                chosen.append(value)
        clause = " AND ".join(conditions)
        total = self._conn.execute(f"SELECT count(*) FROM audit_events AS a WHERE {clause}", chosen).fetchone()[0]
        rows = self._conn.execute(f"SELECT a.id, a.at, a.actor, a.operation, a.memory, a.summary, a.payload "
                                  f"FROM audit_events AS a WHERE {clause} ORDER BY a.id DESC LIMIT ? OFFSET ?",
                                  (*chosen, limit, offset)).fetchall()
        actors = [a for (a,) in self._conn.execute(
            f"SELECT DISTINCT a.actor FROM audit_events AS a WHERE {visible_rows} ORDER BY a.actor", params)]
        operations = [o for (o,) in self._conn.execute(
            f"SELECT DISTINCT a.operation FROM audit_events AS a WHERE {visible_rows} ORDER BY a.operation", params)]
        items = [{"id": i, "at": at, "actor": who, "operation": op, "memory": seg, "summary": summary,
                  "payload": payload} for i, at, who, op, seg, summary, payload in rows]
        return {"items": items, "total": total, "actors": actors, "operations": operations}


FACT_PATHS = ("$.fact", "$.old", "$.new")  # where a payload names a fact


def _readable(dialect: Dialect, visibility: Visibility | None, namespaces: tuple[str, ...],
              reader: str) -> tuple[str, list]:
    """SQL over `a` (a row of the audit_events view) keeping the rows a reader may see, and its parameters.
    A row about source memories is kept only when every memory it names is in `namespaces`; a row naming a
    fact (`fact`, or update_fact's `old` and `new`) is dropped while that fact is stored but invisible; and
    while some fact rests on a source memory, another principal's materialize row is dropped (its count of
    conclusions was taken over what that principal sees)."""
    listed = ", ".join("?" * len(namespaces)) or "NULL"
    sql = (f"(a.operation <> 'memory_remember' OR json_extract(a.payload, '$.namespace') IN ({listed})) AND "
           f"(a.operation <> 'memory_forget' OR NOT EXISTS (SELECT 1 FROM {dialect.elements('a.payload', 'j', 'ids')} "
           f"LEFT JOIN memory_texts AS m ON m.id = j.value "
           f"WHERE m.namespace IS NULL OR m.namespace NOT IN ({listed})))")
    params: list = [*namespaces, *namespaces]
    if visibility is not None:  # some fact rests on a source memory: hide rows naming one the reader cannot see
        condition, condition_params = visible(visibility)
        hidden = (f"EXISTS (SELECT 1 FROM facts AS f JOIN segments AS g ON g.id = f.segment_id "
                  f"WHERE g.name = coalesce(a.memory, 'default') AND f.text = json_extract(a.payload, ?) "
                  f"AND NOT ({condition}))")
        for path in FACT_PATHS:
            sql += f" AND NOT {hidden}"
            params += [path, *condition_params]
        sql += " AND (a.operation <> 'materialize' OR a.actor = ?)"
        params.append(reader)
    return sql, params


def _redact(value: Any, strings: set[str]) -> Any:
    if isinstance(value, str):
        return ERASED if any(s in value for s in strings) else value
    if isinstance(value, list):
        return [_redact(v, strings) for v in value]
    if isinstance(value, dict):
        return {k: _redact(v, strings) for k, v in value.items()}
    return value
