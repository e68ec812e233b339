"""Invariant checks: rows written around the tools (with sqlite3, say) that every query would trust silently.

The tools keep these invariants in every transaction; a hand edit can break them without a trace. The check
reads the whole file as its owner (no namespace filter: it looks at rows, not at what a caller may see) and
records its outcome in the audit log, where get_persistence_status finds the last one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..store.observation_chain import hedge_tag, verify_chain
from ..store import utc_now
from ..store.repository import Repository, Transaction

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


def check(repository: Repository, actor: str, record: bool = True) -> CheckReport:
    """Run every check; with `record`, write the outcome to the audit log (one row)."""
    with repository.read() as tx:
        problems = [Finding(*found) for found in tx.invariants.problems(EXAMPLES)]
        checked, breaks = verify_chain(tx.connection)
        if breaks:
            problems.append(Finding("observation_chain_broken",
                                    "observations whose content or chain hash does not match what is stored",
                                    len(breaks), [f"{hedge_tag(b.id)} {b.reason}" for b in breaks[:EXAMPLES]]))
        notes = [Finding(*found) for found in tx.invariants.notes(EXAMPLES)]
    report = CheckReport(utc_now(repository.clock), problems, notes, checked)
    if record and repository.store.exists:  # checking a database that does not exist yet must not create it
        with repository.write() as tx:
            tx.audit.record(actor, OPERATION, None, {
                "problems": report.problem_count, "findings": {f.check: f.count for f in problems}})
    return report


def last_check(tx: Transaction) -> dict | None:
    """The last recorded check, as get_persistence_status reports it."""
    row = tx.audit.last(OPERATION)
    if row is None:
        return None
    payload = row.payload
    problems = payload.get("problems", 0)
    return {"at": row.at, "ok": problems == 0, "problems": problems, "findings": payload.get("findings", {})}
