"""Source memories through the library: the reference's behaviours (research notes §1.11) and ours."""

import hashlib
import json
import re
import uuid

import pytest
from hypothesis import given, settings, strategies as st

from conftest import snapshot_counts, stepping_clock
from memory import Memory
from memory.clock import utc_now
from memory.errors import Conflict, InvalidArguments, NotFound, PermissionDenied
from memory.access import CallerContext
from memory.access.context import DEFAULT_CAPABILITIES, READ, WRITE_GLOBAL, WRITE_PROJECT, WRITE_SESSION
from memory.access.namespaces import normalize_remote

REMOTE = "https://github.com/example/alpha"
TRICKY = "Use  Prolog\nas the authority ✓ — naïve café 👩‍💻\r\n\ttabs\u00a0nbsp  trailing  \n\n"


def ctx(**kw) -> CallerContext:
    base = {"principal": "agent_a", "session_id": "s1", "project_remote": REMOTE}
    return CallerContext(**{**base, **kw})


@pytest.fixture
def db(store_file):
    return store_file


def opened(db, **kw) -> Memory:
    return Memory(db, context=ctx(**kw))


# --- remember and get --------------------------------------------------------------------

def test_remember_returns_an_opaque_uuid4_id(db):
    with opened(db) as m:
        receipt = m.memory_remember("Use Prolog as the authority for this project.")
    assert re.fullmatch(r"mem_[0-9a-f-]{36}", receipt["id"]) and uuid.UUID(receipt["id"][4:]).version == 4
    assert re.fullmatch(r"src_[0-9a-f-]{36}", receipt["source_id"])
    assert receipt["status"] == "stored" and receipt["durable"] is True and receipt["version"] == 1
    assert receipt["namespace"]["type"] == "project" and receipt["namespace"]["id"].startswith("project_")
    assert receipt["projection_status"] == "not_attempted" and receipt["model_calls"] == 0


def test_exact_source_roundtrip_with_sha256_and_restart(db):
    with opened(db) as m:
        receipt = m.memory_remember(TRICKY)
    with opened(db) as m:  # a new process would see the same
        got = m.memory_get(receipt["id"])
    assert got["source_text"] == TRICKY
    assert got["sha256"] == receipt["sha256"] == hashlib.sha256(TRICKY.encode("utf-8")).hexdigest()
    assert got["lifecycle"] == "active" and got["current"] is True
    assert got["provenance"] == {"source_class": "model_inferred", "metadata": {}}


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1)
       .filter(lambda s: s.strip()))
def test_any_text_round_trips_byte_for_byte(text):
    with Memory(":memory:", context=ctx()) as m:
        got = m.memory_get(m.memory_remember(text)["id"])
    assert got["source_text"].encode("utf-8") == text.encode("utf-8")


def test_blank_and_oversized_text_are_refused_and_change_nothing(db):
    with opened(db) as m:
        m.memory_remember("first")
        before = snapshot_counts(m)
        for bad in ("", "   \n", "a\x00b", "x" * 1_000_001, 42):
            with pytest.raises(InvalidArguments):
                m.memory_remember(bad)
        assert snapshot_counts(m) == before


def test_same_text_twice_is_two_memories_with_two_audit_rows(db):
    with opened(db) as m:
        a, b = m.memory_remember("same"), m.memory_remember("same")
        assert a["id"] != b["id"] and a["source_id"] != b["source_id"]
        with m.store.read() as conn:
            assert conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 2
            assert conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'memory_remember'").fetchone()[0] == 2


def test_successful_write_emits_one_audit_row_naming_the_principal_and_capability(db):
    with opened(db) as m:
        receipt = m.memory_remember("audited")
        with m.store.read() as conn:
            rows = conn.execute("SELECT actor, operation, payload FROM audit_log").fetchall()
    assert len(rows) == 1 and rows[0][0] == "agent_a" and rows[0][1] == "memory_remember"
    assert f'"id": "{receipt["id"]}"' in rows[0][2] and '"capability": "memory_write_project"' in rows[0][2]


