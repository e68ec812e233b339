"""memory_remember reports what a new memory may restate or contradict (never acting on it), and memory_forget by
a description only previews, then forgets by the ids it listed."""

import importlib

import pytest
from hypothesis import given, settings, strategies as st

from conftest import snapshot_counts
from memory import Memory
from memory.errors import Conflict, InvalidArguments, NotFound, PermissionDenied
from memory.access import CallerContext
from memory.access.context import DEFAULT_CAPABILITIES, READ, WRITE_GLOBAL, WRITE_PROJECT, WRITE_SESSION
from memory.sources.related import RESTATES_AT, TEXT_CANDIDATES, jaccard, probe_words
from memory.tools.registry import call_tool

REMOTE = "https://github.com/example/alpha"
STAGING = "The API deploy target is staging for the whole team."


def opened(location, **kw) -> Memory:
    base = {"principal": "agent_a", "session_id": "s1", "project_remote": REMOTE}
    return Memory(location, context=CallerContext(**{**base, **kw}))


def target(value: str) -> list[dict]:
    return [{"predicate": "deploy_target", "arguments": ["api", value], "statement": f"api deploys to {value}"}]


def audit_rows(m: Memory, operation: str) -> list:
    with m.store.read() as conn:
        return conn.execute("SELECT actor, payload FROM audit_log WHERE operation = ? ORDER BY id",
                            (operation,)).fetchall()


# --- restates and contradicts: honest cases -----------------------------------------------------------

def test_a_near_duplicate_text_is_reported_as_a_restatement_and_nothing_is_superseded(store_file):
    with opened(store_file) as m:
        old = m.memory_remember(STAGING)["id"]
        reply = call_tool(m, "memory_remember", {"memory": "The API deploy target is staging, for the whole team!"})
        new = reply.structured
        assert [(r["id"], r["relation"]) for r in new["related"]] == [(old, "restates")]
        assert new["related"][0]["why"] == ["the same words"] and new["related"][0]["can_supersede"]
        assert f"% may restate {old} (the same words)" in reply.text
        assert f'memory_forget {{"ids": ["{old}"], "action": "supersede", "superseded_by": "{new["id"]}"}}' \
            in reply.text
        assert m.memory_get(old)["status"] == "active" and new["supersedes"] == []  # reported, never acted on


def test_a_restatement_below_the_threshold_is_not_reported_and_one_above_says_its_score(store_file):
    with opened(store_file) as m:
        old = m.memory_remember("alpha beta gamma delta epsilon zeta eta theta iota kappa")["id"]
        # terms: 10 stems and 9 joined pairs each; shared 9 + 8 of 21 = 0.81
        near = m.memory_remember("alpha beta gamma delta epsilon zeta eta theta iota lambda")
        far = m.memory_remember("alpha beta gamma delta epsilon mu nu xi omicron pi")  # at most 5/15
        assert [r["id"] for r in near["related"]] == [old]
        assert near["related"][0]["why"] == ["near-duplicate text (0.81 of the words in either are in both)"]
        assert far["related"] == []


def test_the_same_key_with_another_value_is_a_contradiction_and_the_same_value_is_not(store_file):
    with opened(store_file) as m:
        old = m.memory_remember("We deploy the API to staging.", projections=target("staging"))["id"]
        agree = m.memory_remember("Staging is where the API goes.", projections=target("staging"))
        assert agree["related"] == []
        reply = call_tool(m, "memory_remember", {"memory": "Production is now where the API goes.",
                                                 "projections": target("production")})
        related = reply.structured["related"]
        assert {r["id"] for r in related} == {old, agree["id"]}
        assert all(r["relation"] == "contradicts" for r in related)
        assert related[0]["why"] == ["deploy_target(api, staging) there, deploy_target(api, production) here"]
        assert f"% may contradict {old}" in reply.text
        assert m.memory_get(old)["status"] == "active"


