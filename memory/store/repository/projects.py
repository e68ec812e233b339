"""Projects: the namespaces a caller's repository remote names (a project id per normalized remote)."""

from __future__ import annotations

from ...clock import utc_now


class Projects:
    def __init__(self, conn) -> None:
        self._conn = conn

    def of_remote(self, remote: str) -> str | None:
        row = self._conn.execute("SELECT id FROM projects WHERE remote = ?", (remote,)).fetchone()
        return None if row is None else row[0]

    def add(self, ident: str, remote: str) -> None:
        self._conn.execute("INSERT INTO projects (id, remote, created_at) VALUES (?, ?, ?)",
                           (ident, remote, utc_now(self._conn.clock)))
