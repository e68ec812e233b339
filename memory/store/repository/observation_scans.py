"""Observations selected by a time window (`hyperedges` and `hyperedge_members`): the candidates recall ranks
and the graph detect scans. Retracted observations are left out; a bound given as None is open. The windows are
typed bounds, so the only SQL is the family's own."""

from __future__ import annotations



def _window(column: str, start: int | None, end: int | None) -> tuple[str, list[int]]:
    """Conditions on `column` (each after an AND) for the half-open window [start, end), and their parameters."""
    sql, params = "", []
    if start is not None:
        sql += f" AND {column} >= ?"
        params.append(start)
    if end is not None:
        sql += f" AND {column} < ?"
        params.append(end)
    return sql, params


class ObservationScans:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- recall's candidates, at most `limit` of each ---------------------------------------------------
    def sharing_entities(self, entity_ids: list[int], start: int | None, end: int | None,
                         limit: int) -> list[tuple[int, int]]:
        """(observation id, how many of `entity_ids` are among its members), most shared first, then newest."""
        bounds, params = _window("h.event_ts", start, end)
        rows = self._conn.execute(
            "SELECT m.edge_id, count(*) FROM hyperedge_members AS m JOIN hyperedges AS h ON h.id = m.edge_id "
            f"WHERE {self._conn.sql.in_list('m.entity_id')} AND h.retracted_at IS NULL{bounds} "
            "GROUP BY m.edge_id ORDER BY count(*) DESC, max(h.event_ts) DESC LIMIT ?",
            [self._conn.sql.listed(entity_ids), *params, limit]).fetchall()
        return [(i, n) for i, n in rows]

    def with_types(self, types: list[str], start: int | None, end: int | None, limit: int) -> list[int]:
        """Ids of the observations with a member of one of `types`, newest first."""
        bounds, params = _window("h.event_ts", start, end)
        rows = self._conn.execute(
            "SELECT m.edge_id FROM hyperedge_members AS m JOIN entities AS e ON e.id = m.entity_id "
            f"JOIN hyperedges AS h ON h.id = m.edge_id WHERE {self._conn.sql.in_list('e.type')} "
            f"AND h.retracted_at IS NULL{bounds} GROUP BY m.edge_id ORDER BY max(h.event_ts) DESC LIMIT ?",
            [self._conn.sql.listed(types), *params, limit]).fetchall()
        return [r[0] for r in rows]

    def newest(self, start: int | None, end: int | None, limit: int) -> list[int]:
        """Ids of the newest observations (ties: the lower id first)."""
        bounds, params = _window("h.event_ts", start, end)
        rows = self._conn.execute(
            f"SELECT h.id FROM hyperedges AS h WHERE h.retracted_at IS NULL{bounds} "
            "ORDER BY h.event_ts DESC, h.id LIMIT ?", [*params, limit]).fetchall()
        return [r[0] for r in rows]

    # --- detect's graph ----------------------------------------------------------------------------------
    def times(self, start: int | None = None, end: int | None = None) -> list[tuple[int, int, str]]:
        """(id, event_ts, formation) of the observations in the window, in no particular order."""
        bounds, params = _window("event_ts", start, end)
        return [(i, ts, f) for i, ts, f in self._conn.execute(
            f"SELECT id, event_ts, formation FROM hyperedges WHERE retracted_at IS NULL{bounds}", params)]

    def members(self) -> list[tuple[int, int]]:
        """(observation id, entity id) of every observation, retracted ones too, by observation and position."""
        return [(e, m) for e, m in self._conn.execute(
            "SELECT edge_id, entity_id FROM hyperedge_members ORDER BY edge_id, position")]

    def event_times(self, start: int, end: int) -> list[int]:
        """When each observation in [start, end) happened, earliest first."""
        return [ts for (ts,) in self._conn.execute(
            "SELECT event_ts FROM hyperedges WHERE retracted_at IS NULL AND event_ts >= ? AND event_ts < ? "
            "ORDER BY event_ts", (start, end))]

    def member_times(self, start: int, end: int) -> list[tuple[int, int]]:
        """(event_ts, entity id) for each member of each observation in [start, end), earliest first."""
        return [(ts, m) for ts, m in self._conn.execute(
            "SELECT h.event_ts, m.entity_id FROM hyperedges AS h JOIN hyperedge_members AS m "
            "ON m.edge_id = h.id WHERE h.retracted_at IS NULL AND h.event_ts >= ? AND h.event_ts < ? "
            "ORDER BY h.event_ts", (start, end))]
