"""Erasing a source memory: no byte of its content is left in the database, its WAL or its audit rows.

What goes: the text and its digest, the idempotency key, every projection's
predicate, arguments, statement and fact text, the full-text index entries (the
index is then optimized, so no old segment keeps the tokens), every materialized
conclusion (any may rest on the memory; `materialize` rebuilds them), and the
erased strings wherever an older audit payload holds them. Connections run with
`secure_delete`, so freed bytes are overwritten with zeros, and after the commit
the WAL is checkpointed and truncated (`Store.scrub`).

What stays is the tombstone: the memory's id, namespace, kind, times and
lifecycle history (with the reasons callers gave), the `sources` row with
`erased_at`, and the audit row saying that an erase happened, by whom and when.
They hold ids, never content, and keep the audit trail and `as_of` history whole."""

from __future__ import annotations

import json
from typing import Any

ERASED = "[erased]"


def erase_memory(conn, record, now: str) -> None:
    """Erase one memory's content inside the caller's write transaction (`record`: a MemoryRecord)."""
    strings = {record.text, record.sha256, record.idempotency_key}
    facts: set[str] = set()
    for statement, fact, arguments in conn.execute(
            "SELECT statement, fact, arguments FROM memory_projections WHERE memory_id = ?", (record.id,)):
        strings.add(statement)
        facts.add(fact)
        facts |= {value for value in json.loads(arguments) if isinstance(value, str) and len(value) > 3}
    conn.execute("UPDATE sources SET text = NULL, sha256 = '', erased_at = ? WHERE id = ?", (now, record.source_id))
    conn.execute("UPDATE memory_projections SET predicate = '', statement = NULL, arguments = '[]', fact = '' "
                 "WHERE memory_id = ?", (record.id,))
    conn.execute("UPDATE source_memories SET idempotency_key = NULL WHERE id = ?", (record.id,))
    # FTS5 keeps a deleted row's tokens in its index segments until they are merged: 'secure-delete' removes
    # them at once, and 'optimize' rewrites the index into one segment without them.
    conn.execute("INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1)")
    conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (record.seq,))
    conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
    # Which conclusions rest on the memory is a question about proofs; the cache is cheaper to drop than to
    # search, and nothing but `materialize` writes it.
    conn.execute("DELETE FROM derived")
    # A fact text or argument still held by a stored fact (asserted, or projected by another memory) is not
    # this memory's alone: it stays where it is, and so do the audit rows of whoever stored it.
    strings |= {t for t in facts if t and conn.execute(
        "SELECT 1 FROM facts WHERE instr(text, ?) > 0 LIMIT 1", (t,)).fetchone() is None}
    redact_audit(conn, {s for s in strings if isinstance(s, str) and s.strip()}, now)


def redact_audit(conn, strings: set[str], now: str) -> int:
    """Replace every audit payload string holding one of `strings` with "[erased]" (and mark the payload
    with `redacted_at`). Returns how many rows were redacted."""
    if not strings:
        return 0
    # A payload is JSON text: look for each string as JSON writes it (ensure_ascii=False, as audit.record does).
    needles = [json.dumps(s, ensure_ascii=False)[1:-1] for s in strings]
    condition = " OR ".join("instr(payload, ?) > 0" for _ in needles)
    rows = conn.execute(f"SELECT id, payload FROM audit_log WHERE {condition}", needles).fetchall()
    for row_id, payload in rows:
        redacted = _redact(json.loads(payload), strings)
        redacted["redacted_at"] = now
        conn.execute("UPDATE audit_log SET payload = ? WHERE id = ?",
                     (json.dumps(redacted, sort_keys=True, ensure_ascii=False), row_id))
    return len(rows)


def _redact(value: Any, strings: set[str]) -> Any:
    if isinstance(value, str):
        return ERASED if any(s in value for s in strings) else value
    if isinstance(value, list):
        return [_redact(v, strings) for v in value]
    if isinstance(value, dict):
        return {k: _redact(v, strings) for k, v in value.items()}
    return value
