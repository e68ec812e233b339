"""The SQLite face: proof edges, the views, and the sqlite3 queries of docs/sqlite.md run as written."""

import re
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings, strategies as st
from jsonschema import Draft202012Validator

from conftest import snapshot_counts
from memory import Memory
from memory.access import CallerContext
from memory.tools import REGISTRY, call_tool

ROOT = Path(__file__).resolve().parents[1]
REMOTE = "https://github.com/example/alpha"
NOV_30 = 1_764_460_800  # 2025-11-30T00:00:00Z


def sqlite_page() -> str:
    """The documentation page with the sqlite3 examples (it was the README's "Inspect it with sqlite3")."""
    return (ROOT / "docs" / "sqlite.md").read_text(encoding="utf-8")


def page_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", sqlite_page(), flags=re.S)


def page_queries() -> list[str]:
    """Every SQL statement of the section's ```sql blocks, in order."""
    return [q.strip() + ";" for block in page_blocks("sql") for q in block.split(";\n") if q.strip(" ;\n")]


def opened(path: str) -> Memory:
    return Memory(path, context=CallerContext(principal="owner", session_id="s1", project_remote=REMOTE))


def build_scenario(path: str) -> Memory:
    """The store of docs/sqlite.md, through the API: two memories (one erased), an observation, facts, an assumption,
    three rules, materialized last (so it is current)."""
    m = opened(path)
    m.memory_remember("The database server has not been patched since the November scan.")
    erased = m.memory_remember("The admin password is hunter2.")
    m.memory_forget(ids=[erased["id"]], action="delete", erase=True)
    m.remember(["host:db1", "account:admin"], event_ts=NOV_30, weight=0.9)
    m.remember_fact("depends(web, api)")
    m.remember_fact("depends(api, db)")
    m.assume_fact("unpatched(db)", "scan_2026_11")
    m.define_rule("reaches(X, Y)", "depends(X, Y)")
    m.define_rule("reaches(X, Z)", "depends(X, Y), reaches(Y, Z)")
    m.define_rule("at_risk(X)", "reaches(X, Y), unpatched(Y)")
    m.materialize()
    return m


def run_sql(path: str, query: str) -> list[tuple]:
    """As a sqlite3 user would: a plain connection, no help from the library."""
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(r) for r in conn.execute(query)]
    finally:
        conn.close()


WHY_ROWS = [
    (1, "reaches(web, db)", "derived", None, "at_risk(X) :- reaches(X, Y), unpatched(Y)"),
    (2, "depends(web, api)", "fact", "asserted", "reaches(X, Z) :- depends(X, Y), reaches(Y, Z)"),
    (2, "reaches(api, db)", "derived", None, "reaches(X, Z) :- depends(X, Y), reaches(Y, Z)"),
    (3, "depends(api, db)", "fact", "asserted", "reaches(X, Y) :- depends(X, Y)"),
    (1, "unpatched(db)", "fact", "assumption:scan_2026_11", "at_risk(X) :- reaches(X, Y), unpatched(Y)"),
]


def why_query() -> str:
    return next(q for q in page_queries() if q.startswith("WITH RECURSIVE why"))


def why(path: str) -> list[tuple]:
    return [(d, step.strip(), kind, supports, rule) for d, step, kind, supports, rule in run_sql(path, why_query())]


@pytest.fixture
def scenario(tmp_path):
    path = str(tmp_path / "memory.db")
    m = build_scenario(path)
    yield path, m
    m.close()


def test_docs_has_the_queries_this_file_runs():
    queries = page_queries()
    assert len(queries) == 5
    assert any("FROM facts_with_supports" in q for q in queries)
    assert any("FROM memory_texts" in q for q in queries) and any("FROM observations" in q for q in queries)
    assert any("FROM audit_events" in q for q in queries) and "proof_steps" in why_query()


def test_docs_facts_query(scenario):
    path, _ = scenario
    query = next(q for q in page_queries() if "facts_with_supports" in q)
    assert run_sql(path, query) == [("default", "depends(api, db)", "asserted"),
                                    ("default", "depends(web, api)", "asserted"),
                                    ("default", "unpatched(db)", "assumption:scan_2026_11")]


