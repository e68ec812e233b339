"""The storage seam: the repository layer is the only code with SQL on the core tables, hands out ids and
plain rows, keeps a write and its audit row in one transaction, and keeps the support law; the knowledge
base gets its collaborators at construction and is used from outside only through public methods."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.errors import StorageError
from memory.evidence import ObservationRelations
from memory.knowledge import KnowledgeBase
from memory.knowledge.collaborators import ComputedRelations, GlobalKnowledge
from memory.store import IN_MEMORY, Store, open_store
from memory.store.repository import Repository, Visibility, new_fact
from memory.terms import parse_term

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "memory"
REPOSITORY = PACKAGE / "store" / "repository"
CORE = r"(facts|supports|segments|rules|audit_log|derived|proof_edges|materializations|snapshots)"
CORE_SQL = re.compile(rf"\b(FROM|INTO|UPDATE|JOIN)\s+{CORE}\b")


def _sources(exclude: tuple[Path, ...]) -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if not any(p == e or e in p.parents for e in exclude)]


def test_only_the_repository_writes_sql_on_the_core_tables():
    offenders = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
                 for p in _sources((REPOSITORY, PACKAGE / "store" / "migrations.py"))
                 for n, line in enumerate(p.read_text().splitlines(), 1) if CORE_SQL.search(line)]
    assert offenders == []
    assert any(CORE_SQL.search(p.read_text()) for p in REPOSITORY.glob("*.py"))  # the pattern does find SQL


OBSERVATION_SQL = re.compile(r"\b(FROM|INTO|UPDATE|JOIN)\s+(entities|hyperedges|hyperedge_members|formation_rules|"
                             r"observations)\b")


def test_the_observation_tables_sql_is_the_stores_and_the_evidence_domain_holds_none():
    offenders = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in _sources((PACKAGE / "store",))
                 for n, line in enumerate(p.read_text().splitlines(), 1) if OBSERVATION_SQL.search(line)]
    assert offenders == []
    sql = re.compile(r"\.execute(many)?\(|\.connection\b|\b(SELECT|INSERT|UPDATE|DELETE)\b")
    evidence = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in sorted((PACKAGE / "evidence").glob("*.py"))
                for n, line in enumerate(p.read_text().splitlines(), 1) if sql.search(line)]
    assert evidence == []
    assert any(OBSERVATION_SQL.search(p.read_text()) for p in REPOSITORY.glob("*.py"))  # the pattern does find SQL


def test_no_domain_code_asks_the_store_for_its_row_ids():
    offenders = [str(p.relative_to(ROOT)) for p in _sources((PACKAGE / "store",))
                 if "last_insert_rowid" in p.read_text() or ".changes()" in p.read_text()]
    assert offenders == []


def test_every_write_transaction_is_the_repositorys():
    """Writes open `Repository.write()`, whose transaction carries the audit row; none opens the store's own."""
    offenders = [str(p.relative_to(ROOT)) for p in _sources((PACKAGE / "store",)) if "store.write()" in p.read_text()]
    assert offenders == []


def test_the_knowledge_base_is_used_through_public_methods_only():
    private = re.compile(r"\b(kb|knowledge|_global_kb)\._[a-z]")
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in _sources((PACKAGE / "knowledge" / "base.py",))
                 for n, line in enumerate(p.read_text().splitlines(), 1) if private.search(line)]
    assert offenders == []


@pytest.fixture
def repo(store_location):
    store = open_store(store_location)
    yield Repository(store)
    store.close()


def test_ids_come_from_the_repository(repo):
    with repo.write() as tx:
        segment_id = tx.segments.create("work", "project", "rw", True)
        rule_id = tx.rules.add(segment_id, "p", 1, "p(X) :- q(X)", None, 1.0)
        first = tx.audit.record("tester", "define_rule", "work", {"rule_id": rule_id})
        second = tx.audit.record("tester", "define_rule", "work", {"rule_id": rule_id})
        fact_id, created, added = tx.facts.support(segment_id, new_fact(parse_term("q(1)")), "asserted", "", "tester")
    with repo.read() as tx:
        assert tx.segments.mounted("work").id == segment_id
        assert tx.rules.by_text(segment_id, "p(X) :- q(X)").id == rule_id
        assert tx.facts.find(segment_id, "q(1)") == fact_id and created and added
        assert second == first + 1
        assert tx.audit.last("define_rule").payload == {"rule_id": rule_id}


