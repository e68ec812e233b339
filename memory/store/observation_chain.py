"""The tamper-evident chain of observations: each row's content hash and the chain over them, recomputed by
the invariant check. The citation tag of an observation (HEDGE-n) is its row id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass


def hedge_tag(edge_id: int) -> str:
    return f"HEDGE-{edge_id}"


def observation_hash(members: list[str], event_ts: int, weight: float, formation: str, label: str) -> str:
    """sha256 of the canonical observation: what `content_hash` holds."""
    content = json.dumps({"members": members, "event_ts": event_ts, "weight": weight, "formation": formation,
                          "label": label}, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def chain_hash(previous: str, content_hash: str) -> str:
    """The next link of the tamper-evident chain ('' before the first observation)."""
    return hashlib.sha256((previous + content_hash).encode("ascii")).hexdigest()


@dataclass
class ChainBreak:
    id: int
    reason: str  # content (the row no longer matches its content_hash) or chain (a link does not follow)


def verify_chain(conn, batch: int = 10_000) -> tuple[int, list[ChainBreak]]:
    """Recompute every observation's content hash and the chain over them, in id order: (rows checked,
    the rows where it breaks). Retracted observations stay in the chain."""
    breaks: list[ChainBreak] = []
    previous, checked, last_id = "", 0, 0
    while True:
        rows = conn.execute("SELECT id, formation, label, event_ts, weight, content_hash, chain_hash FROM hyperedges "
                            "WHERE id > ? ORDER BY id LIMIT ?", (last_id, batch)).fetchall()
        if not rows:
            return checked, breaks
        members: dict = {}
        for edge_id, name in conn.execute(
                "SELECT m.edge_id, e.name FROM hyperedge_members AS m JOIN entities AS e ON e.id = m.entity_id "
                "WHERE m.edge_id BETWEEN ? AND ? ORDER BY m.edge_id, m.position", (rows[0][0], rows[-1][0])):
            members.setdefault(edge_id, []).append(name)
        for edge_id, formation, label, event_ts, weight, content, chain in rows:
            if observation_hash(members.get(edge_id, []), event_ts, weight, formation, label) != content:
                breaks.append(ChainBreak(edge_id, "content"))
            if chain_hash(previous, content) != chain:
                breaks.append(ChainBreak(edge_id, "chain"))
            previous = chain
            checked += 1
        last_id = rows[-1][0]
