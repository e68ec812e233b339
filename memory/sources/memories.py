"""Source memories: remember exact text under a stable id, get it back, forget it.

Every write is one transaction with its audit row (actor = the caller's principal).
A memory the caller may not read is reported exactly like one that does not exist,
so ids cannot be probed across namespaces."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

from ..clock import parse_instant
from ..errors import Conflict, InvalidArguments, NotFound, PermissionDenied
from ..knowledge.proof_view import ProofStep
from ..knowledge.segments import bump_generation, resolve
from ..store import utc_now
from ..store.repository import NewMemory, NewProjection, Repository, StoredMemory, Transaction, new_fact
from ..validation import require_text
from ..access.context import READ, CallerContext
from ..access.namespaces import CAPABILITY, Namespace, new_id, readable_namespaces, require_write, write_namespace
from .erasure import erase_memory
from ..access.visibility import visibility
from .projections import Projection, parse_projections
from .related import find_related
from .reindex import analyzer_tag
from .semantic import after_write
from .words import count_words

MAX_SOURCE_CHARS = 1_000_000
MAX_KEY_CHARS = 256
MAX_IDS = 200
FORGET_LISTED = 20  # memories a forget by query lists by default
RETENTION = {"session": "short_term", "short_term": "short_term", "long_term": "long_term", "durable": "long_term"}
KINDS = ("text", "fact", "episode", "preference", "procedure")
ACTIONS = {"expire": "expired", "supersede": "superseded", "invalidate": "invalidated", "archive": "archived",
           "delete": "deleted"}
SUPPORT_KIND = "source"


@dataclass(frozen=True)
class MemoryRecord(StoredMemory):
    """A stored memory (its fields in the order of the store's COLUMNS), with its namespace as a value."""

    @classmethod
    def of(cls, stored: StoredMemory) -> "MemoryRecord":
        """The stored row as a record."""
        return cls(**vars(stored))

    @property
    def ns(self) -> Namespace:
        return Namespace.from_key(self.namespace)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def status_at(conn, record: "MemoryRecord", at: str | None) -> str:
    """The memory's status now (as loaded) or at an earlier time (from its lifecycle events)."""
    if at is None:
        return record.status
    return Transaction(conn).source_memories.status_at(record.id, at) or "unrecorded"


def check_instant(argument: str, value: object) -> str | None:
    return None if value is None else parse_instant(argument, value)


class SourceMemories:
    """The source-memory service over one store, for one caller."""

    def __init__(self, repository: Repository, context: CallerContext) -> None:
        self.repository = repository
        self.store = repository.store
        self.context = context

    # --- reading -------------------------------------------------------------------------
    def require_read(self) -> None:
        if not self.context.can(READ):
            raise PermissionDenied(f"Reading memories needs the capability {READ}", required_capability=READ)

    @staticmethod
    def not_found(ident: object) -> NotFound:
        # One message for unknown and invisible ids alike: no existence oracle.
        return NotFound(f"existence_error(memory, {ident}): no memory with this id is visible to the caller",
                        id=ident if isinstance(ident, str) else None)

    def visible_record(self, conn, ident: object, at: str | None = None,
                       spaces: list[str] | None = None) -> MemoryRecord:
        """The memory if the caller may read it (`spaces`: its readable namespaces, when already known)."""
        if not isinstance(ident, str) or not ident.startswith("mem_") or len(ident) > 64:
            raise self.not_found(ident)
        stored = Transaction(conn).source_memories.by_id(ident)
        if stored is None:
            raise self.not_found(ident)
        record = MemoryRecord.of(stored)
        if spaces is None:
            spaces = readable_namespaces(conn, self.context)
        if record.namespace not in spaces:
            raise self.not_found(ident)
        if at and record.recorded_at > at:  # the caller may read it now: saying when it came leaks nothing
            raise NotFound(f"existence_error(memory, {ident}): it was recorded at {record.recorded_at}, after as_of "
                           f"{at}, so it did not exist then; omit as_of to read it as it is now", id=ident)
        return record

    def get(self, ident: str, as_of: str | None = None) -> dict:
        at = check_instant("as_of", as_of)
        self.require_read()
        with self.store.read() as conn:
            record = self.visible_record(conn, ident, at)
            return self.describe(conn, record, at, full=True)

    def listing(self, offset: int, limit: int) -> list[dict]:
        """The caller's current memories (id, kind, recorded_at), oldest first, one page: what it may browse."""
        self.require_read()
        now = utc_now(self.store.clock)
        with self.repository.read() as tx:
            spaces = readable_namespaces(tx.connection, self.context)
            rows = tx.source_memories.current_page(now, spaces, limit, offset)
        return [asdict(r) for r in rows]

    def describe(self, conn, record: MemoryRecord, at: str | None, full: bool = False,
                 moment: str | None = None) -> dict:
        """`moment`: the instant the answer is about when the caller has read the clock already (at or now)."""
        status = status_at(conn, record, at)
        moment = moment or at or utc_now(conn.clock)
        valid = record.valid_from <= moment and (record.valid_to is None or record.valid_to > moment)
        out: dict[str, Any] = {
            "id": record.id, "source_id": record.source_id, "namespace": record.ns.to_dict(),
            "kind": record.kind, "lifetime": record.lifetime, "status": status, "lifecycle": status,
            "current": status == "active" and valid, "recorded_at": record.recorded_at,
            "valid_from": record.valid_from, "valid_to": record.valid_to,
            "superseded_by": record.superseded_by if status == "superseded" else None,
        }
        if not full:
            return out
        tx = Transaction(conn)
        # The records' fields are the reply's keys, in its order.
        projections = [asdict(p) for p in tx.memory_projections.of(record.id)]
        history = [asdict(e) for e in tx.source_memories.history(record.id, moment)]
        out.update({
            "source_text": record.text, "sha256": record.sha256 or None, "erased": record.erased_at is not None,
            "provenance": {"source_class": record.source_class, "metadata": {}},
            "principal": record.principal, "trust": record.trust, "created_at": record.recorded_at,
            "source_created_at": record.source_created_at, "version": record.version,
            "projections": projections, "history": history, "supersedes": tx.source_memories.superseded_by(record.id), "as_of": at,
            "model_calls": 0,
        })
        return out

    def annotate_proof(self, proof: ProofStep) -> None:
        """Lead a proof's leaves back to their memories: each `source:mem_…` support the caller may read gets
        the memory's id, namespace, status and exact text; ones it may not read are dropped."""
        with self.store.read() as conn:
            spaces = readable_namespaces(conn, self.context) if self.context.can(READ) else []
            for step in proof.walk():
                supports = step.supports
                if not supports or not any(s.startswith(SUPPORT_KIND + ":") for s in supports):
                    continue
                kept, memories = [], []
                for support in supports:
                    kind, _, ident = support.partition(":")
                    if kind == SUPPORT_KIND:
                        try:
                            record = self.visible_record(conn, ident, spaces=spaces)
                        except NotFound:
                            continue
                        memories.append({"id": record.id, "namespace": record.ns.to_dict(), "status": record.status,
                                         "source_text": record.text})
                    kept.append(support)
                step.supports = kept
                step.memories = memories

    # --- remembering -----------------------------------------------------------------------
    def remember(self, memory: str, scope: str = "auto", retention: str = "long_term", kind: str = "text",
                 projections: list | None = None, idempotency_key: str | None = None,
                 supersedes: list | None = None, valid_from: str | None = None, valid_to: str | None = None) -> dict:
        text = require_text("memory", memory, max_chars=MAX_SOURCE_CHARS)
        if retention not in RETENTION:
            raise InvalidArguments(f"'retention' must be one of {', '.join(RETENTION)}", argument="retention")
        kind = "text" if kind == "auto" else kind
        if kind not in KINDS:
            raise InvalidArguments(f"'kind' must be auto or one of {', '.join(KINDS)}", argument="kind")
        specs = parse_projections(projections)
        key = None if idempotency_key is None else require_text("idempotency_key", idempotency_key,
                                                                max_chars=MAX_KEY_CHARS)
        replaced = self._check_ids("supersedes", supersedes or [], allow_empty=True)
        start, end = check_instant("valid_from", valid_from), check_instant("valid_to", valid_to)
        if start and end and end <= start:
            raise InvalidArguments("'valid_to' must be after 'valid_from'", argument="valid_to")
        digest = sha256(text)
        with self.repository.write() as tx:
            conn = tx.connection  # what the namespace lookups (memory/access) take; every row goes through tx
            namespace, capability = write_namespace(conn, self.context, scope)
            if key is not None:
                receipt = self._replay(tx, namespace, key, digest)
                if receipt is not None:
                    exclude = {receipt["id"], *receipt["supersedes"]}
                    return {**receipt, **find_related(conn, self.context, text, specs, utc_now(conn.clock),
                                                      exclude).to_dict()}
            olds = [self._writable(conn, ident) for ident in replaced]
            for old in olds:
                if old.status != "active":
                    raise Conflict(f"Memory {old.id} cannot be superseded: it is {old.status}", id=old.id)
            now = utc_now(conn.clock)
            # Read before the new rows exist, in the same transaction: reported, never superseded here.
            related = find_related(conn, self.context, text, specs, now, set(replaced))
            source_id, memory_id = new_id("src"), new_id("mem")
            statements = "\n".join(p.statement for p in specs)
            words = count_words(text, statements)
            seq = tx.source_memories.add(NewMemory(
                source_id=source_id, memory_id=memory_id, text=text, sha256=digest, principal=self.context.principal,
                source_class=self.context.source_class, trust=self.context.trust, namespace=namespace.key,
                lifetime=RETENTION[retention], kind=kind, idempotency_key=key, valid_from=start or now, valid_to=end,
                now=now, text_words=words.text_words, statement_words=words.statement_words))
            self._event(tx, memory_id, now, "active", None)
            self._project(tx, memory_id, specs, now)
            tx.fulltext.add(seq, text, statements)
            tx.memory_words.add(seq, words.occurrences)
            # A new store's first terms name their analyzer, so no search re-indexes what this one just wrote.
            tx.memory_words.name_analyzer(analyzer_tag())
            withdrawn = []
            for old in olds:
                withdrawn += self._end(tx, old, "superseded", f"superseded by {memory_id}", now, memory_id)
            receipt = self._receipt(tx, self._record(tx, memory_id), replay=False)
            # Ids and counts only: no text, digest, key or fact of a memory that may be erased later.
            tx.audit.record(self.context.principal, "memory_remember", None, {
                "id": memory_id, "source_id": source_id, "namespace": namespace.key, "capability": capability,
                "projections": len(specs), "supersedes": replaced, "idempotency_key_given": key is not None,
                "withdrawn_facts": len(withdrawn)})
        after_write(self.repository, self.context.principal)  # its vector comes after the acknowledgement
        return {**receipt, **related.to_dict()}

    def _replay(self, tx: Transaction, namespace: Namespace, key: str, digest: str) -> dict | None:
        stored = tx.source_memories.by_key(namespace.key, key)
        if stored is None:
            return None
        first = MemoryRecord.of(stored)
        if first.sha256 != digest:
            raise Conflict(f"Idempotency key {key!r} was already used for a different text", idempotency_key=key,
                           id=first.id)
        return self._receipt(tx, first, replay=True)

    @staticmethod
    def _record(tx: Transaction, ident: str) -> MemoryRecord:
        stored = tx.source_memories.by_id(ident)
        assert stored is not None, ident  # written in this transaction
        return MemoryRecord.of(stored)

    def _receipt(self, tx: Transaction, record: MemoryRecord, replay: bool) -> dict:
        """What remember returns, for a new memory and for a retry that finds it again alike."""
        projections = tx.memory_projections.facts(record.id)
        return {
            "status": "stored", "id": record.id, "source_id": record.source_id, "namespace": record.ns.to_dict(),
            "durable": True, "version": record.version, "sha256": record.sha256, "recorded_at": record.recorded_at,
            "valid_from": record.valid_from, "valid_to": record.valid_to,
            "projection_status": "stored" if projections else "not_attempted",
            "projection_ids": [p for p, _ in projections], "facts": [f for _, f in projections],
            "supersedes": tx.source_memories.superseded_by(record.id), "idempotent_replay": replay, "model_calls": 0,
        }

    def _project(self, tx: Transaction, memory_id: str, specs: list[Projection], now: str) -> None:
        """Store the projections and make each a fact supported by the memory."""
        if not specs:
            return
        segment = resolve(tx, None, write=True)
        for position, spec in enumerate(specs):
            tx.memory_projections.add(NewProjection(new_id("proj"), memory_id, position, spec.predicate, spec.arguments,
                                                    spec.statement, spec.quality, spec.fact, now))
            tx.facts.support(segment.id, new_fact(spec.term), SUPPORT_KIND, memory_id, self.context.principal)
        # Which facts a caller sees depends on the memories behind them, so any change of support counts.
        bump_generation(tx, segment)

    def _event(self, tx: Transaction, memory_id: str, at: str, status: str, reason: str | None) -> None:
        tx.source_memories.add_event(memory_id, at, status, reason, self.context.principal)

    def _end(self, tx: Transaction, record: MemoryRecord, status: str, reason: str | None, now: str,
             successor: str | None = None) -> list[str]:
        """Move a memory out of 'active' (or between ended states); its projections stop supporting facts.
        Returns the facts that lost their last support."""
        tx.source_memories.end(record.id, status, successor, now)
        self._event(tx, record.id, now, status, reason)
        segment = resolve(tx, None)
        removed, _ = tx.supports.withdraw(segment.id, SUPPORT_KIND, record.id, visibility(tx, self.context))
        bump_generation(tx, segment)
        return removed

    def guard_projections(self, tx: Transaction, memory_ids: list[str], what: str) -> None:
        """Refuse rewriting the projections of these memories unless the caller may write their namespaces."""
        for ident in dict.fromkeys(memory_ids):
            namespace = Namespace.from_key(self.visible_record(tx.connection, ident).namespace)
            capability = CAPABILITY[namespace.type]
            if not self.context.can(capability):
                raise PermissionDenied(f"{what} would rewrite projections of {namespace.type} memories, which needs "
                                       f"the capability {capability}", required_capability=capability)

    def _writable(self, conn, ident: str) -> MemoryRecord:
        record = self.visible_record(conn, ident)
        require_write(self.context, record.ns)
        return record

    @staticmethod
    def _check_ids(argument: str, ids: object, allow_empty: bool = False) -> list[str]:
        if not isinstance(ids, list) or len(ids) > MAX_IDS or (not ids and not allow_empty):
            raise InvalidArguments(f"'{argument}' must be a list of 1 to {MAX_IDS} memory ids", argument=argument)
        if not all(isinstance(i, str) for i in ids):
            raise InvalidArguments(f"'{argument}' must hold memory ids (strings)", argument=argument)
        return list(dict.fromkeys(ids))

    # --- forgetting ------------------------------------------------------------------------
    def forget(self, ids: list | None = None, query: str | None = None, action: str = "expire",
               reason: str | None = None, erase: bool = False, dry_run: bool = False, limit: int = FORGET_LISTED,
               superseded_by: str | None = None) -> dict:
        """Forget concrete ids. A query never forgets: it previews the current memories a search finds (those
        the caller may change, and what was cut), and forgetting is then by the ids it returned."""
        if (ids is None) == (query is None):
            raise InvalidArguments("give exactly one of 'ids' or 'query'", argument="ids")
        if action not in ACTIONS:
            raise InvalidArguments(f"'action' must be one of {', '.join(ACTIONS)}", argument="action")
        if erase and action != "delete":
            raise InvalidArguments("'erase' is only allowed with action 'delete'", argument="erase")
        if superseded_by is not None and (action != "supersede" or query is not None):
            raise InvalidArguments("'superseded_by' is only allowed with ids and action 'supersede'",
                                   argument="superseded_by")
        if reason is not None:
            reason = require_text("reason", reason, max_chars=4096)
        self.require_read()
        if query is not None:
            return self._preview_query(query, action, erase, limit)
        targets = self._check_ids("ids", ids)
        if superseded_by is not None and superseded_by in targets:
            raise InvalidArguments("a memory cannot supersede itself: take its id out of 'ids' or "
                                   "'superseded_by'", argument="superseded_by")
        status = ACTIONS[action]
        with (self.repository.read() if dry_run else self.repository.write()) as tx:
            conn = tx.connection
            successor = None if superseded_by is None else self.visible_record(conn, superseded_by)
            if successor is not None and successor.status != "active":
                raise Conflict(f"Memory {successor.id} cannot supersede others: it is {successor.status}",
                               id=successor.id)
            records = [self._writable(conn, ident) for ident in targets]
            changes = [{"id": r.id, "namespace": r.ns.to_dict(), "status_before": r.status,
                        "status_after": status, "changed": r.status != status or (erase and r.erased_at is None),
                        "preview": (r.text or "")[:200]} for r in records]
            removed: list[str] = []
            if not dry_run and any(c["changed"] for c in changes):
                now = utc_now(conn.clock)
                why = reason if reason is not None or successor is None else f"superseded by {successor.id}"
                for record in records:
                    if record.status != status:
                        removed += self._end(tx, record, status, why, now, successor.id if successor else None)
                    if erase and record.erased_at is None:
                        erase_memory(tx, record, now, self.context.principal)
                # The tombstone of an erase: what happened, to which ids, by whom (the actor) and when. Never
                # the query or the facts' texts, which may spell out what was erased.
                tx.audit.record(self.context.principal, "memory_forget", None, {
                    "action": action, "ids": [c["id"] for c in changes if c["changed"]], "reason": reason,
                    "erase": erase, "by_query": False, "removed_facts": len(removed),
                    **({"superseded_by": successor.id} if successor is not None else {})})
        scrubbed = None
        if erase and not dry_run and any(c["changed"] for c in changes):
            scrubbed = self.store.scrub()
        return {"action": action, "dry_run": dry_run, "query": None, "targets": changes,
                "forgotten": 0 if dry_run else sum(c["changed"] for c in changes), "removed_facts": removed,
                "erased": erase and not dry_run, "model_calls": 0,
                **({"superseded_by": successor.id} if successor is not None else {}),
                **({"wal_truncated": scrubbed} if scrubbed is not None else {})}

    def _preview_query(self, query: str, action: str, erase: bool, limit: int) -> dict:
        """What forgetting by a description would take: the current memories one search finds, split into those
        the caller may change (the targets, to confirm by id) and those it may read but not change."""
        from .search import search  # search builds on this module

        found = search(self, query, limit=limit)
        status = ACTIONS[action]
        targets, skipped = [], []
        for result in found["results"]:
            namespace = result["namespace"]
            capability = CAPABILITY[namespace["type"]]
            if not self.context.can(capability):
                skipped.append({"id": result["id"], "namespace": namespace, "needs": capability})
                continue
            targets.append({"id": result["id"], "namespace": namespace, "status_before": result["status"],
                            "status_after": status, "changed": True, "preview": result["memory"][:200],
                            "why": result["why"]})
        return {"action": action, "dry_run": True, "query": query, "targets": targets, "skipped": skipped,
                "matched": found["total"], "truncated": found["truncated"],
                "confirm": {"ids": [t["id"] for t in targets], "action": action, **({"erase": True} if erase else {})},
                "forgotten": 0, "removed_facts": [], "erased": False, "model_calls": 0}
