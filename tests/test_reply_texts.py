"""Replies a model can act on from their text alone: one test per case the agent trial found answered only in
structuredContent. Every assertion here reads the text content and nothing else."""

import pytest

from memory.errors import NotFound
from memory.tools import call_tool

NOW = 1_780_000_000


def text(memory, tool, arguments) -> str:
    return call_tool(memory, tool, arguments).text


def test_a_query_of_a_misspelled_predicate_says_so(mem):
    mem.remember_fact("depends_on(api, auth_service)")
    assert text(mem, "query_logic", {"goal": "depend_on(X, auth_service)"}).splitlines() == [
        "[]", "% warning: unknown procedure depend_on/2; did you mean depends_on/2"]


def test_a_cut_query_says_how_many_and_where_the_next_page_starts(mem):
    mem.add_facts([f"k({i})" for i in range(1225)])
    lines = text(mem, "query_logic", {"goal": "k(X)"}).splitlines()
    assert lines[-1] == "% 1000 of 1225 answers shown (offset 0); next page: offset 1000"
    assert text(mem, "query_logic", {"goal": "k(X)", "offset": 1000}).count('"X"') == 225  # the last page: no note
    assert "%" not in text(mem, "query_logic", {"goal": "k(X)", "offset": 1000})


def test_a_page_that_shows_no_answer_says_why_and_never_offers_itself_again(mem):
    mem.add_facts([f"k({i})" for i in range(3)])
    assert text(mem, "query_logic", {"goal": "k(X)", "limit": 0}).splitlines() == [
        "[]", "% 0 of 3 answers shown (limit 0 counts them); a limit of 1 or more shows them"]
    assert text(mem, "query_logic", {"goal": "k(X)", "offset": 50}).splitlines() == [
        "[]", "% none shown: offset 50 is past the last of 3 answers (offset 0 starts them)"]
    assert text(mem, "query_logic", {"goal": "k(X)", "offset": 3}).splitlines()[1].startswith("% none shown: offset 3")


def test_remembering_a_stored_fact_again_says_nothing_changed(mem):
    assert text(mem, "remember_fact", {"fact": "parent(tom, bob).  % from the census"}) == "Asserted: parent(tom, bob)"
    assert text(mem, "remember_fact", {"fact": "parent(tom, bob)"}) == (
        "Asserted: parent(tom, bob) (already stored: nothing changed)")


def test_forgetting_a_conclusion_says_it_is_derived_and_what_to_forget_instead(mem):
    mem.remember_fact("parent(tom, bob)")
    mem.define_rule("ancestor(X, Y)", "parent(X, Y)")
    with pytest.raises(NotFound) as failed:
        call_tool(mem, "forget_fact", {"fact": "ancestor(tom, bob)"})
    assert str(failed.value) == ("No matching clause found for: ancestor(tom, bob) (ancestor/2 is defined by rules: a "
                           "conclusion is not stored; forget a stored fact it rests on (explain_why lists them) "
                           "or the rule (forget_rule))")
    # a plain fact that is not stored keeps the reference's words
    with pytest.raises(NotFound) as failed:
        call_tool(mem, "forget_fact", {"fact": "parent(zed, bob)"})
    assert str(failed.value) == "No matching clause found for: parent(zed, bob)"


@pytest.fixture
def observed(mem):
    mem.remember(["account:admin", "host:db01"], NOW - 3600, 0.9, "failed_login")
    mem.remember(["account:admin", "host:db02"], NOW - 1800, 1.0, "")
    return mem


def test_recall_names_unknown_entities_and_words_it_did_not_understand(observed):
    lines = text(observed, "recall", {"query": "host:db09 failed logins last week", "now": NOW}).splitlines()
    assert lines[0].startswith("% unknown: host:db09 (no observation names them")
    assert lines[1] == "% not understood (ignored): failed, logins"
    assert lines[2].startswith("% window: 2026-05-21T")


