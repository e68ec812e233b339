"""The memories' full-text table `memory_fts` (migration 0004): FTS5 on SQLite, a plain table on PostgreSQL."""

from __future__ import annotations


class FullText:
    def __init__(self, conn) -> None:
        self._conn = conn

    def add(self, seq: int, text: str, statements: str) -> None:
        """Index a new memory's text and projection statements under its seq."""
        self._conn.execute("INSERT INTO memory_fts (rowid, text, statements) VALUES (?, ?, ?)", (seq, text, statements))

    def erase(self, seq: int) -> None:
        """Remove a memory's row and, on SQLite, every copy of its tokens: FTS5 keeps a deleted row's tokens in
        its index segments until they are merged, so 'secure-delete' removes them at once and 'optimize'
        rewrites the index into one segment without them. (PostgreSQL's row goes; `scrub` rewrites the table.)"""
        fts5 = self._conn.dialect == "sqlite"
        if fts5:
            self._conn.execute("INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1)")
        self._conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (seq,))
        if fts5:
            self._conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
