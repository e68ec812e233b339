"""The operator's operations: the store's status, the invariant check, the HTTP transport's bearer tokens."""

from __future__ import annotations

from ..knowledge import integrity, programs
from ..access import CallerContext
from ..access.context import ADMIN
from ..access.tokens import AccessTokens, IssuedToken
from ..store import MemoryStore
from ..store.repository import Repository
from .bases import KnowledgeBases


class AdminService:
    def __init__(self, bases: KnowledgeBases, repository: Repository, context: CallerContext) -> None:
        self.bases = bases
        self.repository = repository
        self.context = context

    @property
    def store(self) -> MemoryStore:
        return self.repository.store

    def get_persistence_status(self, check_integrity: bool = False) -> dict:
        status = programs.persistence_status(self.bases.project, check_integrity)
        # The storage's own account (store/connection.py `storage_state`): why it is degraded as a stable code,
        # whether it is open read-only, the last write the storage refused. Only what applies.
        state = getattr(self.store, "storage_state", None)
        return {**status, **(state() if state is not None else {})}

    def check_invariants(self, record: bool = True) -> integrity.CheckReport:
        """Rows that bypass the tools' invariants (see `datalog-memory check`); recorded in the audit log.
        It reads every row, whoever may see it, so it is an admin's check."""
        self.context.require(ADMIN, "Checking invariants")
        return integrity.check(self.repository, self.context.principal, record)

    def create_token(self, name: str, principal: str, project_remote: str | None = None,
                     capabilities: list[str] | None = None, source_class: str | None = None) -> IssuedToken:
        tokens = AccessTokens(self.repository, self.context)
        if source_class is None:
            return tokens.create(name, principal, project_remote, capabilities)
        return tokens.create(name, principal, project_remote, capabilities, source_class)

    def list_tokens(self) -> list:
        return AccessTokens(self.repository, self.context).list()

    def revoke_token(self, token_id: str):
        return AccessTokens(self.repository, self.context).revoke(token_id)