def test_a_failed_write_leaves_neither_its_rows_nor_its_audit_row(repo):
    with pytest.raises(RuntimeError):
        with repo.write() as tx:
            segment = tx.segments.mounted("default")
            tx.facts.support(segment.id, new_fact(parse_term("p(1)")), "asserted", "", "tester")
            tx.audit.record("tester", "remember_fact", "default", {"fact": "p(1)"})
            raise RuntimeError("the tool failed after writing")
    with repo.read() as tx:
        segment = tx.segments.mounted("default")
        assert tx.facts.count(segment.id) == 0
        assert tx.audit.last("remember_fact") is None


def test_the_unique_constraints_are_the_stores(repo):
    with repo.write() as tx:
        tx.segments.create("work", "project", "rw", True)
    with pytest.raises(StorageError):
        with repo.write() as tx:
            tx.segments.create("work", "project", "rw", True)


def test_loading_a_predicate_gives_engine_tuples_and_nothing_per_row(repo):
    with repo.write() as tx:
        segment = tx.segments.mounted("default")
        tx.facts.assert_many(segment.id, [new_fact(parse_term(f"edge({i}, {i + 1})")) for i in range(5)], "tester")
    with repo.read() as tx:
        rows = tx.facts.tuples(segment.id, "edge", 2)
        assert all(type(row) is tuple for row in rows)  # the engine's own tuples: no record built per fact
        assert sorted(rows) == [(i, i + 1) for i in range(5)]
        assert tx.facts.tuples(segment.id, "edge", 2) is not rows  # a new list each time: callers may extend it


def test_visibility_hides_facts_held_only_by_unreadable_projections(repo):
    with repo.write() as tx:
        segment = tx.segments.mounted("default")
        tx.facts.support(segment.id, new_fact(parse_term("secret(1)")), "source", "mem_elsewhere", "other")
        tx.facts.support(segment.id, new_fact(parse_term("open(1)")), "asserted", "", "tester")
    nobody = Visibility(())
    with repo.read() as tx:
        assert tx.facts.find(segment.id, "secret(1)", nobody) is None
        assert list(tx.facts.tuples(segment.id, "secret", 1, nobody)) == []
        assert tx.facts.count(segment.id, nobody) == 1
        assert tx.facts.predicates(segment.id, nobody) == {("open", 1): 1}
        assert tx.facts.find(segment.id, "secret(1)") is not None  # the owner's view sees it


OPS = st.lists(st.tuples(st.sampled_from(["support", "withdraw", "unassert"]), st.integers(0, 3),
                         st.sampled_from([("asserted", ""), ("assumption", "a"), ("assumption", "b")])),
               max_size=30)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_a_fact_row_lives_exactly_while_a_support_does(ops):
    """The support law: after any sequence of supporting, withdrawing and unasserting, the stored facts are
    exactly those with a support left, and each lists exactly the supports it was given and not withdrawn."""
    store = Store(IN_MEMORY)
    repo = Repository(store)
    expected: dict[int, set] = {}
    try:
        with repo.write() as tx:
            segment = tx.segments.mounted("default")
            for op, n, (kind, ref) in ops:
                if op == "support":
                    tx.facts.support(segment.id, new_fact(parse_term(f"p({n})")), kind, ref, "tester")
                    expected.setdefault(n, set()).add((kind, ref))
                elif op == "withdraw":
                    tx.supports.withdraw(segment.id, kind, ref)
                    for held in expected.values():
                        held.discard((kind, ref))
                else:
                    fact_id = tx.facts.id_of(segment.id, f"p({n})")
                    if fact_id is not None:
                        tx.supports.remove(fact_id, "asserted")
                        tx.facts.release(fact_id)
                    expected.get(n, set()).discard(("asserted", ""))
        believed = {n for n, held in expected.items() if held}
        with repo.read() as tx:
            assert sorted(tx.facts.tuples(segment.id, "p", 1)) == sorted((n,) for n in believed)
            for n in believed:
                supports = tx.supports.of(tx.facts.find(segment.id, f"p({n})"))
                assert sorted(supports) == sorted(k if not r else f"{k}:{r}" for k, r in expected[n])
    finally:
        store.close()


