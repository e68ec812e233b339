"""`datalog-memory check`: rows written around the tools are found, reported and recorded."""

import apsw
import pytest
from hypothesis import given, settings, strategies as st

from memory.store.observation_chain import verify_chain
from memory.store import plain_ddl, schema_sql_path
from conftest import by_hand
from surfaces import cli
from test_schema import describe
from test_sqlite_face import NOV_30, build_scenario


POSTGRESQL_NOW = "to_char(now() AT TIME ZONE 'UTC' + interval '1 second', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"


def tamper(path: str, *statements: str) -> None:
    """As a sqlite3 user would: the shell's defaults, foreign keys off, no generation bump (or as a psql user,
    whose server enforces foreign keys)."""
    if path.startswith("postgresql://"):
        with by_hand(path) as conn:
            for sql in statements:
                conn.execute(sql.replace(NOW, POSTGRESQL_NOW))
        return
    conn = apsw.Connection(path)
    for sql in statements:
        conn.execute(sql)
    conn.close()


@pytest.fixture
def store(store_file):
    path = store_file
    m = build_scenario(path)
    yield path, m
    m.close()


def test_a_store_built_by_the_tools_passes_and_the_check_is_recorded(store):
    path, m = store
    report = m.check_invariants()
    assert report.ok and report.problems == [] and report.observations_checked == 1
    status = m.get_persistence_status()
    assert status["invariants"] == {"at": status["invariants"]["at"], "ok": True, "problems": 0, "findings": {}}
    with m.store.read() as conn:
        assert conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'invariant_check'").fetchone() == (1,)


def test_a_materialization_that_is_merely_behind_is_a_note_not_a_problem(store):
    _, m = store
    m.remember_fact("depends(db, disk)")
    report = m.check_invariants()
    assert report.ok
    assert [n.check for n in report.notes] == ["materialization_behind"]


NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 second')"
TAMPERING = {
    "facts_without_supports": [
        "INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES "
        "(1, 'trusted', 1, 'trusted(mallory)', '[\"mallory\"]', '2000-01-01T00:00:00.000000Z')"],
    "supports_without_facts": [
        "INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES (999, 'asserted', '', 'x', 'now')"],
    "stale_materialization_premises": ["DELETE FROM supports WHERE fact_id IN (SELECT id FROM facts WHERE "
                                       "text = 'depends(api, db)')",
                                       "DELETE FROM facts WHERE text = 'depends(api, db)'"],
    "stale_materialization_inputs": [
        f"INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES "
        f"(1, 'depends', 2, 'depends(db, disk)', '[\"db\", \"disk\"]', {NOW})",
        "INSERT INTO supports (fact_id, kind, ref, actor, created_at) SELECT id, 'asserted', '', 'x', 'now' "
        "FROM facts WHERE text = 'depends(db, disk)'"],
    "stale_materialization_generation": ["UPDATE derived SET generation = generation + 5 WHERE text = 'at_risk(web)'"],
    "proof_edges_without_conclusions": ["DELETE FROM derived WHERE text = 'reaches(api, db)'"],
    "observation_chain_broken": ["UPDATE hyperedges SET weight = 0.5 WHERE id = 1"],
}


@pytest.mark.parametrize("check", sorted(TAMPERING))
def test_each_kind_of_tampering_is_found(store, check):
    path, m = store
    if check in ("supports_without_facts", "proof_edges_without_conclusions") and path.startswith("postgresql://"):
        # PostgreSQL enforces foreign keys for every writer: the dangling row is refused, or its edges cascade
        try:
            tamper(path, *TAMPERING[check])
        except Exception as exc:
            assert "foreign key" in str(exc)
        assert check not in {f.check for f in m.check_invariants().problems}
        return
    tamper(path, *TAMPERING[check])
    report = m.check_invariants()
    assert not report.ok
    assert check in {f.check for f in report.problems}
    finding = next(f for f in report.problems if f.check == check)
    assert finding.count >= 1 and finding.examples
    status = m.get_persistence_status()["invariants"]
    assert status["ok"] is False and status["findings"][check] == finding.count


