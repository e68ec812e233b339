"""Deterministic recall of observations: entities and a time window parsed out of the query, then ranked.

Entities are `type:id` tokens and bare names that match a stored entity (by name or
by the part after the colon, case-folded); a word naming a known type ("drones")
filters by type (entity names match case-insensitively); the time window comes from `timewindow` (an
impossible or ambiguous date, a reversed range or a negative duration is an invalid_arguments error,
never "all time"). A time phrase it could not read, whole or in part ("not yesterday", "before last
week", "10:00 PST", "next week"), is never answered for all time: recall abstains with the reason
`time_not_understood: …` and the words in `parsed.time_not_understood`, and reason, prove and verify
refuse the query. Every other word that is not a stop word is echoed in `parsed.unparsed`: it had no
effect on the answer. Score = 0.6·overlap + 0.25·weight + 0.15·recency, where overlap
is the share of the query's entities among the edge's members and recency is
exp(−age/τ) with τ the window's span (7 days without one). Ties go to the lower id.
The same query and `now` always give the same answer."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..clock import Clock, epoch_now
from ..errors import InvalidArguments
from ..store.repository import Transaction
from .observations import FIRST_SECOND, LAST_SECOND, Edge, load_edges
from .limits import MAX_QUERY_CHARS, MAX_TOP_K
from .timewindow import TIME_WORDS, Window, parse_window

CANDIDATES = 5000
WEEK = 7 * 86_400
W_OVERLAP, W_WEIGHT, W_RECENCY = 0.6, 0.25, 0.15
TYPED = re.compile(r"(?<![\w:])([A-Za-z][\w-]*:[^\s,;()\[\]{}\"'`]+)")
_WORD = re.compile(r"[\w][\w.@-]*")
_ADDRESS = re.compile(r"\d+(?:\.\d+){2,}")  # 10.0.0.5 is an address, not a time
STOPWORDS = frozenset("a an and are as at be by did do does for from has have how in is it its last of on or "
                      "past since the their there these this to was were what when where which who why with".split())


@dataclass
class Parsed:
    entities: list[str] = field(default_factory=list)
    entity_ids: list[int] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    window: Window | None = None
    unparsed: list[str] = field(default_factory=list)
    time_not_understood: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"entities": self.entities, "unknown_entities": self.unknown, "types": self.types,
                "window": self.window.to_dict() if self.window else None, "unparsed": self.unparsed,
                "time_not_understood": self.time_not_understood}


def check_now(now: object, clock: Clock) -> int:
    """The caller's `now` (whole epoch seconds), or the clock's when none is given."""
    if now is None:
        return epoch_now(clock)
    if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now) or now != int(now) \
            or not FIRST_SECOND <= now <= LAST_SECOND:
        raise InvalidArguments("'now' must be whole epoch seconds from year 1 to 9999", argument="now")
    return int(now)


def check_top_k(top_k: object, default: int) -> int:
    top_k = default if top_k is None else top_k
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidArguments(f"'top_k' must be an integer from 1 to {MAX_TOP_K}", argument="top_k")
    return top_k


def parse_query(tx: Transaction, query: str, now: int) -> Parsed:
    window, rest = parse_window(query, now)
    parsed = Parsed(window=window)
    typed = typed_tokens(rest)
    rest = TYPED.sub(" ", rest)
    every = [w.rstrip(".").lower() for w in _WORD.findall(rest)]
    words = list(every)
    words = [w for w in dict.fromkeys(words) if len(w) > 1 and w not in STOPWORDS]
    found: dict[str, int] = {}
    if typed:
        found.update(tx.entities.named([t.lower() for t in typed]))  # account:Mallory is account:mallory
        named = {n.lower() for n in found}
        parsed.unknown = [t for t in dict.fromkeys(typed) if t.lower() not in named]
    if words:
        for name, ident in known_names(tx, words).items():
            found.setdefault(name, ident)
        types = tx.entities.types()
        named = {n.lower() for n in found} | {n.lower().split(":", 1)[-1] for n in found}
        for w in words:
            understood = w in named
            for candidate in (w, w[:-1] if w.endswith("s") else None, w[:-2] if w.endswith("es") else None):
                if candidate is not None and candidate in types:
                    understood = True
                    if candidate not in parsed.types:
                        parsed.types.append(candidate)
            if not understood:
                parsed.unparsed.append(w)  # said back, so a caller sees what had no effect on the answer
    parsed.entities = list(found)
    parsed.entity_ids = list(found.values())
    # What is left that still speaks of time (a word of TIME_WORDS, a number, 10am, mid-2025) was misread or not
    # read at all: said back, and never answered for all time. A stored entity's name ("db01") is not time.
    known = {n.lower() for n in found} | {n.lower().split(":", 1)[-1] for n in found}
    parsed.time_not_understood = list(dict.fromkeys(
        part for w in every if w not in known and not _ADDRESS.fullmatch(w) for part in word_parts(w)
        if part in TIME_WORDS or part[0].isdigit()))
    return parsed


def word_parts(word: str) -> list[str]:
    """A query word's parts, where a time may hide in one ("10-day", "5/3", "mid.2025")."""
    return [part for part in re.split(r"[-/.]", word) if part]