class Numbers:
    """A computed relation n/1, as the evidence memory computes hedge/4 from its tables."""
    preds = {("n", 1)}

    def tuples(self, tx, pred):
        return [(1,), (2,)]

    def supports(self, tx, pred, args):
        return ["computed"]


def test_a_knowledge_base_uses_the_collaborators_it_was_built_with():
    store = Store(IN_MEMORY)
    kb = KnowledgeBase(Repository(store), "tester", computed=Numbers())
    try:
        assert kb.query_logic("n(X)").total == 2
        assert kb.explain_why("n(1)").detailed_tree["supports"] == ["computed"]
    finally:
        store.close()


def test_memory_builds_both_knowledge_bases_with_their_collaborators(tmp_path):
    with Memory(str(tmp_path / "project.db"), actor="tester", global_path=str(tmp_path / "global.db")) as m:
        project = m.kb
        assert isinstance(project.computed, ComputedRelations) and isinstance(project.computed, ObservationRelations)
        assert project.projection_guard == m.sources.memories.guard_projections
        assert isinstance(project.global_source(), GlobalKnowledge)
        shared = m.bases.global_base()
        # The global database holds no source memories nor observations, and is itself the global store.
        assert shared.computed is None and shared.projection_guard is None and shared.global_source is None
        # It does apply the caller's visibility: a support resting on a memory the caller cannot read (none
        # can be read there) hides its fact, as it would in the project database.
        with shared.repository.write() as tx:
            team = tx.segments.create("team", "global", "rw", True)
            tx.facts.support(team, new_fact(parse_term("p(1)")), "source", "mem_elsewhere", "other")
            tx.facts.support(team, new_fact(parse_term("p(2)")), "asserted", "", "tester")
        assert shared.facts_of("team", "p", 1) == [(2,)]
        unfiltered = KnowledgeBase(shared.repository, "tester")
        assert sorted(unfiltered.facts_of("team", "p", 1)) == [(1,), (2,)]


def test_every_store_implements_the_store_interface(store_location):
    """What a third backend must provide (memory/store/interface.py), checked on each store the suite runs."""
    from memory.store import MemoryStore, StoreConnection
    from memory.store.dialect import Dialect

    store = open_store(store_location)
    try:
        assert isinstance(store, MemoryStore)
        assert type(store).__name__ == ("PostgresStore" if store_location.startswith("postgresql") else "Store")
        with store.read() as conn:
            assert isinstance(conn, StoreConnection)
            assert isinstance(conn.sql, Dialect) and conn.sql.name == conn.dialect
            assert conn.schema_version() >= 15
            assert conn.journal_mode() in {"wal", "memory", "postgresql"}
        with store.write() as conn:
            restore = conn.grow_cache(64 * 1024)
            if restore is not None:
                restore()
        assert store.synchronous in {"full", "server"}
        if store.keeps_schema_text:
            assert "CREATE TABLE facts" in store.schema_text()
        else:
            from memory.errors import SQLiteOnly
            with pytest.raises(SQLiteOnly):
                store.schema_text()
    finally:
        store.close()


def test_only_the_store_asks_which_dialect_it_runs_on():
    """Code above the store asks the interface's capabilities (is_file, synchronous, keeps_schema_text...)."""
    asks = re.compile(r"\.dialect\s*[!=]=")
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in _sources((PACKAGE / "store",))
                 for n, line in enumerate(p.read_text().splitlines(), 1) if asks.search(line)]
    assert offenders == []
