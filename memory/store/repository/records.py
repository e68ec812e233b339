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