def test_other_keys_arities_and_unrelated_texts_are_not_reported(store_file):
    with opened(store_file) as m:
        m.memory_remember("Lunch is at noon on Fridays.", projections=[
            {"predicate": "deploy_target", "arguments": ["web", "staging"], "statement": "web on staging"},
            {"predicate": "deploy_target", "arguments": ["api", "staging", "eu"], "statement": "api eu on staging"},
            {"predicate": "owner", "arguments": ["api", "ann"], "statement": "ann owns the api"}])
        reply = call_tool(m, "memory_remember", {"memory": "The API deploys to production.",
                                                 "projections": target("production")})
        assert reply.structured["related"] == [] and "%" not in reply.text


def test_a_key_that_already_holds_several_values_is_a_relation_not_a_contradiction(store_file):
    def topic(value: str) -> list[dict]:
        return [{"predicate": "topic", "arguments": [value], "statement": f"about {value}"}]

    with opened(store_file) as m:
        first = m.memory_remember("Notes on caching.", projections=topic("caching"))["id"]
        assert [r["id"] for r in m.memory_remember("Notes on queues.", projections=topic("queues"))["related"]] \
            == [first]  # one other value: may be a contradiction
        m.memory_remember("Notes on retries.", projections=topic("retries"))
        assert m.memory_remember("Notes on logging.", projections=topic("logging"))["related"] == []


def test_memories_it_already_supersedes_are_not_reported(store_file):
    with opened(store_file) as m:
        old = m.memory_remember(STAGING, projections=target("staging"))["id"]
        new = m.memory_remember(STAGING, projections=target("production"), supersedes=[old])
        assert new["related"] == [] and new["supersedes"] == [old]


# --- what the caller may not see is never reported, counted or let in the way --------------------------

def test_another_namespaces_memories_are_never_reported(store_file):
    with opened(store_file, session_id="other", project_remote="https://example.org/other") as other:
        other.memory_remember(STAGING, projections=target("staging"))
        other.memory_remember(STAGING, scope="session", projections=target("staging"))
    with opened(store_file) as m:
        reply = call_tool(m, "memory_remember", {"memory": STAGING, "projections": target("production")})
        assert reply.structured["related"] == [] and reply.structured["related_truncated"] is False
        assert "%" not in reply.text


def test_forgotten_memories_are_hidden_and_do_not_crowd_out_a_visible_one(store_file):
    with opened(store_file) as m:
        visible = m.memory_remember(STAGING)["id"]
        gone = m.memory_remember(STAGING + " Again.")["id"]
        m.memory_forget(ids=[gone])
    # More newer near-duplicates in a namespace the caller cannot read than the candidates compared.
    with opened(store_file, session_id="other", project_remote="https://example.org/other") as other:
        for i in range(TEXT_CANDIDATES + 2):
            other.memory_remember(STAGING, scope="session" if i % 2 else "auto")
    with opened(store_file) as m:
        related = m.memory_remember(STAGING)["related"]
    assert [r["id"] for r in related] == [visible]


def test_many_newer_memories_sharing_its_longest_words_do_not_crowd_out_a_restatement(store_file):
    with opened(store_file) as m:
        old = m.memory_remember("Always rotate the credentials quarterly.")["id"]
        for i in range(TEXT_CANDIDATES + 2):  # newer, visible, holding the two longest words, not restatements
            m.memory_remember(f"Credentials quarterly report {i} for finance.")
        related = m.memory_remember("Rotate the credentials quarterly, always!")["related"]
    assert [r["id"] for r in related] == [old]


def test_a_caller_without_memory_read_is_told_nothing(store_file):
    with opened(store_file) as m:
        m.memory_remember(STAGING, projections=target("staging"))
    with opened(store_file, capabilities=frozenset({WRITE_PROJECT, WRITE_SESSION})) as m:
        stored = m.memory_remember(STAGING, projections=target("production"))
    assert stored["related"] == [] and stored["related_truncated"] is False


