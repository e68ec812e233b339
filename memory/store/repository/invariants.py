"""Invariant queries: rows written around the tools (with sqlite3, say) that every query would trust silently.
Each selects the offending rows as readable columns; they read the whole file as its owner."""

from __future__ import annotations

from typing import NamedTuple


class RowFinding(NamedTuple):
    check: str  # stable name, e.g. facts_without_supports
    description: str
    count: int
    examples: list[str]


# (check, description, rows)
ROW_CHECKS = [
    ("facts_without_supports", "facts that nothing supports (believed by every query, yet no support says why)",
     "SELECT memory, fact FROM facts_with_supports WHERE support_count = 0 ORDER BY id"),
    ("supports_without_facts", "supports of facts that do not exist",
     "SELECT 'support ' || s.id, 'of missing fact ' || s.fact_id, s.kind || CASE WHEN s.ref = '' THEN '' "
     "ELSE ':' || s.ref END FROM supports AS s LEFT JOIN facts AS f ON f.id = s.fact_id WHERE f.id IS NULL "
     "ORDER BY s.id"),
    ("proof_edges_without_conclusions", "proof edges whose conclusion is not in derived",
     "SELECT 'conclusion ' || e.conclusion_id, e.position, e.premise FROM proof_edges AS e "
     "LEFT JOIN derived AS d ON d.id = e.conclusion_id WHERE d.id IS NULL ORDER BY e.conclusion_id, e.position"),
    # A current conclusion must still rest on what its edges name; a stored fact that vanished (or changed)
    # without a new generation means rows were edited around the tools.
    ("stale_materialization_premises", "current conclusions whose recorded premises no longer hold",
     "SELECT s.memory, s.conclusion, 'needs', s.premise FROM proof_steps AS s "
     "LEFT JOIN facts AS f ON f.id = s.fact_id LEFT JOIN derived AS p ON p.id = s.derived_id "
     "JOIN proof_edges AS e ON e.conclusion_id = s.conclusion_id AND e.position = s.position "
     "WHERE s.current = 1 AND ((s.kind = 'fact' AND e.memory IS NULL AND (f.id IS NULL OR f.text <> s.premise)) "
     "OR (s.kind = 'derived' AND (p.id IS NULL OR p.generation <> s.generation OR p.text <> s.premise))) "
     "ORDER BY s.conclusion_id, s.position"),
    # The generation counts every change the tools make; facts or rules newer than a materialization that
    # still claims to be current came in some other way, and its conclusions may be missing theirs.
    ("stale_materialization_inputs",
     "facts, rules or observations added after a materialization that still claims to be current",
     "SELECT g.name, x.text, 'added', x.created_at FROM materializations AS m JOIN segments AS g ON g.id = m.segment_id "
     "JOIN (SELECT segment_id, text, created_at FROM facts UNION ALL SELECT segment_id, text, created_at FROM rules "
     "UNION ALL SELECT (SELECT id FROM segments WHERE name = 'default'), 'HEDGE-' || id, recorded_at FROM hyperedges) "
     "AS x ON x.segment_id = g.id WHERE m.generation = g.generation AND x.created_at > m.materialized_at "
     "ORDER BY g.name, x.created_at"),
    ("stale_materialization_generation", "conclusions stamped with a generation their memory has not reached",
     "SELECT g.name, d.text, 'generation', d.generation FROM derived AS d JOIN segments AS g ON g.id = d.segment_id "
     "WHERE d.generation > g.generation ORDER BY d.id"),
]

_BEHIND = ("materialization_behind", "materializations older than their memory (current_derived hides their rows)",
           "SELECT segment, materialized_generation, current_generation FROM materialization_status "
           "WHERE materialized_generation IS NOT NULL AND current = 0 ORDER BY segment")


class Invariants:
    def __init__(self, conn) -> None:
        self._conn = conn

    def _finding(self, check: str, description: str, sql: str, examples: int) -> RowFinding | None:
        count = self._conn.execute(f"SELECT count(*) FROM ({sql}) AS found").fetchone()[0]
        if not count:
            return None
        shown = [" ".join(str(v) for v in row) for row in self._conn.execute(f"{sql} LIMIT ?", (examples,))]
        return RowFinding(check, description, count, shown)

    def problems(self, examples: int) -> list[RowFinding]:
        """Broken invariants: each with its exact count and up to `examples` rows."""
        found = [f for f in (self._finding(*check, examples) for check in ROW_CHECKS) if f is not None]
        if self._conn.dialect != "sqlite":  # PostgreSQL enforces every foreign key, whoever writes
            return found
        for table, count in self._conn.execute(
                "SELECT \"table\", count(*) FROM pragma_foreign_key_check "
                "WHERE \"table\" NOT IN ('supports', 'proof_edges') GROUP BY \"table\" ORDER BY 1"):
            found.append(RowFinding("dangling_references", f"rows of {table} that refer to rows that do not exist",
                                    count, []))
        return found

    def notes(self, examples: int) -> list[RowFinding]:
        """Worth knowing, not broken: materializations that are merely behind."""
        behind = self._finding(*_BEHIND, examples)
        return [behind] if behind else []
