"""Authority everywhere: capabilities for every tool, and no tool reveals or changes what its caller may not see.

A store holds an outsider's own knowledge, plus data the outsider may not see: another
project's memory "Carol earns 250000" projected to salary(carol, 250000) (and to facts
the outsider also believes), and another principal's memory in a session with the
outsider's session id. Every reproducer of the issue is a test below; the law and the
capability matrix are generated over the whole registry."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import STORES, copy_store, postgresql_server, table_names
from memory import Memory
from memory.errors import DatalogMemoryError
from memory.access import CallerContext
from memory.access.context import (DEFAULT_CAPABILITIES, KNOWN_CAPABILITIES, READ, WRITE_GLOBAL, WRITE_PROJECT,
                                    WRITE_SESSION)
from memory.tools import REGISTRY, call_tool
from memory.tools.docs import capability_table

ROOT = Path(__file__).resolve().parents[1]
SECRET = "Carol earns 250000"
SESSION_SECRET = "Frank earns 7 in cash"
OWNER = CallerContext(principal="owner", session_id="s1", project_remote="https://example.org/payroll",
                      capabilities=KNOWN_CAPABILITIES)
INTRUDER = CallerContext(principal="intruder", session_id="s1", project_remote=None, capabilities=KNOWN_CAPABILITIES)
ALL_CAPABILITIES = KNOWN_CAPABILITIES


def outsider(capabilities=DEFAULT_CAPABILITIES) -> CallerContext:
    return CallerContext(principal="outsider", session_id="s1", project_remote="https://example.org/other",
                         capabilities=frozenset(capabilities))


# --- the stores -----------------------------------------------------------------------------------

def build_visible(path: str, global_path: str) -> dict:
    """The outsider's world: its facts, rules, assumptions, memories, observations and segments."""
    with Memory(path, context=outsider(ALL_CAPABILITIES), global_path=global_path) as m:
        for fact in ("person(carol)", "person(dave)", "salary(dave, 10)", "depends_on(a, b)", "depends_on(b, c)"):
            m.remember_fact(fact)
        m.define_rule("rich(X)", "salary(X, S), S > 100")
        m.define_rule("path(X, Y)", "depends_on(X, Y)")
        m.define_rule("path(X, Z)", "depends_on(X, Y), path(Y, Z)")
        m.assume_fact("salary(erin, 300)", "hr_guess")
        mine = m.memory_remember("Dave earns 10", projections=[
            {"predicate": "salary", "arguments": ["dave", 10], "statement": "Dave earns 10"}])["id"]
        m.remember(["account:admin", "host:db01"], 1_700_000_000, 0.9)
        m.create_memory("notes")
        m.mount_memory("notes")
        m.save_snapshot("snap1")
    return {"$mine": mine}


def add_hidden(path: str, global_path: str) -> dict:
    """What the outsider may not see: another project's memory and another principal's session memory."""
    with Memory(path, context=OWNER, global_path=global_path) as m:
        hidden = m.memory_remember(SECRET, idempotency_key="payroll-key", projections=[
            {"predicate": "salary", "arguments": ["carol", 250000], "statement": SECRET},
            {"predicate": "salary", "arguments": ["dave", 10], "statement": "Dave earns 10 too"},
            {"predicate": "person", "arguments": ["carol"], "statement": "Carol is a person"},
            {"predicate": "pay", "arguments": ["carol", 250000], "statement": "pay"},
            {"predicate": "path", "arguments": ["x", "y"], "statement": "path"},
            {"predicate": "integrity_violation", "arguments": ["carol"], "statement": "iv"}])["id"]
    with Memory(path, context=INTRUDER, global_path=global_path) as m:
        session = m.memory_remember(SESSION_SECRET, scope="session", projections=[
            {"predicate": "salary", "arguments": ["frank", 7], "statement": SESSION_SECRET}])["id"]
    return {"$hidden": hidden, "$session": session}