def typed_tokens(text: str) -> list[str]:
    """The `type:id` entity names written in a text, without trailing sentence punctuation."""
    return [t.rstrip(".!?:") for t in TYPED.findall(text)]


def known_names(tx: Transaction, words: list[str]) -> dict[str, int]:
    """Stored entities that lower-cased words name, whole or by the part after the colon: name -> id."""
    found: dict[str, int] = {}
    for name, ident in tx.entities.named(words) + tx.entities.named_locally(words):
        found.setdefault(name, ident)
    return found


def recall(tx: Transaction, query: str, top_k: int | None = None, now: object = None) -> dict:
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
        raise InvalidArguments(f"'query' must be text of at most {MAX_QUERY_CHARS} characters", argument="query")
    top_k = check_top_k(top_k, 20)
    moment = check_now(now, tx.clock)
    parsed = parse_query(tx, query, moment)
    start, end = (parsed.window.start, parsed.window.end) if parsed.window is not None else (None, None)
    scans = tx.observation_scans
    overlap: dict[int, int] = {}
    reason = None
    if parsed.time_not_understood:
        reason = f"time_not_understood: {' '.join(parsed.time_not_understood)}"
    elif parsed.entity_ids:
        overlap = dict(scans.sharing_entities(parsed.entity_ids, start, end, CANDIDATES))
    elif parsed.types:
        overlap = {i: 1 for i in scans.with_types(parsed.types, start, end, CANDIDATES)}
    elif parsed.window is not None or not query.strip():
        overlap = {i: 1 for i in scans.newest(start, end, CANDIDATES)}
    else:
        reason = f"unknown_entity:{parsed.unknown[0]}" if parsed.unknown else "no_entity"
    if not overlap and reason is None:
        reason = "no_edges_in_window" if parsed.window is not None else "no_edges"
    wanted = max(1, len(parsed.entity_ids))
    tau = (parsed.window.span if parsed.window and parsed.window.span else WEEK) or WEEK
    facts = tx.observations.times_and_weights(list(overlap)) if overlap else []
    scored = []
    for edge_id, ts, weight in facts:
        share = min(1.0, overlap[edge_id] / wanted) if parsed.entity_ids else 1.0
        recency = math.exp(-max(0, moment - ts) / tau)
        scored.append((round(W_OVERLAP * share + W_WEIGHT * weight + W_RECENCY * recency, 9), edge_id))
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[:top_k]
    edges = load_edges(tx, [edge_id for _, edge_id in top])
    chosen = set(parsed.entities)
    out_edges = []
    for rank, (edge, (score, _)) in enumerate(zip(edges, top)):
        item = {"edge_idx": rank, **edge.to_dict(), "score": score,
                "matched": [m for m in edge.members if m in chosen]}
        out_edges.append(item)
    return {"query": query, "now": moment, "parsed": parsed.to_dict(), "count": len(out_edges),
            "total": len(scored), "truncated": len(scored) > len(out_edges), "edges": out_edges,
            "abstained": not out_edges, "reason": reason if not out_edges else None}


def edges_for(tx: Transaction, query: str, top_k: int, now: object = None) -> list[Edge]:
    """The edges a query is about: recall's top edges; an empty query means the most recent ones."""
    found = recall(tx, query, top_k, now)
    if found["parsed"]["time_not_understood"]:
        raise InvalidArguments(f"the query's time phrase was not understood ({found['reason']}): write it as a "
                               "date, a range or 'last N days'", argument="query",
                               phrase=" ".join(found["parsed"]["time_not_understood"]))
    ids = [e["id"] for e in found["edges"]]
    return load_edges(tx, ids)
