"""Derived conclusions (`derived`), the premises of their derivations (`proof_edges`) and the last
materialization of each segment (`materializations`): a cache of what the rules conclude, stamped with
the segment generation it was computed from."""

from __future__ import annotations

from typing import Iterable

from ...terms.codec import encode_args
from ...clock import utc_now
from ..dialect import insert_into
from .records import DerivedRow, EdgeRow

_EDGE_SQL = (
    "INSERT INTO proof_edges (conclusion_id, position, kind, premise, memory, fact_id, derived_id, observation_id, "
    "generation) VALUES (?, ?, ?, ?, ?, (SELECT id FROM facts WHERE segment_id = ? AND text = ?), ?, "
    "(SELECT id FROM hyperedges WHERE id = ?), ?)"
)
_DERIVED_COLUMNS = ("id", "segment_id", "functor", "arity", "text", "args", "rule_id", "stamp", "generation")


def _derived_params(row: DerivedRow) -> tuple:
    return (row.id, row.segment_id, row.functor, row.arity, row.text, encode_args(row.args), row.rule_id, row.stamp,
            row.generation)


class Derived:
    def __init__(self, conn) -> None:
        self._conn = conn

    def next_id(self) -> int:
        """The first id of a batch of new conclusions (the caller numbers the batch itself, so the premises
        can name their conclusions without looking them up)."""
        return self._conn.execute("SELECT coalesce(max(id), 0) + 1 FROM derived").fetchone()[0]

    def clear(self, segment_id: int) -> None:
        self._conn.execute("DELETE FROM derived WHERE segment_id = ?", (segment_id,))

    def clear_everywhere(self) -> None:
        """Drop every conclusion of every segment (only `materialize` rebuilds them)."""
        self._conn.execute("DELETE FROM derived")

    def add_many(self, rows: Iterable[DerivedRow]) -> None:
        """Insert conclusions with the ids they carry."""
        self._conn.insert_rows("derived", _DERIVED_COLUMNS, [_derived_params(row) for row in rows])

    def add(self, row: DerivedRow) -> int:
        """Insert one conclusion; returns its id (a new one when the row carries none: the id column is left
        out, since PostgreSQL's identity column refuses an explicit NULL that SQLite would number)."""
        columns: tuple[str, ...] = _DERIVED_COLUMNS
        params = _derived_params(row)
        if row.id is None:
            columns, params = columns[1:], params[1:]
        return self._conn.execute(insert_into("derived", columns) + " RETURNING id", params).fetchall()[0][0]

    def find(self, segment_id: int, text: str) -> tuple[int, int] | None:
        """(id, generation) of a segment's conclusion with this text."""
        return self._conn.execute("SELECT id, generation FROM derived WHERE segment_id = ? AND text = ?",
                                  (segment_id, text)).fetchone()

    def restamp(self, derived_id: int, rule_id: int | None, stamp: int, generation: int) -> None:
        """A stale conclusion takes a new derivation: its edges go, its row keeps its id."""
        self._conn.execute("DELETE FROM proof_edges WHERE conclusion_id = ?", (derived_id,))
        self._conn.execute("UPDATE derived SET rule_id = ?, stamp = ?, generation = ? WHERE id = ?",
                           (rule_id, stamp, generation, derived_id))

    def add_edges(self, rows: Iterable[EdgeRow]) -> None:
        self._conn.executemany(_EDGE_SQL, rows)

    def record_materialization(self, segment_id: int, generation: int, tuples: int, seconds: float) -> None:
        self._conn.execute(
            "INSERT INTO materializations (segment_id, generation, materialized_at, tuples, seconds) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (segment_id) DO UPDATE SET generation = excluded.generation, "
            "materialized_at = excluded.materialized_at, tuples = excluded.tuples, seconds = excluded.seconds",
            (segment_id, generation, utc_now(self._conn.clock), tuples, seconds),
        )