def hidden_rows(path: str, ids: list[str]) -> list:
    """Everything stored about the hidden memories, fact texts and supports included."""
    with Memory(path, context=OWNER) as m, m.store.read() as conn:
        listed, among = conn.sql.listed(ids), conn.sql.in_list
        rows = []
        for sql in (
            "SELECT m.*, s.text, s.sha256, s.erased_at FROM source_memories AS m JOIN sources AS s "
            f"ON s.id = m.source_id WHERE {among('m.id')} ORDER BY m.id",
            f"SELECT * FROM memory_projections WHERE {among('memory_id')} ORDER BY id",
            f"SELECT memory_id, status, reason, principal FROM memory_events WHERE {among('memory_id')} ORDER BY id",
            "SELECT f.text, g.name, s.kind, s.ref, s.actor FROM supports AS s JOIN facts AS f ON f.id = s.fact_id "
            f"JOIN segments AS g ON g.id = f.segment_id WHERE s.kind = 'source' AND {among('s.ref')} "
            "ORDER BY f.text, s.ref",
        ):
            rows.append(conn.execute(sql, (listed,)).fetchall())
        rows.append(conn.execute("SELECT rowid, text, statements FROM memory_fts WHERE rowid IN (SELECT seq FROM "
                                 f"source_memories WHERE {among('id')})", (listed,)).fetchall())
    return rows


@pytest.fixture(scope="module", params=STORES)
def worlds(request, tmp_path_factory):
    """Two stores alike but for the hidden data: `absent` never had it, `present` has it (SQLite files, or
    PostgreSQL databases)."""
    base = tmp_path_factory.mktemp("worlds")
    if request.param == "sqlite":
        absent, present = str(base / "absent.db"), str(base / "present.db")
        names = build_visible(absent, str(base / "global-absent.db"))
        shutil.copy(absent, present)
    else:
        server = postgresql_server()
        absent = server.fresh_database()
        names = build_visible(absent, str(base / "global-absent.db"))
        present = server.copy_database(absent)
    names.update(add_hidden(present, str(base / "global-present.db")))
    return {"absent": absent, "present": present, "names": names, "base": base}


def audit_of(path: str, actor: str = "outsider") -> list:
    """What a caller's calls wrote to the audit log, normalized like their answers."""
    with Memory(path, context=OWNER) as m, m.store.read() as conn:
        return [(operation, segment, normalized(json.loads(payload))) for operation, segment, payload in conn.execute(
            "SELECT operation, segment, payload FROM audit_log WHERE actor = ? ORDER BY id", (actor,))]


def copy_world(worlds, which: str, into: Path) -> str:
    return copy_store(worlds[which], into, which)


# --- the reproducers of the issue ---------------------------------------------------------------------

@pytest.fixture
def present(worlds, tmp_path):
    return copy_world(worlds, "present", tmp_path)


def run(m: Memory, name: str, arguments: dict):
    try:
        result = call_tool(m, name, arguments)
        return {"text": result.text, "structured": result.structured}
    except DatalogMemoryError as error:
        return {"error": error.code, "message": error.message}


def test_clear_context_does_not_report_hidden_supports(present, tmp_path):
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "clear_context", {"category": "salary(_, _)"})
    assert "250000" not in json.dumps(out) and "frank" not in json.dumps(out)
    # its own memory and its assumption still support these; the hidden memories are not mentioned
    assert sorted(out["structured"]["kept"]) == ["salary(dave, 10)", "salary(erin, 300)"]


def test_upsert_does_not_report_hidden_facts(present, tmp_path):
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "upsert_fact", {"fact": "salary(carol, 6)"})
    assert out["structured"]["kept"] == [] and out["structured"]["removed"] == []


@pytest.mark.parametrize("name, arguments", [
    ("forget_fact", {"fact": "salary(carol, 250000)"}),
    ("remember_fact", {"fact": "salary(carol, 250000)"}),
    ("get_belief_status", {"fact": "salary(carol, 250000)"}),
    ("get_belief_status", {"fact": "salary(dave, 10)"}),
    ("find_predicate_references", {"functor": "salary"}),
    ("rename_predicate", {"old_functor": "salary", "new_functor": "pay", "dry_run": True}),
    ("list_facts", {"functor": "salary"}),
    ("explain_why", {"fact": "salary(dave, 10)"}),
])
def test_hidden_fact_answers_like_an_absent_one(worlds, tmp_path, name, arguments):
    answers = {}
    for which in ("absent", "present"):
        with Memory(copy_world(worlds, which, tmp_path), context=outsider(),
                    global_path=str(tmp_path / f"g-{which}.db")) as m:
            answers[which] = normalized(run(m, name, arguments))
    assert answers["present"] == answers["absent"]
    raw = json.dumps(answers["present"])
    assert worlds["names"]["$hidden"] not in raw and worlds["names"]["$session"] not in raw


