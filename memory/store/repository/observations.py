"""Observations (`hyperedges`, with their members in `hyperedge_members`): written hash-chained, retracted,
read back by id, as the relations rules see, and paged through the `observations` view."""

from __future__ import annotations

import json

from .records import NewObservation, StoredObservation, TimelineRow

_TIMELINE = ("o.hedge_tag, o.event_time, o.event_ts, o.formation, o.label, o.weight, o.members, o.principal, "
             "o.recorded_at, o.retracted_at")


class Observations:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- writing ---------------------------------------------------------------------------------------
    def chain_head(self) -> str:
        """The newest observation's chain hash, the link the next one chains to ('' before the first)."""
        row = self._conn.execute("SELECT chain_hash FROM hyperedges ORDER BY id DESC LIMIT 1").fetchone()
        return row[0] if row else ""

    def next_id(self) -> int:
        return (self._conn.execute("SELECT max(id) FROM hyperedges").fetchone()[0] or 0) + 1

    def add(self, observations: list[NewObservation]) -> None:
        """The observations and then their members, each in the order given."""
        self._conn.insert_rows("hyperedges", ("id", "formation", "label", "event_ts", "weight", "principal", "source",
                                              "recorded_at", "content_hash", "chain_hash"), [o[:10] for o in observations])
        self._conn.insert_rows("hyperedge_members", ("edge_id", "position", "entity_id"),
                               [(o.id, i, m) for o in observations for i, m in enumerate(o.member_ids)])

    def retraction_states(self, ids: list[int]) -> dict[int, str | None]:
        """id -> when it was retracted (None: it was not) for those of `ids` that are stored."""
        return dict(self._conn.execute(f"SELECT id, retracted_at FROM hyperedges WHERE {self._conn.sql.in_list('id')}",
                                       (self._conn.sql.listed(ids),)).fetchall())

    def retract(self, ids: list[int], at: str, reason: str | None) -> None:
        """Marks them retracted at `at`: the rows stay (the chain goes through them)."""
        self._conn.execute(f"UPDATE hyperedges SET retracted_at = ?, retraction_reason = ? "
                           f"WHERE {self._conn.sql.in_list('id')}", (at, reason, self._conn.sql.listed(ids)))

    # --- reading back ----------------------------------------------------------------------------------
    def load(self, ids: list[int] | None = None) -> list[StoredObservation]:
        """Every observation (retracted ones too) or those of `ids` that are stored, by id, with members."""
        if ids is not None and not ids:
            return []
        listed = self._conn.sql.in_list
        edge_filter, member_filter = ("", "") if ids is None else (f"WHERE {listed('id')}", f"WHERE {listed('m.edge_id')}")
        params = [] if ids is None else [self._conn.sql.listed(ids)]
        rows = self._conn.execute(
            f"SELECT id, formation, label, event_ts, weight, content_hash FROM hyperedges {edge_filter} ORDER BY id",
            params).fetchall()
        names: dict[int, list[str]] = {row[0]: [] for row in rows}
        entity_ids: dict[int, list[int]] = {row[0]: [] for row in rows}
        for edge_id, name, entity_id in self._conn.execute(
                f"SELECT m.edge_id, e.name, e.id FROM hyperedge_members AS m JOIN entities AS e ON e.id = m.entity_id "
                f"{member_filter} ORDER BY m.edge_id, m.position", params):
            names[edge_id].append(name)
            entity_ids[edge_id].append(entity_id)
        return [StoredObservation(ident, formation, label, ts, weight, content_hash, tuple(names[ident]),
                                  tuple(entity_ids[ident])) for ident, formation, label, ts, weight, content_hash in rows]

    def times_and_weights(self, ids: list[int]) -> list[tuple[int, int, float]]:
        """(id, event_ts, weight) of those of `ids` that are stored, in no particular order."""
        rows = self._conn.execute(f"SELECT id, event_ts, weight FROM hyperedges WHERE {self._conn.sql.in_list('id')}",
                                  (self._conn.sql.listed(ids),)).fetchall()
        return [(i, ts, w) for i, ts, w in rows]

    # --- as relations (retracted observations left out) --------------------------------------------------
    def hedges(self) -> list[tuple[int, str, int, float]]:
        """(id, formation, event_ts, weight): hedge/4 before its weight becomes an engine value."""
        return [(i, f, ts, w) for i, f, ts, w in self._conn.execute(
            "SELECT id, formation, event_ts, weight FROM hyperedges WHERE retracted_at IS NULL")]

    def memberships(self) -> list[tuple[int, str]]:
        """(observation id, member name): member/2."""
        rows = self._conn.execute("SELECT m.edge_id, e.name FROM hyperedge_members AS m JOIN entities AS e "
                                  "ON e.id = m.entity_id JOIN hyperedges AS h ON h.id = m.edge_id "
                                  "WHERE h.retracted_at IS NULL").fetchall()
        return [(i, n) for i, n in rows]

    def has_hedge(self, edge_id: int | str, formation: int | str, event_ts: int | str) -> bool:
        """Whether hedge(edge_id, formation, event_ts, _) comes from a stored observation (a rule's goal may put
        any value in any place: one of the wrong type matches nothing)."""
        return self._conn.execute("SELECT 1 FROM hyperedges WHERE id = ? AND formation = ? AND event_ts = ? "
                                  "AND retracted_at IS NULL", (edge_id, formation, event_ts)).fetchone() is not None

    def has_member(self, edge_id: int | str, name: int | str) -> bool:
        """Whether member(edge_id, name) comes from a stored observation."""
        return self._conn.execute("SELECT 1 FROM hyperedge_members AS m JOIN entities AS e ON e.id = m.entity_id "
                                  "JOIN hyperedges AS h ON h.id = m.edge_id WHERE m.edge_id = ? AND e.name = ? "
                                  "AND h.retracted_at IS NULL", (edge_id, name)).fetchone() is not None

    # --- the timeline ------------------------------------------------------------------------------------
    def timeline(self, entity: str | None = None, edge_id: int | None = None, limit: int = 50,
                 offset: int = 0) -> tuple[int, list[TimelineRow]]:
        """(how many match, one page of them newest first), retracted ones included: those with `entity` among
        their members and the id `edge_id` when given."""
        conditions: list[str] = ["TRUE"]
        params: list[object] = []
        if entity is not None:
            conditions.append(f"EXISTS (SELECT 1 FROM {self._conn.sql.elements('o.members', 'j')} WHERE j.value = ?)")
            params.append(entity)
        if edge_id is not None:
            conditions.append("o.id = ?")  # by the key, not the view's computed tag
            params.append(edge_id)
        where = " AND ".join(conditions)
        total = self._conn.execute(f"SELECT count(*) FROM observations AS o WHERE {where}", params).fetchone()[0]
        rows = self._conn.execute(
            f"SELECT {_TIMELINE} FROM observations AS o WHERE {where} ORDER BY o.event_ts DESC, o.id DESC "
            "LIMIT ? OFFSET ?", (*params, limit, offset)).fetchall()
        return total, [TimelineRow(tag, time, ts, formation, label, weight, json.loads(members), principal, recorded,
                                   retracted)
                       for tag, time, ts, formation, label, weight, members, principal, recorded, retracted in rows]
