"""Observations: hyperedges linking entities at a point in time, stored with provenance.

Each observation is a row of `hyperedges` with its members in `hyperedge_members`;
its structural formation comes from the `formation_rules` table over the member
types (the `type:id` prefix). Rules see observations as three relations of the
default segment: hedge(E, Formation, Ts, Weight), member(E, Entity) and
entity_type(Entity, Type)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..clock import epoch_now
from ..errors import InvalidArguments, NotFound
from ..knowledge.segments import bump_generation, resolve
from ..access.context import CallerContext
from ..store import utc_now
from ..store.observation_chain import chain_hash, hedge_tag, observation_hash
from ..store.repository import NewEntity, NewObservation, Repository, Transaction
from ..terms import Float
from ..validation import require_text

TABLE = "MEMORY"
DEFAULT_FORMATION = "OBSERVATION"
MAX_MEMBERS = 64
MAX_ENTITY_CHARS = 256
MAX_LABEL_CHARS = 128
RELATIONS = {("hedge", 4), ("member", 2), ("entity_type", 2)}
MAX_RETRACT = 1000
FIRST_SECOND, LAST_SECOND = -62_135_596_800, 253_402_300_799  # 0001-01-01 .. 9999-12-31, UTC
TAG = re.compile(r"^HEDGE-[1-9][0-9]{0,17}$")


def entity_type(name: str) -> str:
    head, sep, _ = name.partition(":")
    return head.lower() if sep and head and head.replace("_", "").replace("-", "").isalnum() else "entity"


def local_name(name: str) -> str:
    head, sep, rest = name.partition(":")
    return (rest if sep and entity_type(name) != "entity" else name).lower()


@dataclass
class Edge:
    id: int
    formation: str
    label: str
    event_ts: int
    weight: float
    content_hash: str
    members: list[str] = field(default_factory=list)
    member_ids: list[int] = field(default_factory=list)

    @property
    def tag(self) -> str:
        return hedge_tag(self.id)

    def to_dict(self) -> dict:
        return {"id": self.id, "hedge_tag": self.tag, "formation": self.formation, "label": self.label,
                "timestamp": self.event_ts, "weight": self.weight, "members": self.members,
                "member_ids": self.member_ids, "member_types": [entity_type(m) for m in self.members],
                "content_hash": self.content_hash}


@dataclass(frozen=True)
class Observation:
    members: tuple[str, ...]
    event_ts: int
    weight: float
    label: str


def check_observation(members: object, event_ts: object = None, weight: object = 1.0, formation: object = "", *,
                      now: int, where: str = "") -> Observation:
    """`now` (epoch seconds, from the store's clock) times an observation given no `event_ts`."""
    if not isinstance(members, list) or not members or len(members) > MAX_MEMBERS:
        raise InvalidArguments(f"{where}'members' must be a list of 1 to {MAX_MEMBERS} entity names",
                               argument="members")
    names: list[str] = []
    for m in members:
        if not isinstance(m, str) or not m.strip() or len(m) > MAX_ENTITY_CHARS or "\x00" in m:
            raise InvalidArguments(f"{where}each member must be a non-empty name of at most {MAX_ENTITY_CHARS} "
                                   "characters", argument="members")
        name = m.strip()
        if name not in names:
            names.append(name)
    if event_ts is None:
        ts = now
    elif isinstance(event_ts, bool) or not isinstance(event_ts, (int, float)) or not math.isfinite(event_ts) \
            or event_ts != int(event_ts) or not FIRST_SECOND <= event_ts <= LAST_SECOND:
        raise InvalidArguments(f"{where}'event_ts' must be whole epoch seconds from year 1 to 9999",
                               argument="event_ts")
    else:
        ts = int(event_ts)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight <= 1:
        raise InvalidArguments(f"{where}'weight' must be a number in (0, 1]", argument="weight")
    if not isinstance(formation, str) or len(formation) > MAX_LABEL_CHARS or "\x00" in formation:
        raise InvalidArguments(f"{where}'formation' must be a label of at most {MAX_LABEL_CHARS} characters",
                               argument="formation")
    return Observation(tuple(names), ts, float(weight), formation.strip())


def infer_formation(rules: list[tuple[str, list[str]]], types: set[str]) -> str:
    for formation, required in rules:
        if set(required) <= types:
            return formation
    return DEFAULT_FORMATION


class Observations:
    """The evidence store over one database, for one caller."""

    def __init__(self, repository: Repository, context: CallerContext) -> None:
        self.repository = repository
        self.context = context

    def remember(self, members: object, event_ts: object = None, weight: object = 1.0, formation: object = "") -> dict:
        observation = check_observation(members, event_ts, weight, formation, now=epoch_now(self.repository.clock))
        with self.repository.write() as tx:
            edge = self._insert(tx, [observation])[0]
            tx.audit.record(self.context.principal, "remember", None, {
                "edge_id": edge.id, "formation": edge.formation, "members": edge.members,
                "event_ts": edge.event_ts, "content_hash": edge.content_hash})
        return {"stored": True, "table": TABLE, "id": edge.id, "hedge_tag": edge.tag, "event_ts": edge.event_ts,
                "formation": observation.label, "structural_formation": edge.formation, "weight": edge.weight,
                "members": edge.members, "member_ids": edge.member_ids, "member_types":
                [entity_type(m) for m in edge.members], "source": self.context.source_class,
                "principal": self.context.principal, "content_hash": edge.content_hash}

    def remember_many(self, observations: list[dict], chunk: int = 10_000) -> dict:
        """Many observations in one transaction (all or nothing) with one audit row."""
        now = epoch_now(self.repository.clock)
        checked = [check_observation(o.get("members"), o.get("event_ts"), o.get("weight", 1.0),
                                     o.get("formation", ""), now=now, where=f"observation {i}: ")
                   if isinstance(o, dict) else check_observation(None, now=now, where=f"observation {i}: ")
                   for i, o in enumerate(observations)]
        if not checked:
            return {"stored": 0, "first_id": None, "last_id": None}
        with self.repository.write() as tx:
            first = last = None
            for start in range(0, len(checked), chunk):
                edges = self._insert(tx, checked[start:start + chunk])
                first = first if first is not None else edges[0].id
                last = edges[-1].id
            tx.audit.record(self.context.principal, "remember_observations", None,
                            {"count": len(checked), "first_id": first, "last_id": last})
        return {"stored": len(checked), "first_id": first, "last_id": last}

    def forget(self, hedge_tags: object, reason: str | None = None) -> dict:
        """Retract observations by tag: they stay stored (and hash-chained) but recall, reasoning, proofs and
        detect no longer use them. All or nothing; retracting one twice changes nothing."""
        if not isinstance(hedge_tags, list) or not 1 <= len(hedge_tags) <= MAX_RETRACT or not all(
                isinstance(t, str) and TAG.match(t) for t in hedge_tags):
            raise InvalidArguments(f"'hedge_tags' must be a list of 1 to {MAX_RETRACT} tags like HEDGE-12",
                                   argument="hedge_tags")
        if reason is not None:
            reason = require_text("reason", reason, max_chars=4096)
        ids = list(dict.fromkeys(int(t[6:]) for t in hedge_tags))
        with self.repository.write() as tx:
            rows = tx.observations.retraction_states(ids)
            missing = [hedge_tag(i) for i in ids if i not in rows]
            if missing:
                raise NotFound(f"No observation {', '.join(missing)}", hedge_tags=missing)
            fresh = [i for i in ids if rows[i] is None]
            if fresh:
                tx.observations.retract(fresh, utc_now(tx.clock), reason)
                bump_generation(tx, resolve(tx, None))
                tx.audit.record(self.context.principal, "forget_observation", None,
                                {"hedge_tags": [hedge_tag(i) for i in fresh], "reason": reason})
        return {"retracted": [hedge_tag(i) for i in fresh], "already_retracted": [hedge_tag(i) for i in ids
                                                                                  if i not in fresh],
                "reason": reason}

    def formation_rules(self) -> list[tuple[str, list[str], str]]:
        """(formation, member types that give it, what that means), first match wins: how remember infers an
        observation's structural formation."""
        with self.repository.read() as tx:
            return [(r.formation, r.member_types, r.description) for r in tx.formations.rules()]

    def _insert(self, tx: Transaction, observations: list[Observation]) -> list[Edge]:
        rules = [(rule.formation, rule.member_types) for rule in tx.formations.rules()]
        chain = tx.observations.chain_head()
        names = list(dict.fromkeys(n for o in observations for n in o.members))  # first appearance: stable ids
        ids = self._entity_ids(tx, names)
        recorded = utc_now(tx.clock)
        edges: list[Edge] = []
        rows: list[NewObservation] = []
        next_id = tx.observations.next_id()
        for o in observations:
            formation = infer_formation(rules, {entity_type(m) for m in o.members})
            content_hash = observation_hash(list(o.members), o.event_ts, o.weight, formation, o.label)
            chain = chain_hash(chain, content_hash)
            edge = Edge(next_id, formation, o.label, o.event_ts, o.weight, content_hash, list(o.members),
                        [ids[m] for m in o.members])
            rows.append(NewObservation(edge.id, formation, o.label, o.event_ts, o.weight, self.context.principal,
                                       self.context.source_class, recorded, content_hash, chain,
                                       tuple(edge.member_ids)))
            edges.append(edge)
            next_id += 1
        tx.observations.add(rows)
        # Rules see observations through the default segment: its cached relations must refresh.
        bump_generation(tx, resolve(tx, None))
        return edges

    @staticmethod
    def _entity_ids(tx: Transaction, names: list[str]) -> dict[str, int]:
        """Ids for entity names, creating the missing ones in the order given."""
        ids = tx.entities.ids_of(names)
        missing = [n for n in names if n not in ids]
        if missing:
            tx.entities.add([NewEntity(n, entity_type(n), local_name(n)) for n in missing])
            ids.update(tx.entities.ids_of(missing))
        return ids


def load_edges(tx: Transaction, ids: list[int] | None = None) -> list[Edge]:
    """Edges with their members, all of them or the given ids (in the given order)."""
    edges = {r.id: Edge(r.id, r.formation, r.label, r.event_ts, r.weight, r.content_hash, list(r.members),
                        list(r.member_ids)) for r in tx.observations.load(ids)}
    return list(edges.values()) if ids is None else [edges[i] for i in ids if i in edges]


def relation_tuples(tx: Transaction, pred: tuple, edges: list[Edge] | None = None) -> list[tuple]:
    """The observation relations as engine tuples, over all edges or the given ones."""
    if edges is None:
        if pred == ("hedge", 4):
            return [(i, f, ts, Float(w)) for i, f, ts, w in tx.observations.hedges()]
        if pred == ("member", 2):
            return tx.observations.memberships()
        return tx.entities.names_and_types()
    if pred == ("hedge", 4):
        return [(e.id, e.formation, e.event_ts, Float(e.weight)) for e in edges]
    if pred == ("member", 2):
        return [(e.id, m) for e in edges for m in e.members]
    return list({(m, entity_type(m)) for e in edges for m in e.members})


class ObservationRelations:
    """hedge/4, member/2 and entity_type/2 for the knowledge base, computed from the observation tables."""

    preds = RELATIONS

    @staticmethod
    def tuples(tx: Transaction, pred: tuple) -> list[tuple]:
        return relation_tuples(tx, pred)

    @staticmethod
    def supports(tx: Transaction, pred: tuple, args: tuple) -> list[str]:
        """`observation:HEDGE-<id>` when the tuple comes from a stored observation."""
        if pred == ("entity_type", 2):
            if not all(type(a) is str for a in args):
                return []
            return ["observation"] if tx.entities.exists(*args) else []
        if not all(type(a) in (int, str) for a in args[:3]):
            return []
        if pred == ("hedge", 4):
            found = tx.observations.has_hedge(*args[:3])
        else:
            found = tx.observations.has_member(*args)
        return [f"observation:{hedge_tag(args[0])}"] if found else []