def test_retract_assumption_hides_other_supports(worlds, tmp_path):
    present = copy_world(worlds, "present", tmp_path)
    with Memory(present, context=OWNER, global_path=str(tmp_path / "g.db")) as m:
        m.assume_fact("salary(carol, 250000)", "payroll")  # the owner's own assumption, visible to all
    # the outsider retracts it: in its world the fact had no other support, so it is removed
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "retract_assumption", {"assumption": "payroll"})
    assert out["structured"]["removed"] == ["salary(carol, 250000)"] and out["structured"]["kept"] == []
    with Memory(present, context=OWNER) as m:  # the owner's projection still stands
        assert m.memory_recall("salary", ["carol", None])["total"] == 1


def test_rename_without_capabilities_changes_nothing(present, tmp_path):
    before = hidden_rows(present, [])
    with Memory(present, context=outsider(set()), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "rename_predicate", {"old_functor": "salary", "new_functor": "pay", "arity": 2})
    assert out["error"] == "permission_denied"
    with Memory(present, context=OWNER) as m:
        assert m.memory_recall("salary", ["carol", None])["total"] == 1
    assert hidden_rows(present, []) == before


def test_rename_leaves_hidden_projections_and_moves_the_callers(worlds, present, tmp_path):
    ids = [worlds["names"]["$hidden"], worlds["names"]["$session"]]
    before = hidden_rows(present, ids)
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "rename_predicate", {"old_functor": "salary", "new_functor": "wage", "arity": 2})
        assert out["structured"]["renamed_facts"] == 2  # dave (asserted + own memory), erin (assumed)
        assert {f["fact"] for f in m.list_facts(functor="wage").items} == {"wage(dave, 10)", "wage(erin, 300)"}
        assert m.list_facts(functor="salary").total == 0
        assert m.memory_recall("wage", ["dave", None])["total"] == 1  # its own projection followed
    assert hidden_rows(present, ids) == before
    with Memory(present, context=OWNER) as m:
        assert m.memory_recall("salary", ["carol", None])["total"] == 1
        assert {f["fact"] for f in m.list_facts(functor="salary").items} == {"salary(carol, 250000)",
                                                                             "salary(dave, 10)"}


def test_rename_refuses_projections_the_caller_sees_but_cannot_write(present, tmp_path):
    with Memory(present, context=OWNER, global_path=str(tmp_path / "g.db")) as m:
        m.memory_remember("Gus earns 5", scope="global", projections=[
            {"predicate": "salary", "arguments": ["gus", 5], "statement": "Gus earns 5"}])
    before = snapshot(present)
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        out = run(m, "rename_predicate", {"old_functor": "salary", "new_functor": "wage", "arity": 2})
    assert out["error"] == "permission_denied" and WRITE_GLOBAL in out["message"]
    assert snapshot(present) == before


def test_sessions_belong_to_their_principal(present, worlds, tmp_path):
    with Memory(present, context=outsider(), global_path=str(tmp_path / "g.db")) as m:
        assert m.memory_search("Frank", scope="session")["total"] == 0
        assert run(m, "memory_get", {"id": worlds["names"]["$session"]})["error"] == "not_found"
        mine = m.memory_remember("outsider's note", scope="session")
    assert mine["namespace"] == {"type": "session", "id": "s1"}
    with Memory(present, context=INTRUDER) as m:
        assert m.memory_search("Frank", scope="session")["total"] == 1
        assert m.memory_search("outsider", scope="session")["total"] == 0