def test_recall_says_a_time_it_could_not_read_stopped_it_and_how_to_write_one(observed):
    lines = text(observed, "recall", {"query": "host:db01 status at 11:00", "now": NOW}).splitlines()
    assert lines[0] == "% not understood (ignored): status"
    assert lines[1].startswith("% time not understood, so nothing is recalled: 11, 00 (write an ISO time, e.g. ")
    assert lines[-1] == "No observations recalled (time_not_understood: 11 00)"
    # the form it suggests is read: a time to the minute is that minute
    found = call_tool(observed, "recall", {"query": "host:db01 at 2026-05-28T19:26Z", "now": NOW})
    assert found.structured["count"] == 1
    assert found.structured["parsed"]["window"]["end"] - found.structured["parsed"]["window"]["start"] == 60
    # a time of day with its date in words reads as that date-time; an empty answer says where it looked
    for query in ("host:db01 at 19:26 on 2026-05-28", "host:db01 on 2026-05-28 at 19:26"):
        assert call_tool(observed, "recall", {"query": query, "now": NOW}).structured["count"] == 1, query
    assert text(observed, "recall", {"query": "host:db01 at 9:00 on 2026-05-28", "now": NOW}).splitlines() == [
        "% window: 2026-05-28T09:00:00Z .. 2026-05-28T09:01:00Z", "No observations recalled (no_edges_in_window)"]


def test_recall_shows_each_label_and_an_iso_time(observed):
    lines = text(observed, "recall", {"query": "account:admin", "now": NOW}).splitlines()
    assert "HEDGE-1 AUTH_EVENT/failed_login 2026-05-28T19:26:40Z w=0.9: account:admin, host:db01" in lines
    assert "HEDGE-2 AUTH_EVENT 2026-05-28T19:56:40Z w=1: account:admin, host:db02" in lines


def test_remember_shows_the_label_given(mem):
    assert text(mem, "remember", {"members": ["ip:10.0.0.1", "host:db01"], "event_ts": NOW,
                                  "formation": "NETWORK_FLOW"}).startswith(
        "Stored observation HEDGE-1 (NETWORK_EVENT/NETWORK_FLOW) at 1780000000 (2026-05-28T20:26:40Z)")


def test_prove_gives_the_step_and_rule_tags_verify_accepts(mem):
    mem.remember(["drone:a", "sector:s1"], NOW - 300)
    mem.remember(["drone:b", "sector:s1"], NOW - 200)
    mem.define_rule("converge(A, B, S)", "hedge(E1, 'DRONE_EVENT', _, _), member(E1, A), entity_type(A, drone), "
                    "member(E1, S), entity_type(S, sector), hedge(E2, 'DRONE_EVENT', _, _), member(E2, B), "
                    "entity_type(B, drone), member(E2, S), A @< B", name="converge")
    line = text(mem, "prove", {"query": "drones", "now": NOW})
    assert line.endswith("converge('drone:a', 'drone:b', 'sector:s1') STEP-1 (RULE-1 rule:converge) "
                         "<- HEDGE-1, HEDGE-2")


