"""Truth maintenance: supports, retraction, belief status of facts and conclusions."""

import pytest

from memory.errors import InvalidArguments, NotFound

from conftest import snapshot_counts


def facts(m):
    return [i["fact"] for i in m.list_facts(limit=10_000).items]


def test_assuming_twice_changes_nothing(mem):
    first = mem.assume_fact("available(a)", "infra")
    before = snapshot_counts(mem)
    again = mem.assume_fact("available(a)", "infra")
    assert first["added"] and not again["added"] and not again["created"]
    assert snapshot_counts(mem) == before


def test_retraction_removes_exactly_the_unsupported_and_what_rests_on_them(mem):
    mem.assume_fact("up(a)", "h1")
    mem.assume_fact("up(b)", "h1")
    mem.assume_fact("up(b)", "h2")  # a second assumption
    mem.assume_fact("up(c)", "h1")
    mem.remember_fact("up(c)")  # independently asserted copy
    mem.remember_fact("needed(a)")
    mem.remember_fact("needed(b)")
    mem.remember_fact("needed(c)")
    mem.define_rule("served(X)", "needed(X), up(X)")
    assert [r["X"] for r in mem.query_logic("served(X)").bindings] == ["a", "b", "c"]
    result = mem.retract_assumption("h1")
    assert result.removed == ["up(a)"] and result.kept == ["up(b)", "up(c)"]
    assert [r["X"] for r in mem.query_logic("served(X)").bindings] == ["b", "c"]
    assert mem.get_belief_status("up(a)")["status"] == "out"
    assert mem.get_belief_status("up(b)")["justifications"] == ["h2"]
    assert mem.get_belief_status("up(c)") | {"supports": None} == {
        "status": "in", "justifications": [], "source": "interactive", "fact": "up(c)", "memory": "default",
        "supports": None, "derived": False}
    with pytest.raises(NotFound, match="Unknown assumption 'h1'"):
        mem.retract_assumption("h1")


def test_belief_status_of_a_derived_conclusion_names_the_assumptions_at_its_leaves(mem):
    mem.assume_fact("temp(room_a, 21)", "sensor_ok")
    mem.assume_fact("occupied(room_a)", "badge_system")
    mem.remember_fact("comfortable_range(18, 24)")
    mem.define_rule("comfortable(R)", "occupied(R), temp(R, T), comfortable_range(L, H), T >= L, T =< H")
    status = mem.get_belief_status("comfortable(room_a)")
    assert status["status"] == "in" and status["derived"] is True
    assert status["justifications"] == ["badge_system", "sensor_ok"]
    mem.retract_assumption("sensor_ok")
    assert mem.get_belief_status("comfortable(room_a)")["status"] == "out"


def test_no_hidden_caps_on_retraction(mem):
    terms = [f"item({i})" for i in range(10_000)]
    mem.add_facts(terms[:10])  # ten of them are also asserted
    for t in terms:
        mem.assume_fact(t, "bulk")
    assert len(mem.get_justification("bulk")["facts"]) == 10_000
    result = mem.retract_assumption("bulk")
    assert len(result.removed) == 9_990 and len(result.kept) == 10
    assert mem.list_facts().total == 10


def test_retract_by_pattern(mem):
    for name in ["infra_db", "infra_web", "infra2", "budget"]:
        mem.assume_fact(f"ok({name})", name)
    result = mem.retract_assumptions("infra_*")
    assert result.assumptions == ["infra_db", "infra_web"]
    assert mem.list_assumptions()["assumptions"] == ["infra2", "budget"]
    assert mem.retract_assumptions("infra?").assumptions == ["infra2"]
    assert mem.retract_assumptions("nothing*").assumptions == []


@pytest.mark.parametrize("call", [
    lambda m: m.assume_fact("p(a)", "Bad"),
    lambda m: m.assume_fact("p(a)", "x-y"),
    lambda m: m.assume_fact("p(X)", "ok"),
    lambda m: m.assume_fact("p(a) :- q", "ok"),
    lambda m: m.retract_assumptions("a'); drop"),
    lambda m: m.get_justification("1abc"),
])
def test_bad_names_and_facts_are_refused_and_change_nothing(mem, call):
    mem.assume_fact("keep(me)", "base")
    before = snapshot_counts(mem)
    with pytest.raises(InvalidArguments):
        call(mem)
    assert snapshot_counts(mem) == before