def test_a_readable_memory_the_caller_cannot_change_is_reported_but_not_offered_to_supersede(store_file):
    with opened(store_file, capabilities=DEFAULT_CAPABILITIES | {WRITE_GLOBAL}) as admin:
        shared = admin.memory_remember(STAGING, scope="global")["id"]
    with opened(store_file) as m:
        reply = call_tool(m, "memory_remember", {"memory": STAGING})
    (entry,) = reply.structured["related"]
    assert entry["id"] == shared and entry["can_supersede"] is False
    assert "you cannot change global memories" in reply.text and "superseded_by" not in reply.text


# --- the measure -------------------------------------------------------------------------------------

WORDS = st.sets(st.sampled_from([f"w{i}" for i in range(30)]), min_size=1, max_size=20)


@settings(max_examples=100, deadline=None)
@given(WORDS, WORDS)
def test_every_set_similar_enough_holds_a_probe_word(a, b):
    """The lookup's law: a set whose Jaccard index against A reaches the threshold holds one of A's probe words,
    so the full-text index finds every restatement among the candidates it reads."""
    if jaccard(a, b) >= RESTATES_AT:
        assert set(probe_words(a)) & b
    assert len(probe_words(a)) <= len(a)


# --- forgetting by a description ------------------------------------------------------------------------

def test_a_query_only_lists_what_would_go_and_changes_nothing(store_file):
    with opened(store_file) as m:
        old = m.memory_remember("The old SQLite backend plan.")["id"]
        m.memory_remember("Unrelated note about lunch.")
        before = snapshot_counts(m)
        for extra in ({}, {"dry_run": True}, {"dry_run": False}):
            reply = call_tool(m, "memory_forget", {"query": "old sqlite backend plan", **extra})
            out = reply.structured
            assert out["dry_run"] is True and out["forgotten"] == 0 and out["matched"] == 1
            assert [(t["id"], t["preview"]) for t in out["targets"]] == [(old, "The old SQLite backend plan.")]
            assert out["confirm"] == {"ids": [old], "action": "expire"}
            assert reply.text.startswith("Nothing forgotten yet: a query only lists. Would expire 1 memory(ies)")
            assert f'% to forget exactly these: memory_forget {{"ids": ["{old}"], "action": "expire"}}' in reply.text
            assert ("dry_run false does not apply to a query" in reply.text) == (extra == {"dry_run": False})
        assert snapshot_counts(m) == before


def test_forgetting_by_the_listed_ids_removes_exactly_those_in_one_audited_transaction(store_file):
    with opened(store_file) as m:
        plans = [m.memory_remember(f"Backend plan number {i}.")["id"] for i in range(3)]
        keep = m.memory_remember("Lunch is at noon.")["id"]
        preview = call_tool(m, "memory_forget", {"query": "backend plan", "action": "archive", "limit": 2})
        assert preview.structured["matched"] == 3 and preview.structured["truncated"] is True
        assert "% 2 of 3 matches listed: narrow the query or raise limit" in preview.text
        listed = preview.structured["confirm"]["ids"]
        assert len(listed) == 2 and set(listed) < set(plans)
        done = call_tool(m, "memory_forget", {**preview.structured["confirm"], "reason": "dropped"}).structured
        assert done["forgotten"] == 2 and [t["id"] for t in done["targets"]] == listed
        statuses = {ident: m.memory_get(ident)["status"] for ident in [*plans, keep]}
        assert statuses == {**{i: "active" for i in plans}, **{i: "archived" for i in listed}, keep: "active"}
        (row,) = audit_rows(m, "memory_forget")
        assert all(ident in row[1] for ident in listed) and '"by_query": false' in row[1]


