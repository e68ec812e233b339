"""Who is calling: principal, session, project, source class and capabilities, set by the host.

The values come from the server process's environment (`DATALOG_MEMORY_*`, with the
reference's `SYMBOLIC_MEMORY_*` names as aliases). Tool arguments never reach them,
so a model cannot widen its own authority."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import PermissionDenied

READ = "memory_read"
WRITE_SESSION = "memory_write_session"
WRITE_PROJECT = "memory_write_project"
WRITE_GLOBAL = "memory_write_global"  # global source memories and global segments (shared by every project)
WRITE_KNOWLEDGE = "memory_write_knowledge"  # facts, rules, assumptions, fact edits, saving snapshots
WRITE_OBSERVATIONS = "memory_write_observations"  # remember and forget_observation
ADMIN = "memory_admin"  # rename, restore, materialize, import, segments and mounts, integrity checks
# What a single local user needs with no configuration: everything but writing what every project shares.
DEFAULT_CAPABILITIES = frozenset({READ, WRITE_SESSION, WRITE_PROJECT, WRITE_KNOWLEDGE, WRITE_OBSERVATIONS, ADMIN})
KNOWN_CAPABILITIES = DEFAULT_CAPABILITIES | {WRITE_GLOBAL}

DEFAULT_PRINCIPAL = "local_mcp"
DEFAULT_SESSION = "mcp-local"
DEFAULT_SOURCE_CLASS = "model_inferred"
TRUSTED_CLASSES = ("user_explicit", "system_verified", "project_verified", "tool_verified",
                   "external_untrusted", "model_inferred")


def _env(environ: Mapping[str, str], name: str) -> str | None:
    """DATALOG_MEMORY_<name>, else SYMBOLIC_MEMORY_<name>; None when unset (for the two names)."""
    for prefix in ("DATALOG_MEMORY_", "SYMBOLIC_MEMORY_"):
        value = environ.get(prefix + name)
        if value is not None:
            return value
    return None


def parse_capabilities(text: str | None) -> frozenset[str]:
    """Comma-separated names; unset means the defaults, an explicitly empty list means none."""
    if text is None:
        return DEFAULT_CAPABILITIES
    return frozenset(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class CallerContext:
    principal: str = DEFAULT_PRINCIPAL
    session_id: str = DEFAULT_SESSION
    project_remote: str | None = None
    source_class: str = DEFAULT_SOURCE_CLASS
    capabilities: frozenset[str] = field(default=DEFAULT_CAPABILITIES)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, principal: str | None = None) -> "CallerContext":
        env = os.environ if environ is None else environ
        return cls(
            principal=principal or _env(env, "PRINCIPAL") or DEFAULT_PRINCIPAL,
            session_id=_env(env, "SESSION_ID") or DEFAULT_SESSION,
            project_remote=_env(env, "PROJECT_REMOTE") or None,
            source_class=_env(env, "SOURCE_CLASS") or DEFAULT_SOURCE_CLASS,
            capabilities=parse_capabilities(_env(env, "CAPABILITIES")),
        )

    @property
    def trust(self) -> str:
        return self.source_class if self.source_class in TRUSTED_CLASSES else "unknown"

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    def require(self, capability: str, what: str) -> None:
        """Refuse (before anything is read or written) unless the caller holds the capability."""
        if capability not in self.capabilities:
            raise PermissionDenied(f"{what} needs the capability {capability}", required_capability=capability)

    def describe(self) -> dict:
        return {"principal": self.principal, "session_id": self.session_id, "project_remote": self.project_remote,
                "source_class": self.source_class, "trust": self.trust, "capabilities": sorted(self.capabilities)}
