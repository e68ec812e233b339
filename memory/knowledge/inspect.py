"""Read-only views of a knowledge base: schema, overview, dependency tracing, integrity checks."""

from __future__ import annotations

import json
import os

from ..errors import InvalidArguments, NotFound
from ..terms import Compound, Var, format_term, is_ground, parse_term
from ..terms.codec import to_json
from ..validation import require_name, require_text
from .segments import DEFAULT, resolve

OVERVIEW_BUDGET = 64 * 1024


def knowledge_schema(kb, memory: str | None) -> dict:
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        predicates = _predicates(conn, segment.id, kb.visible(conn))
    items = [{"name": name, "arity": arity, "type": kind, "count": count}
             for (name, arity), (kind, count, _, _) in sorted(predicates.items())]
    return {"memory": segment.name, "predicates": items, "total": len(items)}


def _predicates(conn, segment_id: int, visible: tuple[str, list]) -> dict:
    """(name, arity) -> (kind, count, fact count, rule count), over the facts the caller may see."""
    facts = {(n, a): c for n, a, c in conn.execute(
        f"SELECT functor, arity, count(*) FROM facts AS f WHERE segment_id = ? AND {visible[0]} "
        "GROUP BY functor, arity", (segment_id, *visible[1]))}
    rules = {(n, a): c for n, a, c in conn.execute(
        "SELECT head_functor, head_arity, count(*) FROM rules WHERE segment_id = ? GROUP BY head_functor, head_arity",
        (segment_id,))}
    out = {}
    for key in set(facts) | set(rules):
        f, r = facts.get(key, 0), rules.get(key, 0)
        out[key] = ("both" if f and r else "fact" if f else "rule", f + r, f, r)
    return out


def _samples(conn, segment_id: int, name: str, arity: int, size: int, seen: tuple[str, list]) -> list[str]:
    """The first facts of a predicate in the order the caller's supports arrived (a fact row can be older,
    created by a projection the caller cannot see), then rules."""
    if size <= 0:
        return []
    out = [r[0] for r in conn.execute(
        f"SELECT f.text FROM facts AS f JOIN (SELECT s.fact_id, min(s.id) AS first FROM supports AS s "
        f"WHERE {seen[0]} GROUP BY s.fact_id) AS v ON v.fact_id = f.id "
        "WHERE f.segment_id = ? AND f.functor = ? AND f.arity = ? ORDER BY v.first LIMIT ?",
        (*seen[1], segment_id, name, arity, size))]
    if len(out) < size:
        out += [r[0] for r in conn.execute(
            "SELECT text FROM rules WHERE segment_id = ? AND head_functor = ? AND head_arity = ? ORDER BY id LIMIT ?",
            (segment_id, name, arity, size - len(out)))]
    return out


def kb_overview(kb, sample_size: int | None) -> dict:
    """One call: predicates with samples, assumptions, snapshots, persistence, mounts; at most 64 KiB.

    Over budget, samples are halved down to none, then predicates are dropped from the end;
    `truncated` says so and `omitted_predicates` how many went."""
    size = 2 if sample_size is None else max(0, min(50, sample_size))
    with kb.store.read(status=True) as conn:  # a database that cannot be created is reported, not refused
        segment = resolve(conn, DEFAULT)
        visible = kb.visible(conn)
        predicates = sorted(_predicates(conn, segment.id, visible).items())
        seen = kb.seen(conn)
        samples = {key: _samples(conn, segment.id, key[0], key[1], size, seen) for key, _ in predicates}
        assumptions = sorted(r[0] for r in conn.execute(
            "SELECT DISTINCT s.ref FROM supports AS s JOIN facts AS f ON f.id = s.fact_id "
            "WHERE s.kind = 'assumption' AND f.segment_id = ?", (segment.id,)))
        mounts = [{"name": n, "scope": sc, "mode": m} for n, sc, m in conn.execute(
            "SELECT name, scope, mode FROM segments WHERE mounted = 1 ORDER BY name")]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        snapshot_count, = conn.execute("SELECT count(*) FROM snapshots WHERE segment_id = ?", (segment.id,)).fetchone()
        latest = conn.execute("SELECT name, created_at FROM snapshots WHERE segment_id = ? ORDER BY id DESC LIMIT 1",
                              (segment.id,)).fetchone()
        check = conn.execute("SELECT payload FROM audit_log WHERE operation = 'integrity_check' "
                             "ORDER BY id DESC LIMIT 1").fetchone()
    # Healthy: a write could succeed now, and the last integrity check (if any) found nothing.
    healthy = kb.store.writable() is None and (check is None or json.loads(check[0])["result"] == ["ok"])
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
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        visible = kb.visible(conn)
        defined = conn.execute(
            "SELECT 1 FROM rules WHERE segment_id = ? AND head_functor = 'path' AND head_arity = 2 UNION ALL "
            f"SELECT 1 FROM facts AS f WHERE segment_id = ? AND functor = 'path' AND arity = 2 AND {visible[0]} "
            "LIMIT 1", (segment.id, segment.id, *visible[1])).fetchone()
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
    with kb.store.read() as conn:
        segment = resolve(conn, memory)
        visible = kb.visible(conn)
        arities = sorted({r[0] for r in conn.execute(
            "SELECT head_arity FROM rules WHERE segment_id = ? AND head_functor = ? UNION "
            f"SELECT arity FROM facts AS f WHERE segment_id = ? AND functor = ? AND {visible[0]}",
            (segment.id, name, segment.id, name, *visible[1]))})
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