def test_idempotency_key_returns_the_first_receipt_and_refuses_other_text(db):
    with opened(db) as m:
        first = m.memory_remember("retry me", idempotency_key="k1",
                                  projections=[{"predicate": "p", "arguments": ["a"], "statement": "p of a"}])
        before = snapshot_counts(m)
        again = m.memory_remember("retry me", idempotency_key="k1")
        assert again["id"] == first["id"] and again["idempotent_replay"] is True
        assert again["projection_ids"] == first["projection_ids"]
        with pytest.raises(Conflict):
            m.memory_remember("other text", idempotency_key="k1")
        assert snapshot_counts(m) == before
        # the key is per namespace: the same key in the session namespace is a new memory
        assert m.memory_remember("retry me", idempotency_key="k1", scope="session")["id"] != first["id"]


# --- namespaces and authority --------------------------------------------------------------

def test_auto_scope_is_project_with_a_remote_else_session_never_global(db):
    with opened(db) as m:
        assert m.memory_remember("p")["namespace"]["type"] == "project"
    with opened(db, project_remote=None) as m:
        assert m.memory_remember("s")["namespace"] == {"type": "session", "id": "s1"}


def test_project_scope_without_a_project_is_refused_and_writes_nothing(db):
    with opened(db, project_remote=None) as m:
        m.memory_remember("seed")
        before = snapshot_counts(m)
        with pytest.raises(NotFound):
            m.memory_remember("no project", scope="project")
        assert snapshot_counts(m) == before


@pytest.mark.parametrize("scope, missing", [("session", WRITE_SESSION), ("project", WRITE_PROJECT),
                                            ("global", WRITE_GLOBAL)])
def test_each_missing_write_capability_refuses_and_writes_nothing(db, scope, missing):
    everything = DEFAULT_CAPABILITIES | {WRITE_GLOBAL}
    with opened(db, capabilities=everything) as m:
        m.memory_remember("seed", scope="session")
    with opened(db, capabilities=everything - {missing}, project_remote="https://example.org/new/repo") as m:
        before = snapshot_counts(m)
        with pytest.raises(PermissionDenied) as info:
            m.memory_remember("refused", scope=scope)
        assert info.value.details["required_capability"] == missing
        assert snapshot_counts(m) == before  # not even the new project row


def test_global_write_needs_its_capability_and_is_not_a_default(db):
    assert WRITE_GLOBAL not in DEFAULT_CAPABILITIES
    with opened(db, capabilities=DEFAULT_CAPABILITIES | {WRITE_GLOBAL}) as m:
        gid = m.memory_remember("shared fact", scope="global")["id"]
    with opened(db, session_id="other", project_remote="https://example.org/other") as m:
        assert m.memory_get(gid)["namespace"] == {"type": "global"}  # global is readable by everyone


def test_reading_needs_memory_read_even_with_a_known_id(db):
    with opened(db) as m:
        ident = m.memory_remember("secret")["id"]
    with opened(db, capabilities=frozenset({WRITE_PROJECT, WRITE_SESSION})) as m:
        for call in (lambda: m.memory_get(ident), lambda: m.memory_search("secret"),
                     lambda: m.memory_recall("p"), lambda: m.memory_forget(ids=[ident])):
            with pytest.raises(PermissionDenied):
                call()


def test_forgetting_needs_the_namespace_write_capability(db):
    with opened(db) as m:
        ident = m.memory_remember("keep")["id"]
    with opened(db, capabilities=frozenset({READ})) as m:
        before = snapshot_counts(m)
        with pytest.raises(PermissionDenied):
            m.memory_forget(ids=[ident])
        assert snapshot_counts(m) == before