def test_migration_keys_existing_sessions_by_principal(tmp_path):
    """A database written before 0006 keeps its session memories readable by the principal that wrote them."""
    from memory.store import load_migrations, migrate
    import apsw

    path = str(tmp_path / "old.db")
    conn = apsw.Connection(path)
    migrate(conn, load_migrations()[:5])
    conn.execute("INSERT INTO sources VALUES ('src_1', 'old text', '', 'a:b/c%', 'model_inferred', "
                 "'model_inferred', '2026-01-01T00:00:00.000000Z', NULL)")
    conn.execute("INSERT INTO source_memories (id, source_id, namespace, lifetime, kind, principal, valid_from, "
                 "recorded_at) VALUES ('mem_1', 'src_1', 'session:s1', 'long_term', 'text', 'a:b/c%', "
                 "'2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')")
    conn.execute("INSERT INTO memory_events (memory_id, at, status, principal) VALUES ('mem_1', "
                 "'2026-01-01T00:00:00.000000Z', 'active', 'a:b/c%')")
    conn.close()
    with Memory(path, context=CallerContext(principal="a:b/c%", session_id="s1")) as m:
        assert m.memory_get("mem_1")["source_text"] == "old text"
        with m.store.read() as c:
            assert c.execute("SELECT task FROM maintenance").fetchall() == [("vacuum_on_erase",)]
    with Memory(path, context=CallerContext(principal="other", session_id="s1")) as m:
        assert run(m, "memory_get", {"id": "mem_1"})["error"] == "not_found"


def test_refused_remember_creates_no_project_row(db_path):
    context = CallerContext(principal="p", project_remote="https://example.org/new", capabilities=frozenset({READ}))
    with Memory(db_path, context=context) as m:
        m.store.ensure_created()
        before = snapshot(db_path)
        assert run(m, "memory_remember", {"memory": "x", "scope": "project"})["error"] == "permission_denied"
    assert snapshot(db_path) == before


def test_global_segment_writes_need_the_global_capability(tmp_path):
    g = str(tmp_path / "global.db")
    with Memory(str(tmp_path / "a.db"), context=outsider(ALL_CAPABILITIES), global_path=g) as m:
        m.create_memory("shared", scope="global")
        m.mount_memory("shared")
    with Memory(str(tmp_path / "a.db"), context=outsider(), global_path=g) as m:
        assert run(m, "create_memory", {"name": "other", "scope": "global"})["error"] == "permission_denied"
        assert run(m, "remember_fact", {"fact": "p(1)", "memory": "shared"})["error"] == "permission_denied"
        assert run(m, "list_facts", {"memory": "shared"})["structured"]["total"] == 0
    with Memory(g) as shared, shared.store.read() as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM segments WHERE name = 'other'").fetchone()[0] == 0


def test_admin_commands_outside_the_registry_need_their_capabilities(db_path):
    """The CLI's import and export commands call Memory directly: the same capabilities guard them."""
    with Memory(db_path, context=outsider({READ})) as m:
        m.store.ensure_created()
        before = snapshot(db_path)
        for attempt in (lambda: m.import_program("p(1)."), lambda: m.add_facts(["p(1)"]),
                        lambda: m.remember_observations([{"members": ["host:a"], "event_ts": 1}]),
                        lambda: m.import_snapshot("s", "p(1).")):
            with pytest.raises(DatalogMemoryError) as refused:
                attempt()
            assert refused.value.code == "permission_denied"
    assert snapshot(db_path) == before
    with Memory(db_path, context=outsider(set())) as m:
        with pytest.raises(DatalogMemoryError, match="memory_read"):
            m.export_program()


# --- the capability table is generated from the registry -------------------------------------------------

def test_the_authority_page_holds_the_generated_capability_table():
    page = (ROOT / "docs" / "authority.md").read_text(encoding="utf-8")
    assert capability_table() in page, \
        "docs/authority.md's capability table is stale: python -m memory.tools.docs --capabilities"


def test_every_writing_tool_declares_a_capability():
    for spec in REGISTRY.values():
        assert spec.capability or spec.capability_note or spec.name == "echo", spec.name
        if not spec.annotations.read_only:  # a tool that writes needs more than memory_read for it
            assert spec.capability != READ or spec.capability_note or spec.argument_capabilities, spec.name


# --- the capability matrix ----------------------------------------------------------------------------------