def test_forgetting_by_query_searches_once(store_file, monkeypatch):
    search_module = importlib.import_module("memory.sources.search")  # the module, not the function it exports
    calls = []
    real = search_module.search
    monkeypatch.setattr(search_module, "search", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    with opened(store_file) as m:
        m.memory_remember("The old SQLite backend plan.")
        call_tool(m, "memory_forget", {"query": "backend plan"})
    assert calls == ["backend plan"]


def test_a_query_lists_what_the_caller_may_read_but_not_change_as_skipped(store_file):
    with opened(store_file, capabilities=DEFAULT_CAPABILITIES | {WRITE_GLOBAL}) as admin:
        shared = admin.memory_remember("Backend plan for everyone.", scope="global")["id"]
    with opened(store_file, session_id="other", project_remote="https://example.org/other") as other:
        other.memory_remember("Backend plan of another project.")
    with opened(store_file) as m:
        mine = m.memory_remember("Backend plan of this project.")["id"]
        reply = call_tool(m, "memory_forget", {"query": "backend plan"})
    out = reply.structured
    assert [t["id"] for t in out["targets"]] == [mine] and out["confirm"]["ids"] == [mine]
    assert out["skipped"] == [{"id": shared, "namespace": {"type": "global"}, "needs": WRITE_GLOBAL}]
    assert out["matched"] == 2  # the other project's memory is not counted
    assert f"% skipped 1 you may read but not change: {shared} (global: needs {WRITE_GLOBAL})" in reply.text


def test_a_query_preview_needs_memory_read(store_file):
    with opened(store_file, capabilities=frozenset({WRITE_PROJECT})) as m:
        with pytest.raises(PermissionDenied) as info:
            m.memory_forget(query="anything")
        assert info.value.details["required_capability"] == READ


# --- superseding after the report -----------------------------------------------------------------------

def test_supersede_names_its_successor_and_bad_combinations_change_nothing(store_file):
    with opened(store_file) as m:
        old = m.memory_remember(STAGING, projections=target("staging"))["id"]
        new = m.memory_remember(STAGING, projections=target("production"))
        hint = new["related"][0]
        assert hint["id"] == old
        before = snapshot_counts(m)
        hidden = "mem_00000000-0000-4000-8000-000000000000"
        for bad, error in (({"ids": [old], "action": "expire", "superseded_by": new["id"]}, InvalidArguments),
                           ({"query": "deploy", "action": "supersede", "superseded_by": new["id"]}, InvalidArguments),
                           ({"ids": [old], "action": "supersede", "superseded_by": old}, InvalidArguments),
                           ({"ids": [old], "action": "supersede", "superseded_by": hidden}, NotFound)):
            with pytest.raises(error):
                m.memory_forget(**bad)
        assert snapshot_counts(m) == before
        done = m.memory_forget(ids=[old], action="supersede", superseded_by=new["id"])
        assert done["forgotten"] == 1 and done["removed_facts"] == ["deploy_target(api, staging)"]
        got = m.memory_get(old)
        assert got["status"] == "superseded" and got["superseded_by"] == new["id"]
        assert got["history"][-1]["reason"] == f"superseded by {new['id']}"
        assert m.memory_get(new["id"])["supersedes"] == [old]
        with pytest.raises(Conflict):  # an ended memory cannot take over from another
            m.memory_forget(ids=[new["id"]], action="supersede", superseded_by=old)


def test_remember_with_its_report_is_one_transaction_with_its_audit_row(store_file):
    with opened(store_file) as m:
        old = m.memory_remember(STAGING, projections=target("staging"))["id"]
        before = snapshot_counts(m)
        with pytest.raises(NotFound):  # a failing remember: nothing of it stays, not even its report
            m.memory_remember(STAGING, projections=target("production"),
                              supersedes=["mem_00000000-0000-4000-8000-000000000000"])
        assert snapshot_counts(m) == before
        new = m.memory_remember(STAGING, projections=target("production"))
        assert [r["id"] for r in new["related"]] == [old]
        rows = audit_rows(m, "memory_remember")
        assert len(rows) == 2 and new["id"] in rows[1][1] and STAGING not in rows[1][1]