def test_no_existence_oracle_unknown_and_hidden_ids_fail_alike(db):
    with opened(db, project_remote=None) as m:
        hidden = m.memory_remember("session one's")["id"]
    with opened(db, session_id="s2", project_remote=None) as m:
        errors = []
        for ident in (hidden, "mem_" + str(uuid.uuid4()), "nonsense"):
            with pytest.raises(NotFound) as info:
                m.memory_get(ident)
            errors.append((info.value.code, info.value.message.replace(ident, "<id>")))
        for ident in (hidden, "mem_" + str(uuid.uuid4())):
            with pytest.raises(NotFound) as info:
                m.memory_forget(ids=[ident])
            errors.append((info.value.code, info.value.message.replace(ident, "<id>")))
    assert len(set(errors)) == 1 and "existence_error(memory, <id>)" in errors[0][1]


def test_sessions_and_projects_are_isolated_everywhere(db):
    with opened(db, project_remote=None) as m:
        m.memory_remember("session one likes tea", projections=[
            {"predicate": "likes", "arguments": ["one", "tea"], "statement": "one likes tea"}])
    with opened(db) as m:
        m.memory_remember("alpha uses sqlite", projections=[
            {"predicate": "uses", "arguments": ["alpha", "sqlite"], "statement": "alpha uses sqlite"}])
    with opened(db, session_id="s2", project_remote="git@github.com:example/beta.git") as m:
        assert m.memory_search("tea sqlite")["results"] == []
        assert m.memory_recall("likes")["memories"] == [] and m.memory_recall("uses")["memories"] == []
        assert m.query_logic("likes(X, Y)").bindings == [] and m.query_logic("uses(X, Y)").bindings == []
        assert m.list_facts().items == [] and m.get_kb_overview()["predicates"] == []
        assert m.get_belief_status("likes(one, tea)")["status"] == "out"
    with opened(db, session_id="s2") as m:  # same project as alpha, other session
        assert [r["memory"] for r in m.memory_search("tea sqlite")["results"]] == ["alpha uses sqlite"]
        assert m.query_logic("uses(alpha, X)").bindings == [{"X": "sqlite"}]
        assert m.query_logic("likes(X, Y)").bindings == []


def test_remote_spellings_resolve_to_one_project(db):
    spellings = ["https://github.com/example/alpha", "https://github.com/example/alpha.git/",
                 "git@github.com:example/alpha.git", "ssh://git@github.com:22/example/alpha",
                 "http://GitHub.com/example/alpha"]
    assert {normalize_remote(s) for s in spellings} == {"https://github.com/example/alpha"}
    with opened(db, project_remote=spellings[0]) as m:
        ident = m.memory_remember("x")["id"]
    for spelling in spellings[1:]:
        with opened(db, project_remote=spelling) as m:
            assert m.memory_get(ident)["id"] == ident, spelling


def test_external_provenance_does_not_gain_trust(db):
    with opened(db, source_class="external_untrusted") as m:
        assert m.memory_get(m.memory_remember("from the web")["id"])["trust"] == "external_untrusted"
    with opened(db, source_class="made_up_class") as m:
        assert m.memory_get(m.memory_remember("odd")["id"])["trust"] == "unknown"


def test_context_comes_from_the_environment_with_reference_aliases():
    env = {"SYMBOLIC_MEMORY_PRINCIPAL": "ref", "DATALOG_MEMORY_PRINCIPAL": "ours", "SYMBOLIC_MEMORY_SESSION_ID": "sx",
           "SYMBOLIC_MEMORY_PROJECT_REMOTE": REMOTE, "SYMBOLIC_MEMORY_SOURCE_CLASS": "user_explicit"}
    c = CallerContext.from_env(env)
    assert (c.principal, c.session_id, c.project_remote, c.trust) == ("ours", "sx", REMOTE, "user_explicit")
    assert c.capabilities == DEFAULT_CAPABILITIES
    assert CallerContext.from_env({"DATALOG_MEMORY_CAPABILITIES": ""}).capabilities == frozenset()
    assert CallerContext.from_env({"SYMBOLIC_MEMORY_CAPABILITIES": " memory_read ,\tmemory_write_global"}).capabilities \
        == {READ, WRITE_GLOBAL}
    defaults = CallerContext.from_env({})
    assert (defaults.principal, defaults.session_id, defaults.source_class) == ("local_mcp", "mcp-local", "model_inferred")


