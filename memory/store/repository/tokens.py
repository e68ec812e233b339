"""Bearer tokens of the HTTP transport: their digests and the callers they name (migration 0012)."""

from __future__ import annotations

import json

from ...clock import utc_now
from .records import TokenRow

_COLUMNS = ("id, digest, name, principal, project_remote, source_class, capabilities, created_at, created_by, "
            "revoked_at, revoked_by")


def _row(values: tuple) -> TokenRow:
    ident, digest, name, principal, remote, source_class, capabilities, created_at, created_by, revoked_at, \
        revoked_by = values
    return TokenRow(ident, digest, name, principal, remote, source_class, tuple(json.loads(capabilities)),
                    created_at, created_by, revoked_at, revoked_by)


class Tokens:
    def __init__(self, conn) -> None:
        self._conn = conn

    def add(self, token_id: str, digest: str, name: str, principal: str, project_remote: str | None,
            source_class: str, capabilities: tuple[str, ...], created_by: str) -> TokenRow:
        self._conn.execute(
            f"INSERT INTO access_tokens ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
            (token_id, digest, name, principal, project_remote, source_class, json.dumps(sorted(capabilities)),
             utc_now(self._conn.clock), created_by))
        return self._existing(token_id)

    def get(self, token_id: str) -> TokenRow | None:
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM access_tokens WHERE id = ?", (token_id,)).fetchone()
        return None if row is None else _row(row)

    def all(self) -> list[TokenRow]:
        """Every token, oldest first, revoked ones included."""
        return [_row(r) for r in self._conn.execute(f"SELECT {_COLUMNS} FROM access_tokens ORDER BY created_at, id")]

    def active(self) -> int:
        return self._conn.execute("SELECT count(*) FROM access_tokens WHERE revoked_at IS NULL").fetchone()[0]

    def revoke(self, token_id: str, revoked_by: str) -> TokenRow:
        self._conn.execute("UPDATE access_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL",
                           (utc_now(self._conn.clock), revoked_by, token_id))
        return self._existing(token_id)

    def _existing(self, token_id: str) -> TokenRow:
        row = self.get(token_id)
        if row is None:  # the caller checked it exists (or just wrote it) in this transaction
            raise LookupError(f"access token {token_id} vanished inside its transaction")
        return row
