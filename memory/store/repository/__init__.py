"""The repository layer: the only code that writes SQL against the core tables and the observation tables.

Core tables: segments, facts, supports, rules, audit_log, and those bound to them by segment or fact:
derived, proof_edges, materializations and snapshots. Observation tables (memory/evidence's store): hyperedges
and hyperedge_members (`tx.observations`, and `tx.observation_scans` for reads by time window), entities
(`tx.entities`) and formation_rules (`tx.formations`). Domain code opens a `Transaction` with
`Repository.read()` or `.write()` and calls typed methods on its families (`tx.facts`, `tx.rules`, ...)
that take and return plain values, dataclasses and tuples; ids come back from the repository. See
docs/storage.md for the interface and what it needs from a store."""

from .facts import IMPORT_BATCH, new_fact
from .records import (AuditRow, DerivedRow, EdgeRow, FactListing, FactRow, FormationRule, NewEntity, NewFact,
                      NewObservation, PredicateState, RuleRow, Segment, SegmentRecord, SnapshotRow, StoredObservation,
                      SupportRow, TimelineRow, TokenRow, Visibility)
from .transaction import Repository, Transaction

__all__ = [
    "IMPORT_BATCH", "AuditRow", "DerivedRow", "EdgeRow", "FactListing", "FactRow", "FormationRule", "NewEntity",
    "NewFact", "NewObservation", "PredicateState", "Repository", "RuleRow", "Segment", "SegmentRecord", "SnapshotRow",
    "StoredObservation", "SupportRow", "TimelineRow", "TokenRow", "Transaction", "Visibility", "new_fact",
]
