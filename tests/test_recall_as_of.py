"""memory_recall with as_of derives conclusions as the memories stood then: the rules (as they are now) run over
the projections of the memories current at that moment and the facts that rest on no memory."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.clock import utc_now

from tests.conftest import stepping_clock
from tests.test_sources import ctx


def manages(boss: str, report: str) -> dict:
    return {"predicate": "manages", "arguments": [boss, report], "statement": f"{boss} manages {report}"}


def derived_facts(result: dict) -> dict[str, set[str]]:
    return {d["fact"]: {x["id"] for x in d["memories"]} for d in result["derived"]}


def test_recall_as_of_derives_from_the_memories_current_then(store_file, clock):
    with Memory(store_file, context=ctx(), clock=clock) as m:
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        m.define_rule("reports_to(X, Z)", "manages(Y, X), reports_to(Y, Z)")
        m.remember_fact("manages(carol, dan)")  # asserted by hand: holds at every moment, rests on no memory
        start = utc_now(clock)
        a = m.memory_remember("Alice manages Bob.", projections=[manages("alice", "bob")])["id"]
        b = m.memory_remember("Bob manages Carol.", projections=[manages("bob", "carol")])["id"]
        both = utc_now(clock)
        c = m.memory_remember("Erin manages Carol now.", supersedes=[b], projections=[manages("erin", "carol")])["id"]
        after = utc_now(clock)
        m.memory_forget(ids=[a])

        # now: only erin's memory stands
        assert derived_facts(m.memory_recall("reports_to", ["dan", None])) == {"reports_to(dan, erin)": {c}}
        # when alice's and bob's memories stood, the chain ran through both of them
        then = m.memory_recall("reports_to", ["dan", None], as_of=both)
        assert then["as_of"] == both
        assert derived_facts(then) == {"reports_to(dan, bob)": {b}, "reports_to(dan, alice)": {a, b}}
        assert "## Derived by rules" in then["content"]
        # after the supersession, before the forgetting: bob's memory is gone, alice's stays (but leads nowhere)
        assert derived_facts(m.memory_recall("reports_to", ["dan", None], as_of=after)) == {
            "reports_to(dan, erin)": {c}}
        assert derived_facts(m.memory_recall("reports_to", ["bob", None], as_of=after)) == {
            "reports_to(bob, alice)": {a}}
        # before any memory: the hand-asserted fact alone rests on no memory, so nothing is recalled
        assert m.memory_recall("reports_to", as_of=start)["derived"] == []
        # a status as it stood then, not as it is now
        statuses = {x["id"]: x["status"] for d in then["derived"] for x in d["memories"]}
        assert statuses == {a: "active", b: "active"}


def test_recall_as_of_never_reads_memories_the_caller_may_not_see(store_file, clock):
    with Memory(store_file, context=ctx(), clock=clock) as m:
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        m.memory_remember("Alice manages Bob.", projections=[manages("alice", "bob")])
        moment = utc_now(clock)
        assert set(derived_facts(m.memory_recall("reports_to", as_of=moment))) == {"reports_to(bob, alice)"}
    with Memory(store_file, context=ctx(session_id="s2", project_remote=None), clock=clock) as other:
        assert other.memory_recall("reports_to", as_of=moment)["derived"] == []


def test_recall_as_of_text_says_the_rules_are_todays(store_file, clock):
    with Memory(store_file, context=ctx(), clock=clock) as m:
        m.define_rule("reports_to(X, Y)", "manages(Y, X)")
        m.memory_remember("Alice manages Bob.", projections=[manages("alice", "bob")])
        moment = utc_now(clock)
        out = m.memory_recall("reports_to", as_of=moment)
        assert "rules as they are now" in out["content"]


PEOPLE = ["ann", "ben", "cat", "dov"]
OPS = st.lists(st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(PEOPLE), st.sampled_from(PEOPLE)),
    st.tuples(st.just("forget"), st.sampled_from(["expire", "archive", "invalidate", "delete"]), st.just("")),
    st.tuples(st.just("supersede"), st.sampled_from(PEOPLE), st.sampled_from(PEOPLE)),
), min_size=1, max_size=8)


@settings(max_examples=25, deadline=None)
@given(OPS, st.data())
def test_recall_as_of_derives_exactly_what_was_derived_then(ops, data):
    """Law: for every moment T we looked, memory_recall(as_of=T) derives what memory_recall derived at T
    (while the rules stay as they are)."""
    clock = stepping_clock()
    with Memory(":memory:", context=ctx(), clock=clock) as m:
        m.define_rule("above(X, Y)", "manages(X, Y)")
        m.define_rule("above(X, Z)", "manages(X, Y), above(Y, Z)")
        m.remember_fact("manages(dov, ann)")
        ids: list[str] = []
        seen = []
        for op, first, second in ops:
            active = [i for i in ids if m.memory_get(i)["status"] == "active"]
            if op == "remember":
                ids.append(m.memory_remember(f"{first} manages {second}",
                                             projections=[manages(first, second)])["id"])
            elif active and op == "forget":
                m.memory_forget(ids=[data.draw(st.sampled_from(active))], action=first)
            elif active and op == "supersede":
                ids.append(m.memory_remember(f"{first} manages {second} now", supersedes=[
                    data.draw(st.sampled_from(active))], projections=[manages(first, second)])["id"])
            seen.append((utc_now(clock), derived_facts(m.memory_recall("above", limit=100))))
        for moment, derived in seen:
            assert derived_facts(m.memory_recall("above", limit=100, as_of=moment)) == derived