def test_a_step_tag_names_the_same_conclusion_whatever_goal_pred_keeps(mem):
    """prove with goal_pred numbered its conclusions among themselves, so verify without it read the tag as
    another conclusion and stripped a true sentence."""
    mem.remember(["drone:a", "sector:s1"], NOW - 300)
    mem.remember(["drone:b", "sector:s1"], NOW - 200)
    mem.define_rule("seen_in(D, S)", "hedge(E, 'DRONE_EVENT', _, _), member(E, D), entity_type(D, drone), "
                    "member(E, S), entity_type(S, sector)", name="seen_in")
    mem.define_rule("converge(A, B, S)", "seen_in(A, S), seen_in(B, S), A @< B", name="converge")
    mem.remember_fact("parent(tom, bob)")
    mem.define_rule("ancestor(X, Y)", "parent(X, Y)")  # conclusions of another kind, numbered too
    everything = mem.prove("drones", now=NOW)
    assert len(everything["proofs"]) > len(mem.prove("drones", goal_pred="converge", now=NOW)["proofs"])
    narrowed = mem.prove("drones", goal_pred="converge", now=NOW)
    tag_of = {n["fact"]: n["step_tag"] for p in everything["proofs"] for n in p["nodes"] if n.get("step_tag")}
    (root,) = [n for n in narrowed["proofs"][0]["nodes"] if n["fact"].startswith("converge")]
    assert root["step_tag"] == tag_of[root["fact"]]
    answer = f"drone:a and drone:b converged at sector:s1 ({root['step_tag']})."
    for goal_pred in (None, "converge"):
        checked = mem.verify(answer, query="drones", goal_pred=goal_pred, now=NOW)
        assert checked["sentences"][0]["kept"], checked["sentences"][0]["reason"]


def test_prove_with_a_misspelled_goal_pred_says_so(mem):
    mem.remember(["drone:a", "sector:s1"], NOW - 300)
    mem.define_rule("seen_in(D, S)", "hedge(E, 'DRONE_EVENT', _, _), member(E, D), entity_type(D, drone), "
                    "member(E, S), entity_type(S, sector)")
    assert text(mem, "prove", {"query": "drones", "goal_pred": "seen_inn", "now": NOW}).splitlines() == [
        "Nothing proved", "% warning: goal_pred seen_inn is no predicate a rule defines; did you mean seen_in"]
    assert "warning" not in text(mem, "prove", {"query": "drones", "goal_pred": "seen_in", "now": NOW})


def test_verify_says_why_each_sentence_was_stripped(observed):
    reply = text(observed, "verify", {"answer": "- account:admin logged in to host:db01 [HEDGE-1].\n"
                                                "- The attacker is in Moscow.", "query": "admin", "now": NOW})
    answer, notes = reply.split("\n\n")
    assert answer == "- account:admin logged in to host:db01 [HEDGE-1]."
    lines = notes.splitlines()
    assert lines[0] == "% outcome: stripped (1 of 2 sentence(s) kept)"
    assert lines[1].startswith('% stripped: "- The attacker is in Moscow.": ')
    assert lines[2].startswith("% tags you may cite: HEDGE-1")


def test_a_supported_answer_is_the_answer_then_its_outcome(observed):
    answer = "account:admin logged in to host:db01 [HEDGE-1]."
    assert text(observed, "verify", {"answer": answer, "query": "admin", "now": NOW}) == (
        f"{answer}\n\n% outcome: supported (1 of 1 sentence(s) kept)")


def test_a_rule_over_an_undefined_predicate_says_so_and_gives_its_id(mem):
    mem.remember_fact("depends_on(a, b)")
    assert text(mem, "define_rule", {"head": "dep(X, Y)", "body": "depnds_on(X, Y)", "name": "dep"}).split("\n") == [
        "Asserted rule: dep(X, Y) :- depnds_on(X, Y)", "% rule_id 1, name dep",
        "% warning: unknown procedure depnds_on/2; did you mean depends_on/2"]


def test_a_search_that_only_forgotten_memories_match_says_where_to_look(mem):
    receipt = mem.memory_remember("hedged requests cut the tail")
    mem.memory_forget(ids=[receipt["id"]])
    assert text(mem, "memory_search", {"query": "hedged"}).split("\n") == [
        "No memory matches 'hedged'",
        "% forgotten, expired or superseded memories match: search again with history: true"]
    assert text(mem, "memory_search", {"query": "nothing like it"}).split("\n") == [  # the tests run without a model
        "No memory matches 'nothing like it'", "% searched by words and their forms only (no embedding model here): "
        "try other words, synonyms or the language the memory is in"]