def test_docs_why_query_walks_the_proof_down_to_stored_facts_and_their_supports(scenario):
    path, _ = scenario
    assert why(path) == WHY_ROWS
    shown = page_blocks("text")[0].splitlines()[2:]  # the page prints what the query answers
    assert [re.split(r"\s{2,}", line.strip()) for line in shown] == [
        [str(d), step, kind, *([supports] if supports else []), rule] for d, step, kind, supports, rule in WHY_ROWS]


def test_docs_memory_observation_and_audit_queries(scenario):
    path, m = scenario
    memories, observations, audit = (run_sql(path, q) for q in page_queries()
                                     if any(v in q for v in ("memory_texts", "FROM observations", "audit_events")))
    assert [(status, text) for _, _, status, text in memories] == [
        ("active", "The database server has not been patched since the November scan."),
        ("deleted", None)]  # erased: no text left
    assert all(ns.startswith("project:") for _, ns, _, _ in memories)
    assert observations == [("HEDGE-1", "2025-11-30T00:00:00Z", "AUTH_EVENT", '["host:db1","account:admin"]')]
    summaries = [s for _, _, s in audit]
    assert None not in summaries
    assert "remembered depends(web, api)" in summaries
    assert "assumed unpatched(db) under scan_2026_11" in summaries
    assert "defined rule at_risk(X) :- reaches(X, Y), unpatched(Y)" in summaries
    generation = m.materialize().generation
    assert f"materialized 5 conclusion(s) at generation {generation}" in [
        s for (s,) in run_sql(path, "SELECT summary FROM audit_events")]
    assert any(s.startswith("observed HEDGE-1 AUTH_EVENT") for s in summaries)
    assert any(s.startswith("delete 1 memory(ies), text erased") for s in summaries)


def test_every_audit_row_of_a_tool_session_has_a_summary(tmp_path):
    """Known operations are summarized in words (a missing payload key would make the summary NULL)."""
    path = str(tmp_path / "memory.db")
    m = build_scenario(path)
    m.forget_fact("depends(web, api)")
    m.retract_assumption("scan_2026_11")
    m.upsert_fact("owner(web, ann)")
    m.update_fact("owner(web, ann)", "owner(web, bob)")
    m.clear_context("owner(_, _)")
    m.save_snapshot("before")
    m.restore_snapshot("before")
    m.forget_observation(["HEDGE-1"], "mistyped")
    m.explain_why("reaches(api, db)", record_proof=True)
    m.close()
    rows = run_sql(path, "SELECT operation, summary FROM audit_events ORDER BY id")
    assert all(summary is not None and summary != operation for operation, summary in rows), rows


def test_views_are_documented_in_schema_sql():
    schema = (ROOT / "schema" / "schema.sql").read_text(encoding="utf-8")
    conn = apsw.Connection(":memory:")
    conn.execute(schema)
    views = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'view'")]
    for name in ("facts_with_supports", "rules_with_heads", "memory_texts", "observations", "audit_events",
                 "proof_steps"):
        assert name in views
    for name in views:  # each view is preceded by its comment
        before = schema[:schema.index(f"CREATE VIEW {name} AS")].rstrip("\n").splitlines()
        assert before[-1].startswith("-- "), name
    assert "enforced by the tools" in " ".join(schema.split())  # the views apply no authority, and say so


# --- proof edges ---------------------------------------------------------------------------------