def snapshot(path: str) -> dict:
    """Every row of every table (audit log included)."""
    with Memory(path, context=OWNER) as m, m.store.read() as conn:
        tables = [t for t in table_names(conn) if not t.startswith(("memory_fts_", "sqlite_"))]
        return {t: conn.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}


# One valid call per tool (a test fails when a tool has none), with the namespace capabilities it also needs.
EXAMPLES = {
    "echo": [({"message": "hi"}, [])],
    "assume_fact": [({"fact": "q(1)", "assumption": "a1"}, [])],
    "get_belief_status": [({"fact": "person(carol)"}, [])],
    "get_justification": [({"assumption": "hr_guess"}, [])],
    "list_assumptions": [({}, [])],
    "retract_assumption": [({"assumption": "hr_guess"}, [])],
    "retract_assumptions": [({"pattern": "hr_*"}, [])],
    "remember": [({"members": ["account:x", "host:y"], "event_ts": 1_700_000_100}, [])],
    "forget_observation": [({"hedge_tags": ["HEDGE-1"]}, [])],
    "recall": [({"query": "admin"}, [])],
    "reason": [({"query": "admin"}, [])],
    "prove": [({"query": "admin"}, [])],
    "verify": [({"answer": "admin logged into db01 [HEDGE-1]"}, [])],
    "detect": [({}, [])],
    "remember_fact": [({"fact": "q(2)"}, []), ({"fact": "q(2)", "memory": "shared"}, [WRITE_GLOBAL])],
    "define_rule": [({"head": "q(X)", "body": "person(X)"}, [])],
    "forget_fact": [({"fact": "person(dave)"}, [])],
    "forget_rule": [({"rule": "rich(X) :- salary(X, S), S > 100"}, [])],
    "enable_toolsets": [({}, []), ({"enable": ["beliefs"]}, [])],
    "query_logic": [({"goal": "person(X)"}, [])],
    "explain_why": [({"fact": "person(carol)"}, [])],
    "list_facts": [({}, [])],
    "list_rules": [({}, [])],
    "materialize": [({}, [])],
    "clear_context": [({"category": "person(_)"}, [])],
    "update_fact": [({"old_fact": "person(dave)", "new_fact": "person(dan)"}, [])],
    "upsert_fact": [({"fact": "salary(dave, 11)"}, [])],
    "trace_dependency": [({"start_node": "a"}, [])],
    "verify_consistency": [({}, [])],
    "save_snapshot": [({"name": "snap2"}, [])],
    "restore_snapshot": [({"name": "snap1"}, [])],
    "list_snapshots": [({}, [])],
    "get_persistence_status": [({}, []), ({"check_integrity": True}, [])],
    "get_knowledge_schema": [({}, [])],
    "get_kb_overview": [({}, [])],
    "find_predicate_references": [({"functor": "person"}, [])],
    "rename_predicate": [({"old_functor": "person", "new_functor": "human"}, [])],
    "create_memory": [({"name": "extra"}, []), ({"name": "extra", "scope": "global"}, [])],
    "mount_memory": [({"name": "notes", "mode": "ro"}, [])],
    "unmount_memory": [({"name": "notes"}, [])],
    "list_memories": [({}, [])],
    "memory_remember": [({"memory": "x", "scope": "session"}, [WRITE_SESSION]),
                        ({"memory": "x", "scope": "project"}, [WRITE_PROJECT]),
                        ({"memory": "x", "scope": "global"}, [WRITE_GLOBAL])],
    "memory_get": [({"id": "$mine"}, [])],
    "memory_search": [({"query": "Dave"}, [])],
    "memory_recall": [({"predicate": "salary"}, [])],
    "memory_forget": [({"ids": ["$mine"], "action": "delete", "erase": True}, [WRITE_PROJECT])],
}


def test_every_tool_has_a_capability_example():
    assert set(EXAMPLES) == set(REGISTRY)


@pytest.fixture(scope="module")
def stocked(worlds, tmp_path_factory):
    """The outsider's world plus a mounted global segment, for the matrix."""
    base = tmp_path_factory.mktemp("stocked")
    path, g = copy_store(worlds["absent"], base, "stocked", keep=True), str(base / "global.db")
    with Memory(path, context=outsider(ALL_CAPABILITIES), global_path=g) as m:
        m.create_memory("shared", scope="global")
        m.mount_memory("shared")
    return {"path": path, "global": g, "names": worlds["names"]}


