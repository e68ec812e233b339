"""The rows the repository hands out and takes in: plain dataclasses and tuples, nothing of the store's own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class Segment:
    """A mounted memory segment as the tools see it."""
    id: int
    name: str
    mode: str
    generation: int
    scope: str = "project"  # 'global': a mount record here; the data lives in the global database


@dataclass(frozen=True)
class SegmentRecord:
    """Any row of `segments`, mounted or not (what mount and unmount decide on)."""
    id: int
    name: str
    scope: str
    mode: str
    mounted: bool


@dataclass(frozen=True)
class Visibility:
    """Which supports a caller may see: every support except the projections of source memories (kind
    'source') whose memory is in a namespace not listed. `None` in its place means every support is visible.
    A fact is visible when one of its supports is."""
    namespaces: tuple[str, ...]


class NewFact(NamedTuple):
    """A fact ready to store: `new_fact(term)` builds it (a CSV import's plain rows come straight from their
    cells: memory/knowledge/parsing.py plain_row)."""
    functor: str
    arity: int
    text: str
    args: str  # the arguments in the store's encoding


class PredicateState(NamedTuple):
    """Where a predicate's facts stand in the change feed (migration 0008): a copy read in this state is
    current while all three stay the same; when only `newest` grew, the copy lacks just the rows above the
    newest id it read."""
    reshaped: int  # change number of the last change that was more than new rows (0: none yet)
    vacated: int  # change number of the last time one of the segment's predicates lost its last fact
    newest: int  # the highest fact id of the predicate (0: no facts)


class FactRow(NamedTuple):
    id: int
    text: str
    args: tuple  # decoded engine values


class FactListing(NamedTuple):
    """One line of list_facts: the time of the caller's first support and its supports in order."""
    id: int
    text: str
    created_at: str | None
    supports: list[str]


class SupportRow(NamedTuple):
    id: int
    kind: str
    ref: str


class RuleRow(NamedTuple):
    id: int
    text: str
    head_functor: str
    head_arity: int
    created_at: str
    name: str | None
    confidence: float


class DerivedRow(NamedTuple):
    """A conclusion for `derived`; `id` None lets the store assign one."""
    id: int | None
    segment_id: int
    functor: str
    arity: int
    text: str
    args: tuple  # engine values
    rule_id: int | None
    stamp: int
    generation: int


class EdgeRow(NamedTuple):
    """One premise of a conclusion for `proof_edges`. The premise's stored fact is named by its segment and
    text (the store finds its id); `observation_id` is kept only when that observation exists."""
    conclusion_id: int
    position: int
    kind: str
    premise: str
    memory: str | None
    fact_segment_id: int | None
    fact_text: str | None
    derived_id: int | None
    observation_id: int | None
    generation: int


class SnapshotRow(NamedTuple):
    name: str
    created_at: str
    facts: int
    rules: int
    assumptions: int


class AuditRow(NamedTuple):
    at: str
    payload: dict


@dataclass(frozen=True)
class TokenRow:
    """A bearer token's row: never the token, only its sha256 `digest`."""
    id: str
    digest: str
    name: str
    principal: str
    project_remote: str | None
    source_class: str
    capabilities: tuple[str, ...]
    created_at: str
    created_by: str
    revoked_at: str | None
    revoked_by: str | None


class NewEntity(NamedTuple):
    """An entity to store: its name as given, the type before its colon and the folded rest recall looks up."""
    name: str
    type: str
    local_name: str


class FormationRule(NamedTuple):
    """A row of `formation_rules`: the formation an observation gets when all `member_types` are among its
    members' types (the lowest priority that matches wins)."""
    formation: str
    member_types: list[str]
    description: str


class NewObservation(NamedTuple):
    """A row of `hyperedges` to write, with its members' entity ids in order (rows of `hyperedge_members`).
    The id and hashes come from the caller, which chains them in order."""
    id: int
    formation: str
    label: str
    event_ts: int
    weight: float
    principal: str
    source: str
    recorded_at: str
    content_hash: str
    chain_hash: str
    member_ids: tuple[int, ...]


class StoredObservation(NamedTuple):
    """An observation read back with its members (names and entity ids) in the order given."""
    id: int
    formation: str
    label: str
    event_ts: int
    weight: float
    content_hash: str
    members: tuple[str, ...]
    member_ids: tuple[int, ...]


class TimelineRow(NamedTuple):
    """One line of the `observations` view as the timeline pages it; `members` decoded from its JSON."""
    hedge_tag: str
    event_time: str
    event_ts: int
    formation: str
    label: str
    weight: float
    members: list[str]
    principal: str
    recorded_at: str
    retracted_at: str | None


# --- source memories (memory/sources) -------------------------------------------------------------------
@dataclass(frozen=True)
class StoredMemory:
    """A row of `source_memories` with its source (`sources`): the columns of `source_memories.COLUMNS`, in
    that order (the source-memory package's MemoryRecord adds what it derives from them)."""
    seq: int
    id: str
    source_id: str
    namespace: str
    lifetime: str
    kind: str
    status: str
    superseded_by: str | None
    idempotency_key: str | None
    principal: str
    valid_from: str
    valid_to: str | None
    recorded_at: str
    version: int
    text: str | None  # None once erased
    sha256: str  # '' once erased
    source_class: str
    trust: str
    source_created_at: str
    erased_at: str | None


@dataclass(frozen=True)
class NewMemory:
    """A memory to store: its source row (`sources`) and its row of `source_memories`, stamped `now`."""
    source_id: str
    memory_id: str
    text: str
    sha256: str
    principal: str
    source_class: str
    trust: str
    namespace: str
    lifetime: str
    kind: str
    idempotency_key: str | None
    valid_from: str
    valid_to: str | None
    now: str
    text_words: int
    statement_words: int


@dataclass(frozen=True)
class MemoryListing:
    """One line of the browsable list of memories."""
    id: str
    kind: str
    recorded_at: str


@dataclass(frozen=True)
class MemoryEvent:
    """One lifecycle change of a memory (`memory_events`)."""
    at: str
    status: str
    reason: str | None
    principal: str


@dataclass(frozen=True)
class NewProjection:
    """A projection to store (`memory_projections`); `arguments` are JSON scalars."""
    id: str
    memory_id: str
    position: int
    predicate: str
    arguments: list
    statement: str
    quality: str
    fact: str
    created_at: str


@dataclass(frozen=True)
class ProjectionRow:
    """A stored projection, its arguments decoded from their JSON."""
    id: str
    predicate: str
    arguments: list
    statement: str | None  # None once erased
    quality: str
    fact: str
    created_at: str


@dataclass(frozen=True)
class ProjectedFact:
    """A projection's fact and quality, with the memory it belongs to."""
    memory: StoredMemory
    fact: str
    quality: str


@dataclass(frozen=True)
class KeyHolder:
    """A projection sharing a predicate and a fact-text range with another, and its memory's id, namespace and
    text (what a contradiction is reported with)."""
    seq: int
    memory_id: str
    namespace: str
    text: str | None
    arguments: list
    fact: str


@dataclass(frozen=True)
class WordOverlap:
    """How much of a set of words a memory's text holds: `shared` of them, out of its `size` distinct words
    (counted up to a cap)."""
    seq: int
    memory_id: str
    namespace: str
    source_id: str
    shared: int
    size: int