# --- projections, rules and forgetting ------------------------------------------------------

PROJ = {"predicate": "manages", "arguments": ["alice", "bob"], "statement": "Alice manages Bob"}


def test_projections_are_facts_rules_use_and_proofs_lead_back_to_the_memory(db):
    with opened(db) as m:
        receipt = m.memory_remember("Alice manages Bob since May.", projections=[PROJ])
        assert receipt["facts"] == ["manages(alice, bob)"] and receipt["projection_status"] == "stored"
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        assert m.query_logic("reports_to(bob, Y)").bindings == [{"Y": "alice"}]
        tree = m.explain_why("reports_to(bob, alice)").detailed_tree
    leaf = tree["children"][0]
    assert leaf["supports"] == [f"source:{receipt['id']}"]
    assert leaf["memories"][0]["id"] == receipt["id"]
    assert leaf["memories"][0]["source_text"] == "Alice manages Bob since May."


def test_forgetting_the_only_support_takes_the_conclusion_out_but_not_other_supports(db):
    with opened(db) as m:
        a = m.memory_remember("Alice manages Bob.", projections=[PROJ])["id"]
        m.memory_remember("Carol manages Dan.", projections=[
            {"predicate": "manages", "arguments": ["carol", "dan"], "statement": "Carol manages Dan"}])
        m.remember_fact("manages(carol, dan)")  # also asserted by hand
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        result = m.memory_forget(ids=[a])
        assert result["removed_facts"] == ["manages(alice, bob)"] and result["forgotten"] == 1
        assert m.query_logic("reports_to(bob, Y)").bindings == []
        assert m.query_logic("reports_to(X, Y)").bindings == [{"X": "dan", "Y": "carol"}]
        assert m.memory_get(a)["status"] == "expired" and m.memory_get(a)["valid_to"] is not None


def test_bad_projections_are_refused_and_nothing_is_stored(db):
    with opened(db) as m:
        before = snapshot_counts(m)
        for bad in ([{"predicate": "Manages", "arguments": [], "statement": "x"}],
                    [{"predicate": "is", "arguments": [1, 2], "statement": "x"}],
                    [{"predicate": "p", "arguments": [[1]], "statement": "x"}],
                    [{"predicate": "p", "arguments": [float("inf")], "statement": "x"}],
                    [{"predicate": "p", "arguments": ["a"], "statement": "x", "extra": 1}],
                    [{"predicate": "p", "arguments": ["a"], "statement": "x", "quality": "great"}]):
            with pytest.raises(InvalidArguments):
                m.memory_remember("text", projections=bad)
        assert snapshot_counts(m) == before


def test_projection_arguments_keep_their_types(db):
    with opened(db) as m:
        m.memory_remember("t", projections=[{"predicate": "v", "arguments": ["a b", 1, 2.5, True], "statement": "s"}])
        assert m.query_logic("v(A, B, C, D)").bindings == [{"A": "'a b'", "B": "1", "C": "2.5", "D": "true"}]
        assert m.memory_recall("v", ["a b", 1, None, True])["total"] == 1
        assert m.memory_recall("v", ["a b", True, None, True])["total"] == 0  # true is not 1
        assert m.memory_recall("v", ["a b", "1", None, True])["total"] == 0  # "1" is not 1


# --- search ---------------------------------------------------------------------------------

def test_search_ranks_and_says_why(db):
    with opened(db) as m:
        best = m.memory_remember("We moved the backend from SQLite to PostgreSQL; SQLite stays for tests.",
                                 projections=[{"predicate": "backend", "arguments": ["postgresql"],
                                               "statement": "The backend is PostgreSQL"}])["id"]
        other = m.memory_remember("The SQLite file lives in .datalog-memory.", kind="fact")["id"]
        m.memory_remember("Lunch is at noon.")
        found = m.memory_search("postgresql backend sqlite")
        assert [r["id"] for r in found["results"]] == [best, other]
        assert found["results"][0]["why"][0].startswith("text matches")
        assert any("projection backend(postgresql)" in w for w in found["results"][0]["why"])
        assert [r["id"] for r in m.memory_search("sqlite", kind="fact")["results"]] == [other]
        page = m.memory_search("sqlite", limit=1)
        assert len(page["results"]) == 1 and page["truncated"] is True and page["total"] == 2