def edges_law(path: str) -> None:
    """Every materialized conclusion's edges: positions 0..n-1; a derived premise is a row of the same
    generation with a smaller stamp; a fact premise is a stored fact; so every walk ends in stored facts."""
    rows = run_sql(path, "SELECT d.id, d.stamp, d.generation, e.position, e.kind, e.premise, e.fact_id, "
                         "e.derived_id, p.stamp, p.generation, p.text, f.text, e.generation "
                         "FROM derived AS d LEFT JOIN proof_edges AS e ON e.conclusion_id = d.id "
                         "LEFT JOIN derived AS p ON p.id = e.derived_id LEFT JOIN facts AS f ON f.id = e.fact_id "
                         "ORDER BY d.id, e.position")
    positions: dict = {}
    for cid, stamp, gen, pos, kind, premise, fact_id, derived_id, pstamp, pgen, ptext, ftext, egen in rows:
        assert pos is not None, f"conclusion {cid} has no proof edges"
        positions.setdefault(cid, []).append(pos)
        assert egen == gen
        if kind == "derived":
            assert derived_id is not None and pgen == gen and pstamp < stamp and ptext == premise
        elif kind == "fact":
            assert fact_id is not None and ftext == premise
        else:
            assert kind in ("builtin", "negation", "aggregate") and derived_id is None and fact_id is None
    for found in positions.values():
        assert found == list(range(len(found)))


GRAPH_RULES = [
    ("path(X, Y)", "edge(X, Y)"),
    ("path(X, Z)", "edge(X, Y), path(Y, Z)"),
    ("far(X, Y)", "path(X, Y), \\+ edge(X, Y), X \\== Y"),
    ("hub(X, N)", "path(X, _), aggregate_all(count, edge(X, _), N), N >= 2"),
]


@settings(max_examples=25, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=14))
def test_materialized_proof_edges_end_in_stored_facts(tmp_path_factory, edges):
    path = str(tmp_path_factory.mktemp("law") / "memory.db")
    m = opened(path)
    for head, body in GRAPH_RULES:
        m.define_rule(head, body)
    if edges:
        m.add_facts([f"edge(n{a}, n{b})" for a, b in edges])
    result = m.materialize()
    m.close()
    edges_law(path)
    conclusions = run_sql(path, "SELECT text FROM current_derived ORDER BY text")
    assert len(conclusions) == result.tuples
    assert run_sql(path, "SELECT count(*) FROM proof_edges")[0][0] == result.proof_edges
    # one recursive query from every conclusion reaches only stored facts and steps
    leaves = run_sql(path, """
        WITH RECURSIVE walk(id) AS (SELECT id FROM derived UNION SELECT e.derived_id FROM walk
            JOIN proof_edges AS e ON e.conclusion_id = walk.id WHERE e.derived_id IS NOT NULL)
        SELECT DISTINCT e.kind FROM walk JOIN proof_edges AS e ON e.conclusion_id = walk.id
        WHERE e.kind <> 'derived'""")
    assert {k for (k,) in leaves} <= {"fact", "negation", "builtin", "aggregate"}


def test_materialize_replaces_edges_and_marks_old_rows_stale(scenario):
    path, m = scenario
    m.forget_fact("depends(api, db)")
    assert {c for (c,) in run_sql(path, "SELECT DISTINCT current FROM proof_steps")} == {0}
    assert why(path) == []  # the page's query asks for current rows only
    m.materialize()
    assert run_sql(path, "SELECT count(*) FROM derived WHERE text = 'at_risk(web)'") == [(0,)]
    edges_law(path)
    assert run_sql(path, "SELECT count(*) FROM proof_edges AS e LEFT JOIN derived AS d ON d.id = e.conclusion_id "
                         "WHERE d.id IS NULL") == [(0,)]


def test_record_proof_writes_the_proof_the_documented_query_reads(tmp_path):
    path = str(tmp_path / "memory.db")
    m = build_scenario(path)
    m.remember_fact("depends(db, disk)")  # the materialization is now behind
    assert why(path) == []
    before = snapshot_counts(m)
    plain = m.explain_why("at_risk(web)")
    assert plain.recorded is None and snapshot_counts(m) == before  # without the option: nothing written
    result = m.explain_why("at_risk(web)", record_proof=True)
    assert result.recorded == {"generation": result.recorded["generation"], "conclusions": 3, "written": 3,
                               "complete": True}
    assert why(path) == WHY_ROWS
    edges_law_for_current(path)
    again = m.explain_why("at_risk(web)", record_proof=True)
    assert again.recorded["written"] == 0  # rows already current are kept
    ops = [r[0] for r in run_sql(path, "SELECT operation FROM audit_log ORDER BY id")]
    assert ops.count("record_proof") == 2
    m.close()


