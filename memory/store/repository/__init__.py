"""The repository layer: the only code that writes SQL against the core, observation and source-memory tables.

Core tables: segments, facts, supports, rules, audit_log, and those bound to them by segment or fact:
derived, proof_edges, materializations and snapshots. Observation tables (memory/evidence's store): hyperedges
and hyperedge_members (`tx.observations`, and `tx.observation_scans` for reads by time window), entities
(`tx.entities`) and formation_rules (`tx.formations`). Source-memory tables (memory/sources' store): sources,
source_memories and memory_events (`tx.source_memories`), memory_projections (`tx.memory_projections`),
memory_words and search_index_state (`tx.memory_words`), memory_fts (`tx.fulltext`) and memory_vectors
(`tx.vectors`); memory_search's and memory_recall's reads, through a `SearchScope`, are `tx.memory_search`. Domain code opens a `Transaction` with `Repository.read()` or `.write()` and calls typed methods
on its families (`tx.facts`, `tx.rules`, ...) that take and return plain values, dataclasses and tuples; ids come
back from the repository. See
docs/storage.md for the interface and what it needs from a store."""

from .facts import IMPORT_BATCH, new_fact
from .memory_search import FactPattern, SearchScope
from .records import (AuditRow, DerivedRow, EdgeRow, FactListing, FactRow, FormationRule, KeyHolder, MemoryEvent,
                      MemoryListing, NewEntity, NewFact, NewMemory, NewObservation, NewProjection, PredicateState,
                      ProjectedFact, ProjectionRow, RuleRow, Segment, SegmentRecord, SnapshotRow, StoredMemory,
                      StoredObservation, SupportRow, TimelineRow, TokenRow, Visibility, WordOverlap)
from .transaction import Repository, Transaction

__all__ = [
    "IMPORT_BATCH", "AuditRow", "DerivedRow", "EdgeRow", "FactListing", "FactPattern", "FactRow", "FormationRule",
    "KeyHolder", "MemoryEvent", "MemoryListing", "NewEntity", "NewFact", "NewMemory", "NewObservation",
    "NewProjection", "PredicateState", "ProjectedFact", "ProjectionRow", "Repository", "RuleRow", "SearchScope",
    "Segment", "SegmentRecord", "SnapshotRow", "StoredMemory", "StoredObservation", "SupportRow", "TimelineRow",
    "TokenRow", "Transaction", "Visibility", "WordOverlap", "new_fact",
]