def test_retraction_and_forgetting_name_the_conclusions_that_fell(mem):
    mem.assume_fact("healthy(db)", "infra_ok")
    mem.remember_fact("uses(api, db)")
    mem.define_rule("up(S)", "uses(S, D), healthy(D)")
    assert text(mem, "retract_assumption", {"assumption": "infra_ok"}).splitlines()[1:] == [
        "% removed (1): healthy(db)", "% no longer hold (1): up(api)"]
    receipt = mem.memory_remember("Ada owns the lab", projections=[
        {"predicate": "owns", "arguments": ["ada", "lab"], "statement": "Ada owns the lab"}])
    mem.define_rule("owner(X)", "owns(X, _)")
    assert text(mem, "memory_forget", {"ids": [receipt["id"]]}).splitlines()[1:] == [
        "% facts removed (1): owns(ada, lab)", "% no longer hold (1): owner(ada)"]


def test_memory_remember_says_where_the_text_landed_and_what_it_made(mem):
    reply = text(mem, "memory_remember", {"memory": "We chose Redis", "projections": [
        {"predicate": "decision", "arguments": ["caching", "redis"], "statement": "caching: redis"}]})
    assert reply.startswith("Stored memory mem_") and " in session:" in reply
    assert reply.endswith("; facts: decision(caching, redis)")


def test_an_empty_answer_resting_on_a_rule_over_an_undefined_predicate_says_so(mem):
    mem.remember_fact("depends_on(a, b)")
    mem.define_rule("direct_dep(X, Y)", "depnds_on(X, Y)")
    mem.define_rule("affected(X)", "direct_dep(X, _)")
    assert text(mem, "query_logic", {"goal": "affected(X)"}).split("\n") == [
        "[]", "% warning: unknown procedure depnds_on/2; did you mean depends_on/2 (called by the rule "
              "direct_dep(X, Y) :- depnds_on(X, Y))"]
    assert text(mem, "query_logic", {"goal": "depends_on(z, Y)"}) == "[]"  # facts only: an honest no
    mem.define_rule("direct_dep(X, Y)", "depends_on(X, Y)")
    assert text(mem, "query_logic", {"goal": "affected(X)"}) == '[{"X":"a"}]'  # answers: no note


def test_forgetting_a_memory_again_says_it_was_already_gone_not_that_it_went(mem):
    first = mem.memory_remember("Bob prefers meetings in the morning.")["id"]
    second = mem.memory_remember("Ann drinks tea.")["id"]
    assert text(mem, "memory_forget", {"ids": [first]}).splitlines()[0] == f"Forgot 1 memory(ies) (expire): {first}"
    lines = text(mem, "memory_forget", {"ids": [first, second]}).splitlines()
    assert lines[:2] == [f"Forgot 1 memory(ies) (expire): {second}", f"% unchanged (1): {first} (already expired)"]
    assert text(mem, "memory_forget", {"ids": [first]}).splitlines()[:2] == [
        "Forgot 0 memory(ies) (expire): none", f"% unchanged (1): {first} (already expired)"]


def test_forgetting_a_runaway_rule_lists_what_fell_within_a_share_of_the_budget_only(tmp_path):
    from memory import Memory
    from memory.datalog import Budget

    m = Memory(str(tmp_path / "m.db"), budget=Budget(timeout_s=4.0))
    m.remember_fact("nat(0)")
    rule = m.define_rule("nat(N1)", "nat(N), N1 is N + 1")
    lines = text(m, "forget_rule", {"rule_id": rule.rule_id}).splitlines()
    assert lines[-1] == ("% conclusions that stopped holding: not computed (evaluating them before and after takes "
                         "more than the 2 s or the tuples this list may use; query_logic shows what holds now)")
    assert m.query_logic("nat(X)").total == 1  # the rule is gone all the same
    m.close()