def edges_law_for_current(path: str) -> None:
    stale = run_sql(path, "SELECT d.text FROM derived AS d JOIN segments AS s ON s.id = d.segment_id "
                          "WHERE d.generation = s.generation AND d.rule_id IS NOT NULL AND NOT EXISTS "
                          "(SELECT 1 FROM proof_edges WHERE conclusion_id = d.id)")
    assert stale == []


def test_record_proof_through_the_registry_and_on_a_read_only_memory(tmp_path):
    path = str(tmp_path / "memory.db")
    m = build_scenario(path)
    schema = REGISTRY["explain_why"].input_schema["properties"]["record_proof"]
    assert schema["type"] == "boolean"
    result = call_tool(m, "explain_why", {"fact": "at_risk(web)", "record_proof": True})
    assert result.structured["recorded"]["conclusions"] == 3
    Draft202012Validator(REGISTRY["explain_why"].output_schema).validate(result.structured)
    status = call_tool(m, "get_persistence_status", {})
    assert "invariants" not in status.structured  # no check yet: left out, never null
    m.check_invariants()
    status = call_tool(m, "get_persistence_status", {})
    Draft202012Validator(REGISTRY["get_persistence_status"].output_schema).validate(status.structured)
    assert status.structured["invariants"]["ok"] is True and "last_check:" in status.text
    assert "recorded" not in call_tool(m, "explain_why", {"fact": "at_risk(web)"}).structured
    m.create_memory("frozen")
    m.mount_memory("frozen")
    m.define_rule("p(X)", "q(X)", memory="frozen")
    m.remember_fact("q(1)", memory="frozen")
    m.mount_memory("frozen", mode="ro")
    # like materialize, recording writes conclusions, never knowledge: a read-only memory allows it
    before = snapshot_counts(m)
    assert m.explain_why("p(1)", memory="frozen", record_proof=True).recorded["written"] == 1
    after = snapshot_counts(m)
    assert {k: after[k] for k in ("facts", "rules", "supports", "__generation")} == \
        {k: before[k] for k in ("facts", "rules", "supports", "__generation")}
    assert after["proof_edges"] == before["proof_edges"] + 1
    m.close()


def test_observation_premises_name_their_observation(tmp_path):
    path = str(tmp_path / "memory.db")
    m = opened(path)
    m.remember(["host:db1", "account:admin"], event_ts=NOV_30)
    m.define_rule("logged_in(A, H)", "hedge(E, 'AUTH_EVENT', _, _), member(E, A), member(E, H), "
                  "entity_type(A, account), entity_type(H, host)")
    m.materialize()
    m.close()
    steps = run_sql(path, "SELECT position, kind, premise, observation_id, supports FROM proof_steps "
                          "WHERE conclusion = 'logged_in(''account:admin'', ''host:db1'')' ORDER BY position")
    assert [s[1] for s in steps] == ["observation"] * 5
    assert steps[0][3] == 1 and steps[0][4] == "observation:HEDGE-1"
    assert steps[3][3] is None and steps[3][4] == "observation"


def test_a_cut_proof_records_only_whole_sub_proofs_and_says_so(tmp_path):
    path = str(tmp_path / "memory.db")
    m = build_scenario(path)
    m.remember_fact("depends(db, disk)")
    cut = m.explain_why("at_risk(web)", max_depth=2, record_proof=True)
    assert cut.recorded["complete"] is False
    # nothing above the cut is written: every recorded conclusion rests on recorded premises
    assert run_sql(path, "SELECT text FROM current_derived") == []
    whole = m.explain_why("at_risk(web)", record_proof=True)
    assert whole.recorded == {"generation": whole.recorded["generation"], "conclusions": 3, "written": 3,
                              "complete": True}
    assert why(path) == WHY_ROWS
    m.close()
