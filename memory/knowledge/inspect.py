"""Read-only views of a knowledge base: schema, overview, dependency tracing, integrity checks."""

from __future__ import annotations

import json
import os

from ..errors import InvalidArguments, NotFound
from ..store.repository import Transaction, Visibility
from ..terms import Compound, Var, format_term, is_ground, parse_term
from ..terms.codec import to_json
from ..validation import require_name, require_text
from .segments import DEFAULT, resolve

OVERVIEW_BUDGET = 64 * 1024


def knowledge_schema(kb, memory: str | None) -> dict:
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        predicates = _predicates(tx, segment.id, kb.visibility(tx))
    items = [{"name": name, "arity": arity, "type": kind, "count": count}
             for (name, arity), (kind, count, _, _) in sorted(predicates.items())]
    return {"memory": segment.name, "predicates": items, "total": len(items)}


def _predicates(tx: Transaction, segment_id: int, seen: Visibility | None) -> dict:
    """(name, arity) -> (kind, count, fact count, rule count), over the facts the caller may see."""
    facts = tx.facts.predicates(segment_id, seen)
    rules = tx.rules.head_counts(segment_id)
    out = {}
    for key in set(facts) | set(rules):
        f, r = facts.get(key, 0), rules.get(key, 0)
        out[key] = ("both" if f and r else "fact" if f else "rule", f + r, f, r)
    return out


def _samples(tx: Transaction, segment_id: int, name: str, arity: int, size: int,
             seen: Visibility | None) -> list[str]:
    """The first facts of a predicate in the order the caller's supports arrived, then rules."""
    if size <= 0:
        return []
    out = tx.facts.first_texts(segment_id, name, arity, size, seen)
    if len(out) < size:
        out += tx.rules.texts_with_head(segment_id, name, arity, size - len(out))
    return out


def kb_overview(kb, sample_size: int | None) -> dict:
    """One call: predicates with samples, assumptions, snapshots, persistence, mounts; at most 64 KiB.

    Over budget, samples are halved down to none, then predicates are dropped from the end;
    `truncated` says so and `omitted_predicates` how many went."""
    size = 2 if sample_size is None else max(0, min(50, sample_size))
    with kb.repository.read(status=True) as tx:  # a database that cannot be created is reported, not refused
        segment = resolve(tx, DEFAULT)
        seen = kb.visibility(tx)
        predicates = sorted(_predicates(tx, segment.id, seen).items())
        samples = {key: _samples(tx, segment.id, key[0], key[1], size, seen) for key, _ in predicates}
        assumptions = sorted(tx.supports.refs(segment.id, "assumption"))
        mounts = [{"name": s.name, "scope": s.scope, "mode": s.mode} for s in tx.segments.all_mounted()]
        page_size = tx.page_size()
        snapshots = tx.snapshots.of(segment.id)
        snapshot_count = len(snapshots)
        latest = (snapshots[-1].name, snapshots[-1].created_at) if snapshots else None
        check = tx.audit.last("integrity_check")
    # Healthy: a write could succeed now, and the last integrity check (if any) found nothing.
    healthy = kb.store.writable() is None and (check is None or check.payload["result"] == ["ok"])
    wal = kb.store.path + "-wal"
    wal_frames = os.path.getsize(wal) // (page_size + 24) if os.path.exists(wal) else 0

    def build(per_predicate: int, keep: int) -> dict:
        return {
            "predicates": [
                {"functor": name, "arity": arity, "kind": kind, "count": count,
                 "samples": samples[(name, arity)][:per_predicate]}
                for (name, arity), (kind, count, _, _) in predicates[:keep]
            ],
            "assumptions": {"count": len(assumptions), "names": assumptions},
            "snapshots": {"count": snapshot_count, "latest": latest[0] if latest else None,
                          "latest_at": latest[1] if latest else None},
            "persistence": {"wal_pending": wal_frames, "healthy": healthy},
            "mounts": {"available": True, "count": len(mounts), "items": mounts},
            "truncated": per_predicate < size or keep < len(predicates),
        }

    def fits(view: dict) -> bool:
        return len(json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) <= OVERVIEW_BUDGET

    per, keep = size, len(predicates)
    view = build(per, keep)
    while not fits(view) and per > 0:
        per //= 2
        view = build(per, keep)
    if not fits(view):
        low, high = 0, keep  # the most predicates that still fit
        while low < high:
            middle = (low + high + 1) // 2
            if fits(build(0, middle)):
                low = middle
            else:
                high = middle - 1
        keep = low
        view = build(0, keep)
        view["omitted_predicates"] = len(predicates) - keep
    return view


def _value(term):
    """A result value: atoms and numbers as JSON, anything else as its canonical text."""
    encoded = to_json(term)
    return encoded if isinstance(encoded, (str, int, float)) else format_term(term)


def trace_dependency(kb, start_node: str, memory: str | None) -> dict:
    node = parse_term(require_text("start_node", start_node, max_chars=4096))
    if not is_ground(node):
        raise InvalidArguments("'start_node' must be a ground term such as module_a", argument="start_node")
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        defined = 2 in tx.rules.head_arities(segment.id, "path") or \
            tx.facts.exists(segment.id, "path", 2, kb.visibility(tx))
    if not defined:
        raise NotFound(
            f"path/2 is not defined in memory '{segment.name}': define it first, "
            "e.g. path(X, Y) :- depends_on(X, Y). path(X, Z) :- depends_on(X, Y), path(Y, Z).",
            memory=segment.name,
        )
    goal = format_term(Compound("path", (node, Var("Node"))))
    answers = kb.query_terms(goal, segment.name)
    nodes = [_value(row[0]) for row in answers.rows]
    return {"start_node": format_term(node), "memory": segment.name, "nodes": nodes, "total": len(nodes)}


def verify_consistency(kb, scope: str | None, memory: str | None) -> dict:
    if scope is not None:
        require_name("scope", scope)
    name = "integrity_violation" if scope is None else f"integrity_violation_{scope}"
    with kb.repository.read() as tx:
        segment = resolve(tx, memory)
        arities = sorted(set(tx.rules.head_arities(segment.id, name)) | tx.facts.arities(segment.id, name,
                                                                                        kb.visibility(tx)))
    violations, details = [], []
    for arity in arities:
        variables = [Var(f"V{i}") for i in range(arity)]
        goal = format_term(Compound(name, tuple(variables)) if arity else name)
        for row in kb.query_terms(goal, segment.name).rows:
            term = Compound(name, row) if arity else name
            violations.append(_value(row[0]) if arity == 1 else format_term(term))
            details.append({"predicate": f"{name}/{arity}", "violation": format_term(term)})
    return {"violations": violations, "memory": segment.name, "checked": [f"{name}/{a}" for a in arities],
            "details": details, "total": len(violations)}