def test_a_broken_chain_names_the_observation(store):
    path, m = store
    m.remember(["drone:d1"], event_ts=NOV_30 + 60)
    m.remember(["drone:d2"], event_ts=NOV_30 + 120)
    tamper(path, "UPDATE hyperedges SET chain_hash = 'x' WHERE id = 2",
           "DELETE FROM hyperedge_members WHERE edge_id = 3")
    finding = next(f for f in m.check_invariants().problems if f.check == "observation_chain_broken")
    # a link that does not follow breaks the next one too: the chain is what makes an edit visible
    assert finding.examples == ["HEDGE-2 chain", "HEDGE-3 content", "HEDGE-3 chain"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["host:a", "account:b", "ip:c", "drone:d", "x"]), min_size=1,
                                   max_size=3), st.integers(0, 10 ** 6), st.sampled_from([0.25, 0.5, 1.0])),
                min_size=1, max_size=12), st.data())
def test_the_chain_verifies_and_any_changed_row_is_found(tmp_path_factory, observations, data):
    from memory import Memory

    path = str(tmp_path_factory.mktemp("chain") / "memory.db")
    m = Memory(path)
    m.remember_observations([{"members": members, "event_ts": ts, "weight": w} for members, ts, w in observations])
    with m.store.read() as conn:
        assert verify_chain(conn, batch=5) == (len(observations), [])
    victim = data.draw(st.integers(1, len(observations)))
    tamper(path, f"UPDATE hyperedges SET event_ts = event_ts + 1 WHERE id = {victim}")
    with m.store.read() as conn:
        checked, breaks = verify_chain(conn, batch=5)
    assert [(b.id, b.reason) for b in breaks] == [(victim, "content")]
    m.close()


def test_plain_ddl_builds_the_same_schema_without_comments():
    commented = schema_sql_path().read_text(encoding="utf-8")
    plain = plain_ddl(commented)
    assert "--" not in plain.replace("'--'", "")
    one, two = apsw.Connection(":memory:"), apsw.Connection(":memory:")
    one.execute(commented)
    two.execute(plain)
    assert describe(one) == describe(two)
    assert plain_ddl("SELECT 'a -- b', \"c--d\" -- gone\n-- gone too\n;") == "SELECT 'a -- b', \"c--d\"\n;\n"


def test_the_cli_check_and_schema_commands(tmp_path):
    path = str(tmp_path / "memory.db")
    build_scenario(path).close()
    clean = cli(path, "check")
    assert clean.returncode == 0 and "ok: no invariant is broken" in clean.stdout
    tamper(path, *TAMPERING["facts_without_supports"])
    found = cli(path, "check")
    assert found.returncode == 1
    assert "problem: facts_without_supports: 1" in found.stdout and "default trusted(mallory)" in found.stdout
    status = cli(path, "get-persistence-status")
    assert "last_check:" in status.stdout and "(1 problem(s))" in status.stdout
    schema = cli(path, "schema", check=True)
    assert schema.stdout == schema_sql_path().read_text(encoding="utf-8")
    assert cli(path, "schema", "--sql", check=True).stdout == plain_ddl(schema.stdout)


def test_check_and_recording_a_proof_are_an_admins(tmp_path):
    from conftest import snapshot_counts
    from memory import Memory
    from memory.errors import PermissionDenied
    from memory.access import CallerContext
    from memory.access.context import READ
    from memory.tools import call_tool

    path = str(tmp_path / "memory.db")
    build_scenario(path).close()
    reader = Memory(path, context=CallerContext(principal="reader", capabilities=frozenset({READ})))
    before = snapshot_counts(reader)
    with pytest.raises(PermissionDenied):
        reader.check_invariants()
    with pytest.raises(PermissionDenied):
        call_tool(reader, "explain_why", {"fact": "at_risk(web)", "record_proof": True})
    assert call_tool(reader, "explain_why", {"fact": "at_risk(web)"}).structured["proven"] is True
    assert snapshot_counts(reader) == before
    reader.close()


def test_checking_a_database_that_does_not_exist_creates_nothing(tmp_path):
    from memory import Memory

    path = tmp_path / "never" / "memory.db"
    m = Memory(str(path))
    assert m.check_invariants().ok
    assert not path.exists()
    m.close()