def _substitute(value, names: dict):
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    return value


CASES = [(name, i) for name in sorted(EXAMPLES) for i in range(len(EXAMPLES[name]))]


@pytest.mark.parametrize("name, index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_capability_matrix(stocked, tmp_path, name, index):
    """Each capability a call needs, withheld, refuses it and writes nothing; the others are not needed."""
    arguments, extra = EXAMPLES[name][index]
    arguments = _substitute(arguments, stocked["names"])
    needed = set(REGISTRY[name].required_capabilities(arguments)) | set(extra)
    path, g = copy_store(stocked["path"], tmp_path, "case"), copy_store(stocked["global"], tmp_path, "case-global")
    before, global_before = snapshot(path), snapshot(g)
    # Refused calls first: each must leave both databases exactly as they were, so the next runs on the same copy.
    for capability in sorted(needed) + sorted(KNOWN_CAPABILITIES - needed):
        with Memory(path, context=outsider(KNOWN_CAPABILITIES - {capability}), global_path=g) as m:
            out = run(m, name, arguments)
        if capability in needed:
            assert out.get("error") == "permission_denied", (capability, out)
            assert capability in out["message"]
            assert snapshot(path) == before and snapshot(g) == global_before, capability
        else:
            assert out.get("error") != "permission_denied", (capability, out)


# --- the no-oracle law ---------------------------------------------------------------------------------------

# Values each argument is drawn from; a new argument name fails test_the_law_knows_every_argument until it is here.
VOCABULARY = {
    "message": ["hi"],
    "rule": ["rich(X) :- salary(X, S), S > 100", "path(X, Y) :- depends_on(X, Y)"],
    "enable": [["beliefs"], ["all"]],
    "fact": ["salary(carol, 250000)", "salary(dave, 10)", "person(carol)", "salary(frank, 7)", "salary(carol, 6)",
             "pay(carol, 250000)", "rich(carol)", "salary(erin, 300)", "integrity_violation(carol)"],
    "old_fact": ["salary(carol, 250000)", "salary(dave, 10)", "person(carol)", "salary(erin, 300)"],
    "new_fact": ["salary(carol, 250000)", "person(zed)", "pay(carol, 250000)"],
    "category": ["salary(_, _)", "salary(carol, _)", "person(_)", "pay(_, _)", "path(_, _)"],
    "goal": ["salary(X, Y)", "rich(X)", "person(X)", "aggregate_all(count, salary(_, _), N)", "pay(X, Y)",
             "path(x, Y)"],
    "start_node": ["a", "x"],
    "head": ["high(X)", "pay(X, Y)"],
    "body": ["salary(X, S), S > 5", "salary(X, Y)"],
    "memory": ["default", "notes"],
    "name": ["snap1", "snap2", "notes", "extra", "hr"],
    "assumption": ["hr_guess", "payroll"],
    "pattern": ["hr_*", "*"],
    "functor": ["salary", "pay", "person", "path", "integrity_violation"],
    "old_functor": ["salary", "person", "pay", "path"],
    "new_functor": ["wage", "pay", "human", "salary"],
    "arity": [1, 2],
    "id": ["$mine", "$hidden", "$session", "mem_00000000-0000-4000-8000-000000000000"],
    "ids": [["$mine"], ["$hidden"], ["$session"], ["$hidden", "$mine"]],
    "supersedes": [["$mine"], ["$hidden"]],
    "superseded_by": ["$mine", "$hidden", "$session"],
    "query": ["Carol earns", "earns", "salary", "admin db01", "Frank", "carol"],
    "predicate": ["salary", "rich", "pay", "person"],
    "arguments": [["carol", None], [None, None], ["dave", 10]],
    "answer": [f"{SECRET} [HEDGE-1]", "admin logged into db01 [HEDGE-1]"],
    "members": [["account:carol", "host:x"]],
    "hedge_tags": [["HEDGE-1"], ["HEDGE-99"]],
    "projections": [[{"predicate": "salary", "arguments": ["carol", 250000], "statement": SECRET}]],
    "idempotency_key": ["payroll-key", "k1"],
    "as_of": ["2020-01-01T00:00:00Z"],
    "valid_from": ["2020-01-01T00:00:00Z"],
    "valid_to": ["2999-01-01T00:00:00Z"],
    "reason": ["cleanup"],
    "formation": ["login"],
    "goal_pred": ["rich"],
    "scope": ["session", "project", "all_visible", "global", "current", "auto", "hr"],
    "sample_size": [2],
    "weight": [0.5],
    "event_ts": [1_700_000_100],
    "now": [1_700_000_200],
    "confidence": [0.5],
    "window": ["last 7 days", "between 2023-11-01 and 2023-11-20"],
    "sensitivity": [1.0, 2.0],
}
SECRETS = ["250000", "Carol earns", "Frank", "frank", "payroll-key", "Dave earns 10 too", "integrity_violation(carol)",
           "x, y", "pay(carol"]
VOLATILE = {"created_at", "recorded_at", "at", "valid_from", "valid_to", "source_created_at", "materialized_at",
            "seconds", "generation", "wal_bytes", "wal_pending", "wal_frames", "checkpointed_frames", "last_checkpoint",
            "database", "directory", "source_id", "projection_ids", "sha256", "now", "latest_at", "elapsed_ms"}
UUID = re.compile(r"\b(mem|src|proj|project)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
GENERATION = re.compile(r"generation \d+")
JOURNAL = re.compile(r"journal_size: \d+ bytes")  # the WAL's size: write volume, shared by all (docs/authority.md)
DATABASE = re.compile(r"postgresql:///test_\d+_\d+")  # the copies are databases of their own
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normalized(value, key: str | None = None, numbers_only: bool = False):
    """Allocation numbers, times, file sizes and fresh ids differ between any two stores: mask them.
    With `numbers_only`, mask only volatile numbers (a duration such as 0.0250000 must not pass for
    the secret 250000), leaving every string, hidden ids included, to the secrets check."""
    if (key in VOLATILE or key == "id") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return "<volatile>"
    if key in VOLATILE and not numbers_only:
        return "<volatile>"
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return normalized(json.loads(value), numbers_only=numbers_only)  # the JSON texts of the reference tools
        except ValueError:
            pass
    if isinstance(value, str):
        if numbers_only:
            return value
        value = JOURNAL.sub("journal_size: <n> bytes", GENERATION.sub("generation <n>", INSTANT.sub("<time>", value)))
        value = DATABASE.sub("<database>", value)
        return UUID.sub(lambda m: f"{m.group(1)}_<id>", value)
    if isinstance(value, list):
        return [normalized(v, numbers_only=numbers_only) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v, k, numbers_only) for k, v in value.items()}
    return value


def test_the_law_knows_every_argument():
    for spec in REGISTRY.values():
        for name, schema in spec.input_schema.get("properties", {}).items():
            kinds = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
            assert name in VOCABULARY or "enum" in schema or {"boolean", "integer"} & set(kinds), \
                (spec.name, name)


def arguments_for(spec, names: dict):
    properties = spec.input_schema.get("properties", {})
    required = set(spec.input_schema.get("required", []))

    def value(name: str, schema: dict):
        if name in VOCABULARY:
            return st.sampled_from(VOCABULARY[name]).map(lambda v: _substitute(v, names))
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        if schema.get("type") == "boolean":
            return st.booleans()
        return st.integers(0, 3)

    # Arguments whose default is the clock are always given: answers must depend on the data, not the second.
    fixed = {n: value(n, s) for n, s in properties.items() if n in required or n in CLOCK}
    optional = {n: value(n, s) for n, s in properties.items() if n not in fixed}
    return st.fixed_dictionaries(fixed, optional=optional)


def call_strategy(names: dict, tool_name: str | None = None):
    tools = st.just(tool_name) if tool_name else st.sampled_from(sorted(REGISTRY))
    return tools.flatmap(lambda n: st.tuples(st.just(n), arguments_for(REGISTRY[n], names)))


CLOCK = {"event_ts", "now"}
CAPABILITY_SETS = [DEFAULT_CAPABILITIES, KNOWN_CAPABILITIES, frozenset({READ}), frozenset()]
FOLLOW_UPS = [("list_facts", {}), ("query_logic", {"goal": "salary(X, Y)"}), ("memory_search", {"query": "earns"}),
              ("get_kb_overview", {})]


@pytest.mark.parametrize("tool_name", sorted(REGISTRY))
def test_no_oracle_law(worlds, tool_name):
    """An outsider's calls answer exactly as they would if the hidden data did not exist, and leave it as it was."""
    names = worlds["names"]
    hidden_ids = [names["$hidden"], names["$session"]]

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(before=st.lists(call_strategy(names), max_size=1), call=call_strategy(names, tool_name),
           capabilities=st.sampled_from(CAPABILITY_SETS))
    def law(before, call, capabilities):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            paths = {w: copy_world(worlds, w, folder) for w in ("absent", "present")}
            kept = hidden_rows(paths["present"], hidden_ids)
            answers = {}
            for world, path in paths.items():
                with Memory(path, context=outsider(capabilities), global_path=str(folder / f"g-{world}.db")) as m:
                    answers[world] = [run(m, n, a) for n, a in [*before, call, *FOLLOW_UPS]]
            raw_absent, raw_present = (json.dumps(normalized(answers[w], numbers_only=True)) for w in ("absent", "present"))
            for secret in [*SECRETS, *hidden_ids]:
                assert (secret in raw_present) == (secret in raw_absent), secret
            assert normalized(answers["present"]) == normalized(answers["absent"])
            assert hidden_rows(paths["present"], hidden_ids) == kept
            assert audit_of(paths["present"]) == audit_of(paths["absent"])  # audit payloads reveal nothing either

    law()


# --- one check over the real server ------------------------------------------------------------------------------

def test_mcp_server_refuses_without_capabilities_and_hides_others(worlds, tmp_path):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from surfaces import server_params

    path = copy_world(worlds, "present", tmp_path)
    host = {"DATALOG_MEMORY_PRINCIPAL": "outsider", "DATALOG_MEMORY_SESSION_ID": "s1",
            "DATALOG_MEMORY_PROJECT_REMOTE": "https://example.org/other", "XDG_DATA_HOME": str(tmp_path / "xdg")}

    async def scenario():
        limited = {**host, "DATALOG_MEMORY_CAPABILITIES": "memory_read,memory_write_knowledge"}  # no memory_admin
        async with stdio_client(server_params(path, limited)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                renamed = await session.call_tool("rename_predicate", {"old_functor": "salary", "new_functor": "pay",
                                                                       "arity": 2})
                cleared = await session.call_tool("clear_context", {"category": "salary(_, _)"})
                return renamed, cleared

    renamed, cleared = anyio.run(scenario)
    assert renamed.is_error and renamed.meta["datalog-memory/error"]["code"] == "permission_denied"
    assert "memory_admin" in renamed.content[0].text
    assert not cleared.is_error and "250000" not in cleared.content[0].text
    assert "250000" not in json.dumps(cleared.structured_content)
    with Memory(path, context=OWNER) as m:
        assert m.memory_recall("salary", ["carol", None])["total"] == 1


def test_search_scores_do_not_depend_on_hidden_memories(tmp_path):
    """Full-text ranking statistics come from the caller's visible memories only: the same visible
    store scores the same whether or not another project holds memories with the same words."""
    def visible_scores(with_hidden: bool) -> list:
        path = str(tmp_path / f"{with_hidden}.db")
        if with_hidden:
            other = Memory(path, context=CallerContext(principal="alice", project_remote="https://h/o/secret"))
            for i in range(5):
                other.memory_remember(f"Lunch menu number {i}: soup, bread and a deploy of cake")
            other.close()
        me = Memory(path, context=CallerContext(principal="bob", project_remote="https://h/o/mine"))
        me.memory_remember("Deploys need two approvals before a deploy to production.")
        me.memory_remember("A rollback plan is written for every deploy.")
        found = me.memory_search("deploy approvals rollback")["results"]
        me.close()
        return [(r["memory"], r["score"]) for r in found]

    alone = visible_scores(False)
    assert len(alone) == 2
    assert visible_scores(True) == alone