@pytest.mark.parametrize("query", ['"', "NEAR(a b)", "*", "a OR", "col:x", "') DROP TABLE sources; --", "^x"])
def test_search_treats_fts_syntax_as_words(db, query):
    with opened(db) as m:
        m.memory_remember("drop table sources near x")
        before = snapshot_counts(m)
        m.memory_search(query)
        assert snapshot_counts(m) == before


def test_search_modes_text_symbolic_and_exact(db):
    with opened(db) as m:
        phrase = m.memory_remember("Never deploy on  Fridays (two spaces).")["id"]
        reordered = m.memory_remember("Fridays: never deploy.")["id"]
        projected = m.memory_remember("A rule about releases.", projections=[
            {"predicate": "deploy_window", "arguments": ["monday"], "statement": "release window"}])["id"]
        assert {r["id"] for r in m.memory_search("deploy fridays", mode="text")["results"]} == {phrase, reordered}
        assert [r["id"] for r in m.memory_search("deploy", mode="symbolic")["results"]] == [projected]
        exact = m.memory_search("deploy on  Fridays", mode="exact")["results"]
        assert [r["id"] for r in exact] == [phrase] and exact[0]["why"] == ["text contains the query exactly"]
        assert m.memory_search("deploy on Fridays", mode="exact")["results"] == []  # one space is another text
        with pytest.raises(InvalidArguments):
            m.memory_search("x", mode="fuzzy")


def test_search_folds_accents_and_still_says_why(db):
    with opened(db) as m:
        m.memory_remember("A naïve café plan.")
        [hit] = m.memory_search("naive cafe")["results"]
        assert hit["why"] and hit["why"][0].startswith("text matches")


def test_search_history_includes_forgotten_memories(db):
    with opened(db) as m:
        ident = m.memory_remember("obsolete plan for caching")["id"]
        m.memory_forget(ids=[ident], action="archive")
        assert m.memory_search("caching")["results"] == []
        hist = m.memory_search("caching", history=True)["results"]
        assert [(r["id"], r["status"], r["current"]) for r in hist] == [(ident, "archived", False)]


# --- recall ---------------------------------------------------------------------------------

def test_recall_is_symbolic_first_with_source_only_when_needed(db):
    with opened(db) as m:
        m.memory_remember("Alice manages Bob.", projections=[PROJ])
        m.memory_remember("Carol manages Dan, except during audits.", projections=[
            {"predicate": "manages", "arguments": ["carol", "dan"], "statement": "Carol manages Dan",
             "quality": "lossy"}])
        out = m.memory_recall("manages", [None, "bob"])
        assert out["total"] == 1 and out["memories"][0]["source_context_included"] is False
        assert "source_text" not in out["memories"][0] and "## Source context" not in out["content"]
        assert "Alice manages Bob" in out["content"] and out["content"].startswith("# Recalled memory")
        lossy = m.memory_recall("manages", ["carol", None])
        assert lossy["memories"][0]["source_text"] == "Carol manages Dan, except during audits."
        assert "## Source context" in lossy["content"] and "> Carol manages Dan, except during audits." in lossy["content"]
        asked = m.memory_recall("manages", ["alice", "bob"], include_source=True)
        assert asked["memories"][0]["source_text"] == "Alice manages Bob."
        capped = m.memory_recall("manages", limit=1)
        assert capped["truncated"] is True and capped["total"] == 2 and len(capped["memories"]) == 1
        assert m.memory_recall("manages", ["nobody", None])["content"].startswith("# Recalled memory\n\nNo current")