def test_a_project_memory_without_a_project_says_where_one_comes_from(mem):
    with pytest.raises(NotFound) as refused:
        call_tool(mem, "memory_remember", {"memory": "x", "scope": "project"})
    assert "over HTTP its token names one: token create --project" in str(refused.value)
    assert "remember with scope session or global instead" in str(refused.value)


def test_remembering_an_untyped_member_warns_and_a_mistyped_argument_says_what_it_takes(mem):
    lines = text(mem, "remember", {"members": ["checkout", "host:db01"], "event_ts": NOW}).splitlines()
    assert lines[1] == ("% warning: member checkout has no type (write type:id, e.g. service:checkout): a rule or "
                        "recall asking for a type does not find it")
    assert "warning" not in text(mem, "remember", {"members": ["service:checkout"], "event_ts": NOW})
    with pytest.raises(Exception) as refused:
        call_tool(mem, "remember", {"members": ["host:a"], "event_ts": "2026-12-01T10:00:00Z"})
    assert "'event_ts': '2026-12-01T10:00:00Z' is not of type 'integer': Epoch seconds (default now)" in str(
        refused.value)


def test_enabling_toolsets_names_the_tools_it_enabled_not_the_whole_catalogue(mem):
    lines = text(mem, "enable_toolsets", {"enable": ["beliefs", "snapshots"]}).splitlines()
    assert lines[1:] == [
        "beliefs: assume_fact, get_belief_status, get_justification, list_assumptions, retract_assumption, "
        "retract_assumptions", "snapshots: save_snapshot, restore_snapshot, list_snapshots"]
    assert len(text(mem, "enable_toolsets", {}).splitlines()) == 8  # without enable: the catalogue


def test_a_belief_with_assumptions_and_other_supports_names_them_all(mem):
    mem.remember_fact("parent(tom, bob)")
    mem.assume_fact("parent(tom, bob)", "jim_has_kid")
    assert text(mem, "get_belief_status", {"fact": "parent(tom, bob)"}).splitlines() == [
        '{"status":"in","justifications":["jim_has_kid"],"source":"interactive"}',
        "% supports: asserted, assumption:jim_has_kid"]
    mem.assume_fact("healthy(db)", "infra_ok")  # assumptions only: the reference's reply as it is
    assert "%" not in text(mem, "get_belief_status", {"fact": "healthy(db)"})


def test_a_restore_says_what_it_dropped_and_brought_back(mem):
    mem.remember_fact("parent(tom, bob)")
    mem.remember_fact("parent(bob, ann)")
    mem.save_snapshot("before")
    mem.forget_fact("parent(bob, ann)")
    mem.remember_fact("parent(zed, tom)")
    assert text(mem, "restore_snapshot", {"name": "before"}).splitlines() == [
        "Snapshot 'before' restored successfully.", "% dropped (1): parent(zed, tom).",
        "% brought back (1): parent(bob, ann)."]
    assert text(mem, "restore_snapshot", {"name": "before"}) == "Snapshot 'before' restored successfully."


def test_an_empty_answer_to_a_goal_with_a_string_says_a_string_is_no_atom(mem):
    mem.remember_fact("parent(tom, bob)")
    assert text(mem, "query_logic", {"goal": 'parent("tom", X)'}).splitlines() == [
        "[]", '% warning: "tom" is a string, which never equals the atom tom; write the atom without double quotes '
        "if the facts hold one"]
    mem.remember_fact('city("New York")')
    assert text(mem, "query_logic", {"goal": 'city("New York")'}) == "[{}]"  # answered: nothing to say


def test_a_retraction_of_many_facts_names_twenty_and_counts_the_rest(mem):
    for i in range(23):
        mem.assume_fact(f"k({i})", "many")
    line = [ln for ln in text(mem, "retract_assumption", {"assumption": "many"}).splitlines()
            if ln.startswith("% removed")][0]
    assert line.startswith("% removed (23): k(0), k(1), ") and line.endswith(", k(19) (+3 more)")
