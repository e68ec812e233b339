"""Namespaces of source memories: which one a write goes to, which ones a caller may read.

A namespace key is 'session:<principal>/<session id>', 'project:<project id>' or 'global'.
A session belongs to its principal: two principals that set the same session id
have two sessions (the principal is escaped: '%', '/' and ':' as %25, %2F, %3A).
Projects are rows keyed by a normalized remote; resolving one for reading never
creates it, and `auto` never falls back to global."""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass

from ..errors import InvalidArguments, NotFound, PermissionDenied
from ..store.repository import Transaction
from .context import WRITE_GLOBAL, WRITE_PROJECT, WRITE_SESSION, CallerContext

SCOPES = ("auto", "session", "project", "global")
READ_SCOPES = ("all_visible", "current", "session", "project", "global")
RANK = {"session": 1, "project": 2, "global": 3}
CAPABILITY = {"session": WRITE_SESSION, "project": WRITE_PROJECT, "global": WRITE_GLOBAL}

_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?([^/:]+):(?!//)(.+)$")
_URL = re.compile(r"^([a-z][a-z0-9+.-]*)://(?:[^@/]+@)?([^/:]+)(?::\d+)?(/.*)?$", re.I)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4()}"


def normalize_remote(remote: str) -> str:
    """One spelling per repository: `git@host:o/r.git`, `ssh://git@host:22/o/r`, `http(s)://host/o/r/`
    all become `https://host/o/r`; anything else is a path, made absolute."""
    text = remote.strip()
    url = _URL.match(text)
    scp = None if url else _SCP_LIKE.match(text)
    if url and url.group(1).lower() != "file":
        host, path = url.group(2).lower(), url.group(3) or ""
    elif scp and not os.path.isabs(text):
        host, path = scp.group(1).lower(), "/" + scp.group(2).lstrip("/")
    else:
        path = url.group(3) if url else text
        return os.path.normpath(os.path.abspath(os.path.expanduser(path or "/")))
    while True:
        stripped = path.rstrip("/")
        stripped = stripped[:-4] if stripped.endswith(".git") else stripped
        if stripped == path:
            break
        path = stripped
    return f"https://{host}{path}"


def escape_principal(principal: str) -> str:
    """The principal as it appears in a session key (migration 0006 escapes the same three characters)."""
    return principal.replace("%", "%25").replace("/", "%2F").replace(":", "%3A")


def unescape_principal(text: str) -> str:
    return text.replace("%3A", ":").replace("%2F", "/").replace("%25", "%")


@dataclass(frozen=True)
class Namespace:
    type: str  # session | project | global
    id: str | None = None
    principal: str | None = None  # the owner of a session namespace

    @property
    def key(self) -> str:
        if self.type == "session":
            return f"session:{escape_principal(self.principal or '')}/{self.id}"
        return self.type if self.id is None else f"{self.type}:{self.id}"

    @classmethod
    def from_key(cls, key: str) -> "Namespace":
        kind, _, ident = key.partition(":")
        if kind == "session":
            owner, _, session = ident.partition("/")
            return cls(kind, session, unescape_principal(owner))
        return cls(kind, ident or None)

    @classmethod
    def session(cls, context: CallerContext) -> "Namespace":
        return cls("session", context.session_id, context.principal)

    def to_dict(self) -> dict:
        return {"type": self.type} if self.id is None else {"type": self.type, "id": self.id}

    @property
    def rank(self) -> int:
        return RANK[self.type]


def project_id(conn, context: CallerContext, create: bool = False) -> str | None:
    """The project of the caller's remote; created on a write when missing, never on a read."""
    if not context.project_remote:
        return None
    remote = normalize_remote(context.project_remote)
    projects = Transaction(conn).projects  # conn: the open transaction's connection
    found = projects.of_remote(remote)
    if found is not None or not create:
        return found
    ident = new_id("project")
    projects.add(ident, remote)
    return ident


def check_scope(scope: object, allowed: tuple[str, ...], argument: str = "scope") -> str:
    if scope not in allowed:
        raise InvalidArguments(f"'{argument}' must be one of {', '.join(allowed)}", argument=argument)
    return scope


def write_namespace(conn, context: CallerContext, scope: str) -> tuple[Namespace, str]:
    """Where a remember goes and the capability it used. The capability is checked before the project row
    is created, so a refused remember writes nothing."""
    scope = check_scope(scope, SCOPES)
    if scope == "auto":
        scope = "project" if context.project_remote else "session"
    if scope == "project" and not context.project_remote:
        raise NotFound("No project context: this caller has no project (over stdio the host sets "
                       "DATALOG_MEMORY_PROJECT_REMOTE; over HTTP its token names one: token create --project); "
                       "remember with scope session or global instead", reason="no_project_context")
    capability = require_write(context, Namespace(scope))
    if scope == "global":
        return Namespace("global"), capability
    if scope == "session":
        return Namespace.session(context), capability
    return Namespace("project", project_id(conn, context, create=True)), capability


def require_write(context: CallerContext, namespace: Namespace) -> str:
    capability = CAPABILITY[namespace.type]
    if not context.can(capability):
        raise PermissionDenied(f"Writing {namespace.type} memories needs the capability {capability}",
                               required_capability=capability, namespace=namespace.type)
    return capability


def readable_namespaces(conn, context: CallerContext, scope: str = "all_visible") -> list[str]:
    """The namespace keys a read may look in: the caller's session, its project (if the store knows it) and
    global, narrowed by `scope` ('current' is where an `auto` remember would write)."""
    scope = check_scope(scope, READ_SCOPES)
    project = project_id(conn, context)
    keys = {"session": [Namespace.session(context).key],
            "project": [f"project:{project}"] if project else [],
            "global": ["global"]}
    if scope == "current":
        scope = "project" if context.project_remote else "session"
    if scope == "all_visible":
        return keys["session"] + keys["project"] + keys["global"]
    return keys[scope]
