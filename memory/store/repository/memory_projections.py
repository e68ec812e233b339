"""The symbolic projections of source memories (`memory_projections`): each also a fact of the default segment
supported by its memory (the facts and supports go through `tx.facts` and `tx.supports`). Their search keys
(`memory_projection_keys`) are kept by triggers."""

from __future__ import annotations

import json

from .records import KeyHolder, NewProjection, ProjectedFact, ProjectionRow, StoredMemory
from .source_memories import COLUMNS, FROM, marks, settled, visible_now


class MemoryProjections:
    def __init__(self, conn) -> None:
        self._conn = conn

    def add(self, new: NewProjection) -> None:
        """Store one projection of a memory."""
        self._conn.execute(
            "INSERT INTO memory_projections (id, memory_id, position, predicate, arguments, statement, quality, "
            "fact, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (new.id, new.memory_id, new.position, new.predicate, json.dumps(new.arguments, ensure_ascii=False),
             new.statement, new.quality, new.fact, new.created_at))

    def of(self, memory_id: str) -> list[ProjectionRow]:
        """The memory's projections, in the order given."""
        return [ProjectionRow(p, pred, json.loads(args), st, q, f, c) for p, pred, args, st, q, f, c in self._conn.execute(
            "SELECT id, predicate, arguments, statement, quality, fact, created_at FROM memory_projections "
            "WHERE memory_id = ? ORDER BY position", (memory_id,))]

    def facts(self, memory_id: str) -> list[tuple[str, str]]:
        """(id, fact) of the memory's projections, in the order given."""
        return [(p, f) for p, f in self._conn.execute(
            "SELECT id, fact FROM memory_projections WHERE memory_id = ? ORDER BY position", (memory_id,)).fetchall()]

    def lossy(self, memory_ids: list[str]) -> set[str]:
        """Those of `memory_ids` with a projection that is lossy or needs context."""
        return {r[0] for r in self._conn.execute(
            "SELECT DISTINCT memory_id FROM memory_projections WHERE quality <> 'exact' "
            f"AND {self._conn.sql.in_list('memory_id')}", (self._conn.sql.listed(memory_ids),))}

    def settled_facts(self, namespaces: list[str], at: str) -> list[ProjectedFact]:
        """The projections with a fact of the memories in `namespaces` that were current at `at` (a moment before
        now), each with its memory: by memory, then in the order given."""
        where, params = settled(at, past=True)
        rows = self._conn.execute(
            f"SELECT {COLUMNS}, p.fact, p.quality FROM {FROM} JOIN memory_projections AS p ON p.memory_id = m.id "
            f"WHERE m.namespace IN ({marks(namespaces)}) AND {where} AND p.fact IS NOT NULL "
            "ORDER BY m.seq, p.position", [*namespaces, *params]).fetchall()
        return [ProjectedFact(StoredMemory(*row[:-2]), row[-2], row[-1]) for row in rows]

    def with_fact_in(self, predicate: str, low: str, high: str, arity: int, now: str, namespaces: list[str],
                     limit: int) -> list[KeyHolder]:
        """Up to `limit` projections of `predicate` with `arity` arguments whose fact text is in [low, high), of
        memories current at `now`, not erased, in `namespaces`: in the (predicate, fact) index's order."""
        where, params = visible_now(now, namespaces)
        join = self._conn.sql.ordered_join  # the (predicate, fact) index first, in its order
        rows = self._conn.execute(
            "SELECT m.seq, m.id, m.namespace, s.text, p.arguments, p.fact FROM memory_projections AS p "
            f"{join} source_memories AS m ON m.id = p.memory_id {join} sources AS s ON s.id = m.source_id "
            f"WHERE p.predicate = ? AND p.fact >= ? AND p.fact < ? AND json_array_length(p.arguments, '$') = ? "
            f"AND {where} ORDER BY p.predicate, p.fact LIMIT ?",  # the index's order: it stops at the limit
            [predicate, low, high, arity, *params, limit]).fetchall()
        return [KeyHolder(seq, ident, namespace, text, json.loads(arguments), fact)
                for seq, ident, namespace, text, arguments, fact in rows]

    def contents(self, memory_id: str) -> list[tuple[str | None, str, list]]:
        """(statement, fact, arguments) of each of the memory's projections: what an erase removes."""
        return [(statement, fact, json.loads(arguments)) for statement, fact, arguments in self._conn.execute(
            "SELECT statement, fact, arguments FROM memory_projections WHERE memory_id = ?", (memory_id,))]

    def erase(self, memory_id: str) -> None:
        """Blank the memory's projections (their predicate, arguments, statement and fact): the rows stay."""
        self._conn.execute("UPDATE memory_projections SET predicate = '', statement = NULL, arguments = '[]', fact = '' "
                           "WHERE memory_id = ?", (memory_id,))