def test_recall_puts_the_nearest_namespace_first(db):
    with opened(db, capabilities=DEFAULT_CAPABILITIES | {WRITE_GLOBAL}) as m:
        g = m.memory_remember("global", scope="global", projections=[PROJ])["id"]
        p = m.memory_remember("project", scope="project", projections=[PROJ])["id"]
        s = m.memory_remember("session", scope="session", projections=[PROJ])["id"]
        assert [x["id"] for x in m.memory_recall("manages")["memories"]] == [s, p, g]


# --- forgetting -----------------------------------------------------------------------------

def test_forget_by_query_lists_then_forgetting_is_by_the_listed_ids(db):
    with opened(db) as m:
        old = m.memory_remember("The old SQLite backend plan.")["id"]
        m.memory_remember("Unrelated note about lunch.")
        before = snapshot_counts(m)
        preview = m.memory_forget(query="old sqlite backend plan", dry_run=True)
        assert [t["id"] for t in preview["targets"]] == [old] and preview["forgotten"] == 0
        assert snapshot_counts(m) == before
        listed = m.memory_forget(query="old sqlite backend plan", action="invalidate", reason="plan dropped")
        assert listed["dry_run"] is True and snapshot_counts(m) == before  # a query only lists, even asked to apply
        applied = m.memory_forget(**listed["confirm"], reason="plan dropped")  # then by the ids it listed
        assert [t["id"] for t in applied["targets"]] == [old] and applied["forgotten"] == 1
        got = m.memory_get(old)
        assert got["status"] == "invalidated" and got["history"][-1]["reason"] == "plan dropped"
        again = m.memory_forget(ids=[old], action="invalidate")  # already so: nothing changes
        assert again["forgotten"] == 0


def test_forget_needs_exactly_one_target_mode(db):
    with opened(db) as m:
        with pytest.raises(InvalidArguments):
            m.memory_forget()
        with pytest.raises(InvalidArguments):
            m.memory_forget(ids=["mem_x"], query="x")
        with pytest.raises(InvalidArguments):
            m.memory_forget(ids=["mem_x"], action="archive", erase=True)


def test_forgetting_several_is_all_or_nothing(db):
    with opened(db) as m:
        ok = m.memory_remember("mine")["id"]
        before = snapshot_counts(m)
        with pytest.raises(NotFound):
            m.memory_forget(ids=[ok, "mem_" + str(uuid.uuid4())])
        assert snapshot_counts(m) == before


def test_delete_with_erase_keeps_only_a_tombstone(db):
    with opened(db) as m:
        ident = m.memory_remember("my password is hunter2", projections=[
            {"predicate": "password", "arguments": ["hunter2"], "statement": "the password is hunter2"}])["id"]
        m.memory_forget(ids=[ident], action="delete", erase=True, reason="user asked")
        got = m.memory_get(ident)
        assert got["source_text"] is None and got["erased"] is True and got["status"] == "deleted"
        assert got["sha256"] is None and got["projections"][0]["statement"] is None
        assert m.memory_search("hunter2", history=True)["results"] == []
        assert m.memory_search("password", history=True)["results"] == []  # not even the predicate's name
        with m.store.read() as conn:
            dump = "\n".join(str(r) for t in ("sources", "memory_projections", "facts", "memory_fts")
                             for r in conn.execute(f"SELECT * FROM {t}"))
            ops = [r[0] for r in conn.execute("SELECT operation FROM audit_log ORDER BY id")]
        assert "hunter2" not in dump
        assert ops == ["memory_remember", "memory_forget"]


# --- supersession and time ------------------------------------------------------------------

