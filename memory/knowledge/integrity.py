"""Invariant checks: rows written around the tools (with sqlite3, say) that every query would trust silently.

The tools keep these invariants in every transaction; a hand edit can break them without a trace. The check
reads the whole file as its owner (no namespace filter: it looks at rows, not at what a caller may see) and
records its outcome in the audit log, where get_persistence_status finds the last one."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ..evidence.observations import hedge_tag, verify_chain
from ..store import Store, record_audit, utc_now

OPERATION = "invariant_check"
EXAMPLES = 20  # rows shown per finding; the count is always exact


@dataclass
class Finding:
    check: str  # stable name, e.g. facts_without_supports
    description: str
    count: int
    examples: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    at: str
    problems: list[Finding]
    notes: list[Finding]  # worth knowing, not a broken invariant (a materialization that is merely behind)
    observations_checked: int

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def problem_count(self) -> int:
        return sum(f.count for f in self.problems)

    def to_dict(self) -> dict:
        return {"at": self.at, "ok": self.ok, "problems": self.problem_count,
                "findings": [asdict(f) for f in self.problems], "notes": [asdict(f) for f in self.notes],
                "observations_checked": self.observations_checked}


def _finding(conn, check: str, description: str, count_sql: str, examples_sql: str) -> Finding | None:
    count = conn.execute(count_sql).fetchone()[0]
    if not count:
        return None
    examples = [" ".join(str(v) for v in row) for row in conn.execute(f"{examples_sql} LIMIT {EXAMPLES}")]
    return Finding(check, description, count, examples)


# (check, description, rows): each query selects the offending rows as readable columns.
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
     "WHERE s.current AND ((s.kind = 'fact' AND e.memory IS NULL AND (f.id IS NULL OR f.text <> s.premise)) "
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


def check(store: Store, actor: str, record: bool = True) -> CheckReport:
    """Run every check; with `record`, write the outcome to the audit log (one row)."""
    problems: list[Finding] = []
    notes: list[Finding] = []
    with store.read() as conn:
        for name, description, sql in ROW_CHECKS:
            found = _finding(conn, name, description, f"SELECT count(*) FROM ({sql})", sql)
            if found:
                problems.append(found)
        for table, count in conn.execute("SELECT \"table\", count(*) FROM pragma_foreign_key_check "
                                         "WHERE \"table\" NOT IN ('supports', 'proof_edges') GROUP BY \"table\" ORDER BY 1"):
            problems.append(Finding("dangling_references", f"rows of {table} that refer to rows that do not exist",
                                    count))
        checked, breaks = verify_chain(conn)
        if breaks:
            problems.append(Finding("observation_chain_broken",
                                    "observations whose content or chain hash does not match what is stored",
                                    len(breaks), [f"{hedge_tag(b.id)} {b.reason}" for b in breaks[:EXAMPLES]]))
        behind = _finding(conn, "materialization_behind",
                          "materializations older than their memory (current_derived hides their rows)",
                          "SELECT count(*) FROM materialization_status WHERE materialized_generation IS NOT NULL "
                          "AND NOT current",
                          "SELECT segment, materialized_generation, current_generation FROM materialization_status "
                          "WHERE materialized_generation IS NOT NULL AND NOT current ORDER BY segment")
        if behind:
            notes.append(behind)
    report = CheckReport(utc_now(store.clock), problems, notes, checked)
    if record and store.exists:  # checking a database that does not exist yet must not create it
        with store.write() as conn:
            record_audit(conn, actor, OPERATION, None, {
                "problems": report.problem_count, "findings": {f.check: f.count for f in problems}})
    return report


def last_check(conn) -> dict | None:
    """The last recorded check, as get_persistence_status reports it."""
    row = conn.execute("SELECT at, payload FROM audit_log WHERE operation = ? ORDER BY id DESC LIMIT 1",
                       (OPERATION,)).fetchone()
    if row is None:
        return None
    payload = json.loads(row[1])
    problems = payload.get("problems", 0)
    return {"at": row[0], "ok": problems == 0, "problems": problems, "findings": payload.get("findings", {})}
