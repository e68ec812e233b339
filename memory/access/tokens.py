"""Bearer tokens: who a remote caller of `serve --http` is.

A token names a caller exactly as stdio's host environment does (principal, project, source class,
capabilities); the session is the connection's (see memory/http_server.py). Only the sha256 of a token
is stored. A token is `dlm_<id>_<secret>`: the public id finds its row, and the digest of the whole
token is compared in constant time, so neither a lookup nor a comparison tells how close a guess was.
The secret carries 256 random bits: its digest cannot be brute-forced, so no slow hash is needed."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from ..errors import Conflict, InvalidArguments, InvalidConfiguration, NotFound
from ..store.repository import Repository, TokenRow
from ..validation import require_text
from .context import (ADMIN, DEFAULT_CAPABILITIES, DEFAULT_SOURCE_CLASS, KNOWN_CAPABILITIES, TRUSTED_CLASSES,
                      CallerContext)

PREFIX = "dlm_"
ID_HEX = 12  # 48 bits: ids never collide in practice, and a collision is refused by the primary key
MAX_TOKEN_CHARS = 200  # a presented token longer than this is refused before it is hashed
# A remote caller gets what a local user gets, but administration (restore, rename, imports, mounts): that
# is granted explicitly. memory_write_global is never a default, as for stdio.
DEFAULT_TOKEN_CAPABILITIES = DEFAULT_CAPABILITIES - {ADMIN}
_TOKEN = re.compile(rf"^{PREFIX}([0-9a-f]{{{ID_HEX}}})_[A-Za-z0-9_-]{{43}}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


_DUMMY = digest(PREFIX + "0" * ID_HEX + "_" + "0" * 43)  # compared against when no row matches


@dataclass(frozen=True)
class IssuedToken:
    """A token just created: `token` is shown once and never stored."""
    token: str
    row: TokenRow


def _label(argument: str, value: object, max_chars: int, *, slash: bool = True) -> str:
    text = require_text(argument, value, max_chars=max_chars)
    if text != text.strip() or _CONTROL.search(text):
        raise InvalidArguments(f"'{argument}' must not hold control characters or surrounding spaces", argument=argument)
    if not slash and ("/" in text or any(c.isspace() for c in text)):
        # a session namespace is session:<principal>/<session id>: a '/' would make two callers' namespaces meet
        raise InvalidArguments(f"'{argument}' must not hold '/' or spaces", argument=argument)
    return text


def _capabilities(names: list[str] | tuple[str, ...] | frozenset[str] | None) -> frozenset[str]:
    if names is None:
        return DEFAULT_TOKEN_CAPABILITIES
    chosen = frozenset(names)
    unknown = sorted(chosen - KNOWN_CAPABILITIES)
    if unknown:
        raise InvalidArguments(f"unknown capability {unknown[0]!r}; known: {', '.join(sorted(KNOWN_CAPABILITIES))}",
                               argument="capabilities")
    return chosen


class AccessTokens:
    """Creating, listing and revoking tokens (an administrator's work: each needs memory_admin), and
    checking a presented one (the HTTP server's, before any call)."""

    def __init__(self, repository: Repository, context: CallerContext) -> None:
        self.repository = repository
        self.context = context

    def create(self, name: str, principal: str, project_remote: str | None = None,
               capabilities: list[str] | tuple[str, ...] | frozenset[str] | None = None,
               source_class: str = DEFAULT_SOURCE_CLASS) -> IssuedToken:
        self.context.require(ADMIN, "Creating an access token")
        name = _label("name", name, 100)
        principal = _label("principal", principal, 200, slash=False)
        project = None if project_remote is None else _label("project", project_remote, 1000)
        if source_class not in TRUSTED_CLASSES:
            raise InvalidArguments(f"unknown source class {source_class!r}; known: {', '.join(TRUSTED_CLASSES)}",
                                   argument="source_class")
        granted = _capabilities(capabilities)
        token_id = secrets.token_hex(ID_HEX // 2)
        token = f"{PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        with self.repository.write() as tx:
            row = tx.tokens.add(token_id, digest(token), name, principal, project, source_class, tuple(granted),
                                self.context.principal)
            tx.audit.record(self.context.principal, "token_create", None, _described(row))
        return IssuedToken(token, row)

    def list(self) -> list[TokenRow]:
        self.context.require(ADMIN, "Listing access tokens")
        with self.repository.read() as tx:
            return tx.tokens.all()

    def revoke(self, token_id: str) -> TokenRow:
        self.context.require(ADMIN, "Revoking an access token")
        token_id = require_text("id", token_id, max_chars=100)
        with self.repository.write() as tx:
            row = tx.tokens.get(token_id)
            if row is None:
                raise NotFound(f"no access token {token_id!r} (`datalog-memory token list` shows them)", id=token_id)
            if row.revoked_at is not None:
                raise Conflict(f"access token {token_id} was already revoked at {row.revoked_at}", id=token_id)
            row = tx.tokens.revoke(token_id, self.context.principal)
            tx.audit.record(self.context.principal, "token_revoke", None, _described(row))
        return row


def _described(row: TokenRow) -> dict:
    """An audit payload: the token's id and the caller it names, never the token or its digest."""
    return {"id": row.id, "name": row.name, "principal": row.principal, "project_remote": row.project_remote,
            "source_class": row.source_class, "capabilities": list(row.capabilities)}


def active_tokens(repository: Repository) -> int:
    with repository.read() as tx:
        return tx.tokens.active()


def verify(repository: Repository, presented: str) -> TokenRow | None:
    """The valid (not revoked) token `presented` is, or None. Constant time in the secret: the id picks the
    row, and the digests are compared with hmac.compare_digest whether or not a row was found."""
    if not isinstance(presented, str) or len(presented) > MAX_TOKEN_CHARS:
        return None
    shape = _TOKEN.match(presented)
    with repository.read() as tx:
        row = tx.tokens.get(shape.group(1)) if shape else None
    matches = hmac.compare_digest(digest(presented), row.digest if row is not None else _DUMMY)
    if row is None or not matches or row.revoked_at is not None:
        return None
    return row


def caller_of(row: TokenRow, session_id: str) -> CallerContext:
    """The caller a token names, in session `session_id`."""
    return CallerContext(principal=row.principal, session_id=session_id, project_remote=row.project_remote,
                         source_class=row.source_class, capabilities=frozenset(row.capabilities))


def is_loopback(host: str) -> bool:
    """Whether `host` (an address, or the name localhost) is this machine only: nothing else can reach it."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # any other name may resolve to an address others reach


def token_required(repository: Repository, host: str, require_token: bool) -> bool:
    """Whether an HTTP server on `host` requires a token on every request: when asked to, when it listens
    beyond loopback, or when any token exists (once an administrator issued tokens, callers present them).
    Refused (InvalidConfiguration) when one is required and none is valid: nobody could call it."""
    active = active_tokens(repository)
    required = require_token or not is_loopback(host) or active > 0
    if required and active == 0:
        why = "--require-token was given" if require_token else f"{host} is not a loopback address"
        raise InvalidConfiguration(
            f"a token is required ({why}) but the database has no valid access token: create one first with "
            "`datalog-memory token create --name NAME --principal PRINCIPAL`", host=host)
    return required