def test_as_of_answers_before_and_after_a_supersession(db, clock):
    with Memory(db, context=ctx(), clock=clock) as m:
        old = m.memory_remember("The backend is SQLite.", projections=[
            {"predicate": "backend", "arguments": ["sqlite"], "statement": "backend is SQLite"}])["id"]
        before = utc_now(clock)  # after the first remember, before the second
        new = m.memory_remember("The backend is PostgreSQL now.", supersedes=[old], projections=[
            {"predicate": "backend", "arguments": ["postgresql"], "statement": "backend is PostgreSQL"}])
        assert new["supersedes"] == [old]
        # now
        assert m.memory_get(old)["status"] == "superseded" and m.memory_get(old)["superseded_by"] == new["id"]
        assert [r["id"] for r in m.memory_search("backend")["results"]] == [new["id"]]
        assert [x["arguments"] for x in m.memory_recall("backend")["memories"]] == [["postgresql"]]
        assert m.query_logic("backend(X)").bindings == [{"X": "postgresql"}]
        # as the store stood before the supersession
        assert m.memory_get(old, as_of=before)["status"] == "active"
        assert m.memory_get(old, as_of=before)["current"] is True
        assert [r["id"] for r in m.memory_search("backend", as_of=before)["results"]] == [old]
        assert [x["arguments"] for x in m.memory_recall("backend", as_of=before)["memories"]] == [["sqlite"]]
        with pytest.raises(NotFound):
            m.memory_get(new["id"], as_of=before)  # did not exist yet
        with pytest.raises(Conflict):
            m.memory_remember("again", supersedes=[old])  # already superseded


def test_valid_time_bounds_what_is_current(db):
    with opened(db) as m:
        past = m.memory_remember("ended", valid_from="2020-01-01", valid_to="2021-01-01")["id"]
        m.memory_remember("future", valid_from="2999-01-01")
        assert m.memory_search("ended future")["results"] == []
        assert [r["id"] for r in m.memory_search("ended", history=True)["results"]] == [past]
        with pytest.raises(InvalidArguments):
            m.memory_remember("bad", valid_from="2021-01-01", valid_to="2020-01-01")
        with pytest.raises(InvalidArguments):
            m.memory_get(past, as_of="yesterday-ish")


def test_projections_are_not_exported_and_survive_a_snapshot_restore(db):
    with opened(db) as m:
        m.memory_remember("Alice manages Bob.", projections=[PROJ])
        m.remember_fact("team(a)")
        assert "manages" not in m.export_program()
        m.save_snapshot("s")
        m.remember_fact("team(b)")
        m.restore_snapshot("s")
        assert m.query_logic("team(X)").bindings == [{"X": "a"}]
        assert m.query_logic("manages(X, Y)").bindings == [{"X": "alice", "Y": "bob"}]  # still its memory's


# --- laws -------------------------------------------------------------------------------------

OPS = st.lists(st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(["alpha beta", "alpha gamma", "delta"])),
    st.tuples(st.just("forget"), st.sampled_from(["expire", "archive", "invalidate", "supersede", "delete"])),
    st.tuples(st.just("supersede"), st.sampled_from(["alpha omega", "delta omega"])),
), min_size=1, max_size=10)


@settings(max_examples=40, deadline=None)
@given(OPS, st.data())
def test_as_of_answers_exactly_as_the_store_stood(ops, data):
    """Law: for every moment T we looked, search, recall and get with as_of=T find what they found at T."""
    clock = stepping_clock()
    with Memory(":memory:", context=ctx(), clock=clock) as m:
        ids: list[str] = []
        seen = []
        for op, arg in ops:
            active = [i for i in ids if m.memory_get(i)["status"] == "active"]
            if op == "remember":
                ids.append(m.memory_remember(arg, projections=[
                    {"predicate": "tag", "arguments": [arg.split()[0]], "statement": arg}])["id"])
            elif active and op == "forget":
                m.memory_forget(ids=[data.draw(st.sampled_from(active))], action=arg)
            elif active and op == "supersede":
                ids.append(m.memory_remember(arg, supersedes=[data.draw(st.sampled_from(active))])["id"])
            moment = utc_now(clock)
            seen.append((moment, sorted(r["id"] for r in m.memory_search("alpha delta omega", limit=50)["results"]),
                         [x["id"] for x in m.memory_recall("tag", limit=50)["memories"]],
                         {i: m.memory_get(i)["status"] for i in ids}))
        for moment, searched, recalled, statuses in seen:
            # the same memories (bm25 ranks against today's corpus, so the order may differ)
            assert sorted(r["id"] for r in m.memory_search("alpha delta omega", limit=50, as_of=moment)["results"]) \
                == searched
            assert [x["id"] for x in m.memory_recall("tag", limit=50, as_of=moment)["memories"]] == recalled
            assert {i: m.memory_get(i, as_of=moment)["status"] for i in statuses} == statuses


