"""Source memories: each memory (`source_memories`), the exact text it came from (`sources`) and its lifecycle
(`memory_events`). The memory's projections are `memory_projections.py`'s, its search terms `memory_words.py`'s.

Which memories a read may return is a filter over `m` (source_memories) and `s` (sources), built here from
plain values: `settled` (the memories current at a moment, or with `history` all recorded by then) and
`visible_now` (current now, not erased, in the namespaces given)."""

from __future__ import annotations

from .records import MemoryEvent, MemoryListing, NewMemory, StoredMemory

# The columns of a StoredMemory, in order, over `FROM`.
COLUMNS = ("m.seq, m.id, m.source_id, m.namespace, m.lifetime, m.kind, m.status, m.superseded_by, m.idempotency_key, "
           "m.principal, m.valid_from, m.valid_to, m.recorded_at, m.version, s.text, s.sha256, s.source_class, "
           "s.trust, s.created_at, s.erased_at")
FROM = "source_memories AS m JOIN sources AS s ON s.id = m.source_id"
# The status a memory had at a given time: that of its last lifecycle event at or before it.
STATUS_AT = ("(SELECT e.status FROM memory_events AS e WHERE e.memory_id = m.id AND e.at <= ? "
             "ORDER BY e.at DESC, e.id DESC LIMIT 1)")
_VALID = "m.valid_from <= ? AND (m.valid_to IS NULL OR m.valid_to > ?)"  # parameters: the moment, twice
_CURRENT = f"m.status = 'active' AND {_VALID}"


def marks(values: list) -> str:
    """One placeholder per value, for an IN list."""
    return ", ".join("?" * len(values))


def settled(moment: str, history: bool = False, past: bool = False) -> tuple[str, list]:
    """SQL over `m` and its parameters: the memories settled at `moment` (active and valid then; `past`: a moment
    before now, whose status comes from the lifecycle events), or with `history` everything recorded by then."""
    if history:
        return "m.recorded_at <= ?", [moment]
    if not past:
        return _CURRENT, [moment, moment]
    return f"m.recorded_at <= ? AND {STATUS_AT} = 'active' AND {_VALID}", [moment, moment, moment, moment]


def visible_now(now: str, namespaces: list[str]) -> tuple[str, list]:
    """SQL over `m` and `s` and its parameters: current at `now` (active, valid), not erased, in `namespaces`."""
    return f"{_CURRENT} AND s.erased_at IS NULL AND m.namespace IN ({marks(namespaces)})", [now, now, *namespaces]


def _memory(row: tuple | None) -> StoredMemory | None:
    return None if row is None else StoredMemory(*row)


class SourceMemoryRows:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- reading -----------------------------------------------------------------------------------------
    def by_id(self, ident: str) -> StoredMemory | None:
        """The memory with this id, whatever its status and namespace (None: there is none)."""
        return _memory(self._conn.execute(f"SELECT {COLUMNS} FROM {FROM} WHERE m.id = ?", (ident,)).fetchone())

    def by_key(self, namespace: str, key: str) -> StoredMemory | None:
        """The memory remembered in `namespace` with this idempotency key (None: none was)."""
        return _memory(self._conn.execute(f"SELECT {COLUMNS} FROM {FROM} WHERE m.namespace = ? AND "
                                          "m.idempotency_key = ?", (namespace, key)).fetchone())

    def current_page(self, now: str, namespaces: list[str], limit: int, offset: int) -> list[MemoryListing]:
        """One page, oldest first, of the memories current at `now` in `namespaces` whose text is kept."""
        where, params = visible_now(now, namespaces)
        rows = self._conn.execute(f"SELECT m.id, m.kind, m.recorded_at FROM {FROM} WHERE {where} "
                                  "ORDER BY m.seq LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall()
        return [MemoryListing(i, k, r) for i, k, r in rows]

    def superseded_by(self, ident: str) -> list[str]:
        """The ids of the memories `ident` superseded, oldest first."""
        return [r[0] for r in self._conn.execute("SELECT id FROM source_memories WHERE superseded_by = ? ORDER BY seq",
                                                 (ident,))]

    def source_text(self, source_id: str) -> str | None:
        """The text of a source (None once erased); the source must exist."""
        (text,), = self._conn.execute("SELECT text FROM sources WHERE id = ?", (source_id,)).fetchall()
        return text

    def status_at(self, memory_id: str, at: str) -> str | None:
        """The status of the memory's last lifecycle event at or before `at` (None: it had none by then)."""
        row = self._conn.execute(f"SELECT {STATUS_AT} FROM source_memories AS m WHERE m.id = ?",
                                 (at, memory_id)).fetchone()
        return row[0] if row else None

    def history(self, memory_id: str, until: str) -> list[MemoryEvent]:
        """The memory's lifecycle events at or before `until`, oldest first."""
        return [MemoryEvent(a, s, r, p) for a, s, r, p in self._conn.execute(
            "SELECT at, status, reason, principal FROM memory_events WHERE memory_id = ? AND at <= ? "
            "ORDER BY at, id", (memory_id, until))]

    # --- writing -----------------------------------------------------------------------------------------
    def add(self, new: NewMemory) -> int:
        """Store the source and the memory (active, version 1); returns the memory's seq. Its first lifecycle
        event is the caller's (`add_event`)."""
        self._conn.execute("INSERT INTO sources (id, text, sha256, principal, source_class, trust, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", (new.source_id, new.text, new.sha256, new.principal,
                                                            new.source_class, new.trust, new.now))
        (seq,), = self._conn.execute(
            "INSERT INTO source_memories (id, source_id, namespace, lifetime, kind, idempotency_key, principal, "
            "valid_from, valid_to, recorded_at, text_words, statement_words) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (new.memory_id, new.source_id, new.namespace, new.lifetime, new.kind, new.idempotency_key, new.principal,
             new.valid_from, new.valid_to, new.now, new.text_words, new.statement_words)
        ).fetchall()  # drained: the statement is done before the commit
        return seq

    def add_event(self, memory_id: str, at: str, status: str, reason: str | None, principal: str) -> None:
        """Record a lifecycle change of the memory."""
        self._conn.execute("INSERT INTO memory_events (memory_id, at, status, reason, principal) VALUES (?, ?, ?, ?, ?)",
                           (memory_id, at, status, reason, principal))

    def end(self, memory_id: str, status: str, successor: str | None, now: str) -> None:
        """Give the memory a new status (and version): `successor` supersedes it; 'expired' also ends its
        validity at `now` unless it ended before. Its lifecycle event is the caller's (`add_event`)."""
        self._conn.execute(
            "UPDATE source_memories SET status = ?, version = version + 1, superseded_by = coalesce(?, superseded_by), "
            "valid_to = CASE WHEN ? = 'expired' AND (valid_to IS NULL OR valid_to > ?) THEN ? ELSE valid_to END "
            "WHERE id = ?", (status, successor, status, now, now, memory_id))

    def erase_source(self, source_id: str, now: str) -> None:
        """Drop a source's text and digest, stamping when."""
        self._conn.execute("UPDATE sources SET text = NULL, sha256 = '', erased_at = ? WHERE id = ?", (now, source_id))

    def forget_key(self, memory_id: str) -> None:
        """Drop the memory's idempotency key (a caller's string, content like the text)."""
        self._conn.execute("UPDATE source_memories SET idempotency_key = NULL WHERE id = ?", (memory_id,))