def test_projections_survive_restart(db):
    with opened(db) as m:
        ident = m.memory_remember("Alice manages Bob.", projections=[PROJ])["id"]
    with opened(db) as m:
        assert [x["id"] for x in m.memory_recall("manages", ["alice", None])["memories"]] == [ident]
        assert m.query_logic("manages(alice, X)").bindings == [{"X": "bob"}]


def test_executable_looking_projection_values_remain_inert_data(db):
    payloads = ["X", "halt", "shell('rm -rf /')", "p :- q", "'); DROP TABLE facts; --"]
    with opened(db) as m:
        m.memory_remember("odd values", projections=[
            {"predicate": "value", "arguments": [p], "statement": p} for p in payloads])
        values = [json.loads(json.dumps(v["X"])) for v in m.query_logic("value(X)").values]
        assert sorted(values) == sorted(payloads)  # atoms with exactly that text, nothing run, nothing bound
        assert m.query_logic("value('X')").total == 1 and m.query_logic("value(Y), Y == halt").total == 1


def test_recall_follows_rules_back_to_the_memories_they_rest_on(db):
    with opened(db) as m:
        a = m.memory_remember("Alice manages Bob.", projections=[PROJ])["id"]
        b = m.memory_remember("Bob manages Carol, mostly.", projections=[
            {"predicate": "manages", "arguments": ["bob", "carol"], "statement": "Bob manages Carol",
             "quality": "lossy"}])["id"]
        m.remember_fact("manages(carol, dan)")  # asserted by hand: not a memory
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        m.define_rule("reports_to(X, Z)", "manages(Y, X), reports_to(Y, Z)")
        out = m.memory_recall("reports_to", ["carol", None])
        assert out["memories"] == []
        derived = {d["fact"]: d for d in out["derived"]}
        assert set(derived) == {"reports_to(carol, alice)", "reports_to(carol, bob)"}
        assert {x["id"] for x in derived["reports_to(carol, alice)"]["memories"]} == {a, b}
        assert derived["reports_to(carol, bob)"]["memories"][0]["source_text"] == "Bob manages Carol, mostly."
        assert "## Derived by rules" in out["content"] and "> Bob manages Carol, mostly." in out["content"]
        # reports_to(dan, carol) rests only on the hand-asserted fact: no memory behind it, so not recalled
        assert {d["fact"] for d in m.memory_recall("reports_to", ["dan", None])["derived"]} == {
            "reports_to(dan, bob)", "reports_to(dan, alice)"}
        m.memory_forget(ids=[b])
        assert m.memory_recall("reports_to", ["carol", None])["derived"] == []
    with opened(db, session_id="s2", project_remote=None) as m:  # nobody else's memories leak in
        assert m.memory_recall("reports_to", ["bob", None])["derived"] == []


def test_renaming_a_projected_predicate_carries_the_projections_along(db):
    with opened(db) as m:
        ident = m.memory_remember("Alice manages Bob.", projections=[PROJ])["id"]
        m.rename_predicate("manages", "leads", 2)
        assert m.query_logic("leads(alice, X)").bindings == [{"X": "bob"}]
        assert [x["id"] for x in m.memory_recall("leads")["memories"]] == [ident]
        assert m.memory_recall("manages")["memories"] == []
        assert m.memory_get(ident)["projections"][0]["fact"] == "leads(alice, bob)"
        m.memory_forget(ids=[ident])
        assert m.query_logic("leads(X, Y)").bindings == []
