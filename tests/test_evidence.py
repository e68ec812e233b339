"""Evidence memory through the library: observations, recall, reason, prove, verify and detect."""

import hashlib
import json

import pytest
from hypothesis import given, settings, strategies as st

from conftest import snapshot_counts
from evidence_scenario import (BEACON, BURST, CLUSTER, CONVERGE_RULE, CONVERGING, HUB, LATERAL, NOW, SPOKE, START,
                               TARGET_SECTOR, THREAT_RULE, background, with_patterns, zipf_background)
from memory import Memory
from memory.errors import Conflict, InvalidArguments, NotFound
from memory.evidence.timewindow import parse_window

SIZE = 10_000
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


@pytest.fixture
def m(store_location):
    memory = Memory(store_location, actor="observer")
    yield memory
    memory.close()


def threat_rules(m: Memory) -> None:
    m.define_rule(*CONVERGE_RULE, name="converge", confidence=0.9)
    m.define_rule(*THREAT_RULE, name="coordinated_threat")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    memory = Memory(str(tmp_path_factory.mktemp("evidence") / "scenario.db"), actor="observer")
    memory.remember_observations(with_patterns(SIZE))
    threat_rules(memory)
    yield memory
    memory.close()


# --- remember --------------------------------------------------------------------------------

def test_remember_returns_the_reference_fields_and_infers_the_formation(m):
    stored = m.remember(["account:admin", "host:db01"], 1_700_000_000, 0.7, "LOGIN")
    assert stored["stored"] is True and stored["table"] == "MEMORY" and stored["event_ts"] == 1_700_000_000
    assert stored["formation"] == "LOGIN" and stored["structural_formation"] == "AUTH_EVENT"
    assert stored["weight"] == 0.7 and stored["members"] == ["account:admin", "host:db01"]
    assert len(stored["member_ids"]) == 2 and stored["hedge_tag"] == f"HEDGE-{stored['id']}"
    assert m.remember(["drone:d1", "account:x"])["structural_formation"] == "DRONE_EVENT"  # first rule wins
    assert m.remember(["machine:m1", "account:x"])["structural_formation"] == "AUTH_EVENT"
    assert m.remember(["plain name", "other"])["structural_formation"] == "OBSERVATION"
    assert m.remember(["a:x", "a:x", " a:x "])["members"] == ["a:x"]  # duplicates collapse


def test_the_formation_table_is_data(m):
    with m.store.write() as conn:
        conn.execute("INSERT INTO formation_rules (priority, formation, member_types) VALUES (5, 'SENSOR_EVENT', "
                     "'[\"sensor\"]')")
    assert m.remember(["sensor:s1", "drone:d1"])["structural_formation"] == "SENSOR_EVENT"


@pytest.mark.parametrize("args", [
    {"members": []}, {"members": "account:a"}, {"members": [""]}, {"members": [1]}, {"members": ["a"] * 65},
    {"members": ["a"], "weight": 0}, {"members": ["a"], "weight": 1.5}, {"members": ["a"], "weight": True},
    {"members": ["a"], "event_ts": 1.5}, {"members": ["a"], "event_ts": "yesterday"},
    {"members": ["a"], "formation": 7},
])
def test_bad_observations_are_refused_and_change_nothing(m, args):
    m.remember(["seed:x"])
    before = snapshot_counts(m)
    with pytest.raises(InvalidArguments):
        m.remember(**args)
    with pytest.raises(InvalidArguments):
        m.remember_observations([{"members": ["fine:x"]}, args])  # all or nothing
    assert snapshot_counts(m) == before


def test_each_observation_is_audited_and_hash_chained(m):
    for i in range(3):
        m.remember([f"host:h{i}", "account:a"], T0 + i)
    with m.store.read() as conn:
        audit = conn.execute("SELECT actor, operation FROM audit_log").fetchall()
        rows = conn.execute("SELECT id, content_hash, chain_hash FROM hyperedges ORDER BY id").fetchall()
    assert audit == [("observer", "remember")] * 3
    chain = ""
    for _, content, chained in rows:
        chain = hashlib.sha256((chain + content).encode()).hexdigest()
        assert chained == chain


def test_observations_are_relations_rules_use_and_member_stays_a_user_relation(m):
    e = m.remember(["drone:d1", "sector:s1"], T0, 0.5)["id"]
    m.remember_fact("member(team_a, alice)")
    assert m.query_logic("hedge(E, F, T, W)").bindings == [{"E": str(e), "F": "'DRONE_EVENT'", "T": str(T0),
                                                            "W": "0.5"}]
    assert {b["X"] for b in m.query_logic("member(E, X)").bindings} == {"'drone:d1'", "'sector:s1'", "alice"}
    assert m.query_logic("entity_type('drone:d1', T)").bindings == [{"T": "drone"}]
    leaf = m.explain_why(f"member({e}, 'drone:d1')").detailed_tree
    assert leaf["supports"] == [f"observation:HEDGE-{e}"]


# --- recall ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, window", [
    ("last 3 days", (T0 - 3 * 86_400, T0 + 1)),
    ("in the past hour", (T0 - 3_600, T0 + 1)),
    ("since 2025-12-25", (1_766_620_800, T0 + 1)),  # memory as of now holds nothing later
    ("after 2025-12-25", (1_766_707_200, T0 + 1)),
    ("from 2025-12-25", (1_766_620_800, T0 + 1)),
    ("before 2025-12-25", (None, 1_766_620_800)),
    ("between 2025-12-01 and 2025-12-02", (1_764_547_200, 1_764_720_000)),
    ("yesterday", (T0 - 86_400, T0)),
    ("today", (T0, T0 + 86_400)),
    ("on 2025-12-31", (T0 - 86_400, T0)),
    ("at 1766000000", (1_766_000_000, 1_766_000_001)),
    ("in May 2025", (1_746_057_600, 1_748_736_000)),
    ("during 2025", (1_735_689_600, T0)),
    ("in December", (1_764_547_200, T0)),  # the latest December that has begun
    ("in January", (T0, 1_769_904_000)),
    ("on Dec 24, 2025", (1_766_534_400, 1_766_620_800)),
    ("on 24th December 2025", (1_766_534_400, 1_766_620_800)),
    ("from 2025-12-01 to 2025-12-02", (1_764_547_200, 1_764_720_000)),
    ("since 2025-12-01 before 2025-12-02", (1_764_547_200, 1_764_633_600)),  # phrases intersect
    ("during Dec 2025 in the last 3 days", (T0 - 3 * 86_400, T0)),
    ("nothing temporal here", None),
    ("it may rain", None),  # "may" alone is a verb, not the month
])
def test_time_windows_are_parsed_relative_to_now(text, window):
    found, _ = parse_window(text, T0)
    assert (None if found is None else (found.start, found.end)) == window


def test_recall_parses_entities_types_and_window_and_ranks_deterministically(m):
    a = m.remember(["account:admin", "host:db01"], T0 - 3_600, 1.0)["id"]
    b = m.remember(["account:admin", "host:web01"], T0 - 2 * 86_400, 1.0)["id"]
    c = m.remember(["account:guest", "host:db01"], T0 - 600, 1.0)["id"]
    d = m.remember(["account:admin", "host:db01"], T0 - 10 * 86_400, 1.0)["id"]
    m.remember(["drone:d1", "sector:s1"], T0 - 60)
    out = m.recall("what did admin do on host:db01 in the last 3 days?", now=T0)
    assert out["parsed"]["entities"] == ["host:db01", "account:admin"] and out["parsed"]["unknown_entities"] == []
    assert out["parsed"]["window"]["start"] == T0 - 3 * 86_400
    assert [e["id"] for e in out["edges"]] == [a, c, b]  # both members first, then one, d is outside the window
    assert [e["hedge_tag"] for e in out["edges"]] == [f"HEDGE-{a}", f"HEDGE-{c}", f"HEDGE-{b}"]
    assert m.recall("what did admin do on host:db01 in the last 3 days?", now=T0) == out  # deterministic
    assert [e["id"] for e in m.recall("drones", now=T0)["edges"]] == [5]
    assert d not in [e["id"] for e in out["edges"]]
    unknown = m.recall("host:nowhere", now=T0)
    assert unknown["abstained"] is True and unknown["reason"] == "unknown_entity:host:nowhere"
    assert m.recall("", top_k=2, now=T0)["count"] == 2  # an empty query: the most recent observations


def test_recall_ties_break_by_id(m):
    ids = [m.remember(["host:x", f"account:u{i}"], T0, 1.0)["id"] for i in range(5)]
    assert [e["id"] for e in m.recall("host:x", now=T0)["edges"]] == ids


@pytest.mark.parametrize("query", ["since 2026-13-45", "host:x on 2026-02-30", "between 2025-01-01 and 2025-04-31",
                                   "in the last -3 days", "past 0 hours", "on May 32, 2025", "at 2025-12-01T25:00"])
def test_recall_refuses_impossible_dates_and_negative_durations_and_changes_nothing(m, query):
    m.remember(["host:x", "account:a"], T0 - 60)
    with pytest.raises(InvalidArguments) as error:
        m.recall(query, now=T0)
    assert error.value.code == "invalid_arguments" and error.value.details["argument"] == "query"


def test_recall_echoes_what_it_did_not_understand(m):
    m.remember(["host:x", "account:admin"], T0 - 60)
    m.remember(["drone:d1", "sector:s1"], T0 - 60)
    out = m.recall("what happened to admin on host:x next tuesday, exactly?", now=T0)
    assert out["parsed"]["entities"] == ["host:x", "account:admin"]
    assert out["parsed"]["unparsed"] == ["happened", "next", "tuesday", "exactly"] and out["parsed"]["window"] is None
    understood = m.recall("drones seen by admin in May 2026", now=T0 + 200 * 86_400)
    assert understood["parsed"]["types"] == ["drone"] and understood["parsed"]["unparsed"] == ["seen"]
    assert understood["parsed"]["window"]["text"] == "in May 2026"


def test_since_and_after_never_reach_past_now(m):
    past = m.remember(["drone:d1", "sector:s1"], T0 - 86_400)["id"]
    m.remember(["drone:d1", "sector:s1"], T0 + 2 * 86_400)  # recorded ahead of the `now` asked about
    for query in ("drone:d1 since 2025-12-01", "drone:d1 after 2025-12-01", "drone:d1 from 2025-12-01",
                  "since 2025-12-01"):
        assert [e["id"] for e in m.recall(query, now=T0)["edges"]] == [past], query


def test_recall_understands_month_and_year_phrases(m):
    may = m.remember(["drone:d1", "sector:s1"], 1_747_000_000)["id"]  # 2025-05-11
    m.remember(["drone:d1", "sector:s1"], 1_750_000_000)  # 2025-06-15
    m.remember(["drone:d1", "sector:s1"], 1_700_000_000)  # 2023-11-14
    assert [e["id"] for e in m.recall("drone:d1 in May 2025", now=T0)["edges"]] == [may]
    assert len(m.recall("drone:d1 during 2025", now=T0)["edges"]) == 2
    assert m.recall("drone:d1 during 2024", now=T0)["reason"] == "no_edges_in_window"


# --- reason and prove --------------------------------------------------------------------------

def test_reason_derives_the_planted_conclusion_with_confidence(scenario):
    out = scenario.reason(TARGET_SECTOR, now=NOW)
    threat = [d for d in out["derived"] if d["pred"] == "coordinated_threat"]
    assert [(d["args"], d["rule_id"]) for d in threat] == [([TARGET_SECTOR], "rule:coordinated_threat")]
    assert threat[0]["confidence"] == pytest.approx(0.9 * 0.9 * 0.8)  # rule 0.9 times both edges' weights, once each
    assert out["rules_fired"] == ["rule:converge", "rule:coordinated_threat"]
    assert out["edges_considered"] == 2 and out["timed_out"] is False and out["iterations"] >= 1


def test_prove_ends_every_branch_in_stored_evidence_with_a_stable_id(scenario):
    first = scenario.prove(TARGET_SECTOR, goal_pred="coordinated_threat", now=NOW)
    again = scenario.prove(TARGET_SECTOR, goal_pred="coordinated_threat", now=NOW)
    assert first["count"] == 1 and first == again
    proof = first["proofs"][0]
    assert proof["proof_id"].startswith("proof-") and proof["status"] == "proved"
    nodes = {n["id"]: n for n in proof["nodes"]}
    sources = {e["from"] for e in proof["edges"]}
    leaves = [n for n in proof["nodes"] if n["id"] not in {e["to"] for e in proof["edges"]}]
    assert all(n["kind"] in ("evidence", "fact", "builtin") for n in leaves)
    assert all(n["id"] in sources for n in proof["nodes"][:-1])  # everything feeds the root
    evidence = {n["hedge_tag"] for n in leaves if n["kind"] == "evidence"}
    recalled = {e["hedge_tag"]: e["members"] for e in scenario.recall(TARGET_SECTOR, now=NOW)["edges"]}
    assert evidence == set(recalled) and {m for ms in recalled.values() for m in ms} == {TARGET_SECTOR, *CONVERGING}
    root = nodes[proof["nodes"][-1]["id"]]
    assert root["kind"] == "conclusion" and root["rule_tag"].startswith("RULE-") and root["step_tag"].startswith("STEP-")


def test_confidence_is_the_best_derivation_and_counts_each_observation_once(m):
    m.define_rule("seen(X)", "member(E, X), hedge(E, _, _, _)", name="seen", confidence=0.5)
    m.remember(["drone:d1", "sector:s1"], T0, 0.4)
    m.remember(["drone:d1", "sector:s2"], T0, 0.8)
    derived = {d["fact"]: d["confidence"] for d in m.reason("", now=T0)["derived"]}
    assert derived["seen('drone:d1')"] == pytest.approx(0.5 * 0.8)  # the better of two, 0.8 counted once
    assert derived["seen('sector:s1')"] == pytest.approx(0.5 * 0.4)


def test_rule_names_are_unique_and_confidences_bounded(m):
    m.define_rule("p(X)", "q(X)", name="same")
    with pytest.raises(Conflict):
        m.define_rule("r(X)", "q(X)", name="same")
    for bad in (0, 1.5, -1, True):
        with pytest.raises(InvalidArguments):
            m.define_rule("s(X)", "q(X)", confidence=bad)
    assert m.define_rule("p(X)", "q(X)", confidence=0.3).confidence == 0.3  # re-defining sets it


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["drone:a", "drone:b", "drone:c"]), st.sampled_from(["sector:1", "sector:2"]),
                          st.integers(0, 1500), st.sampled_from([0.25, 0.5, 1.0])), min_size=1, max_size=12))
def test_reason_derives_exactly_what_the_engine_derives(observations):
    """Law: over all observations, reason's conclusions are the engine's answers (only confidence is added)."""
    with Memory(":memory:") as m:
        m.remember_observations([{"members": [d, s], "event_ts": T0 + t, "weight": w} for d, s, t, w in observations])
        threat_rules(m)
        derived = {d["fact"] for d in m.reason("", top_k=1000, now=T0)["derived"] if d["pred"] == "coordinated_threat"}
        engine = {f"coordinated_threat({b['S']})" for b in m.query_logic("coordinated_threat(S)").bindings}
        assert derived == engine
        assert all(0 < d["confidence"] <= 1 for d in m.reason("", top_k=1000, now=T0)["derived"])


# --- verify ----------------------------------------------------------------------------------

def test_verify_keeps_supported_strips_uncited_and_unrelated_and_abstains_without_proof(scenario):
    proof = scenario.prove(TARGET_SECTOR, goal_pred="coordinated_threat", now=NOW)["proofs"][0]
    tags = sorted({n["hedge_tag"] for n in proof["nodes"] if n["kind"] == "evidence"})
    step = proof["nodes"][-1]["step_tag"]
    beacon_tag = scenario.recall(f"{BEACON[0]} {BEACON[1]}", top_k=1, now=NOW)["edges"][0]["hedge_tag"]
    converge_step = next(n["step_tag"] for n in proof["nodes"] if n["kind"] == "conclusion"
                         and n["fact"].startswith("converge("))
    answer = (f"Drones {CONVERGING[0]} and {CONVERGING[1]} were sighted at {TARGET_SECTOR} [{tags[0]}] [{tags[1]}]. "
              f"They converged on it [{converge_step}]. "
              f"This is a coordinated threat [{step}]. "
              "A third drone was also there. "
              f"The drones came from {BEACON[1]} [{beacon_tag}]. "
              f"Drone drone:d7 joined them [{tags[0]}]. "
              f"Drones {CONVERGING[0]} and {CONVERGING[1]} converged on {TARGET_SECTOR} [{tags[0]}]. "
              "Should we alert the team?")
    out = scenario.verify(answer, query=TARGET_SECTOR, now=NOW)
    assert out["outcome"] == "stripped" and out["proved"] is True
    assert out["supported_count"] == 3 and out["stripped_count"] == 4 and out["coverage"] == pytest.approx(3 / 7)
    reasons = {s["sentence"]: s["reason"] for s in out["stripped"]}
    assert reasons["A third drone was also there."] == "no citation"
    assert "cites no allowed tag" in reasons[f"The drones came from {BEACON[1]} [{beacon_tag}]."]
    assert "drone:d7" in reasons[f"Drone drone:d7 joined them [{tags[0]}]."]
    # one sighting is not a convergence: the rule concluded it from both, so its proof step or both sightings
    # (as in the reference's own example) say it, never one of them
    assert "drone:x2 is not in the cited evidence" in reasons[
        f"Drones {CONVERGING[0]} and {CONVERGING[1]} converged on {TARGET_SECTOR} [{tags[0]}]."]
    both = scenario.verify(f"Drones {CONVERGING[0]} and {CONVERGING[1]} converged on {TARGET_SECTOR} [{tags[0]}] "
                           f"[{tags[1]}].", query=TARGET_SECTOR, now=NOW)
    assert both["outcome"] == "supported", both["stripped"]
    assert out["answer"] == (f"Drones {CONVERGING[0]} and {CONVERGING[1]} were sighted at {TARGET_SECTOR} [{tags[0]}] "
                             f"[{tags[1]}]. They converged on it [{converge_step}]. This is a coordinated threat "
                             f"[{step}]. Should we alert the team?")
    assert set(tags) | {step} <= set(out["allowed_tags"])
    clean = scenario.verify(f"{CONVERGING[0]} was seen at {TARGET_SECTOR} [{tags[0]}].", query=TARGET_SECTOR,
                            now=NOW)
    assert clean["outcome"] == "supported" and clean["coverage"] == 1.0
    wrong_date = scenario.verify(f"{CONVERGING[0]} was seen at {TARGET_SECTOR} on 2020-01-01 [{tags[0]}].",
                                 query=TARGET_SECTOR, now=NOW)
    assert wrong_date["outcome"] == "abstained" and "'on 2020-01-01' is not in the cited evidence" in wrong_date["stripped"][0]["reason"]
    unproved = scenario.verify(f"{BEACON[0]} called {BEACON[1]} [{beacon_tag}].", query=BEACON[0],
                               require_proof=True, now=NOW)
    assert unproved["outcome"] == "abstained" and unproved["proved"] is False
    assert unproved["answer"] == "I cannot answer this from verified memory."


@pytest.fixture
def sightings(m):
    """Two drones sighted at sector:s7 four minutes apart, proved to converge: the issue's reproducers' world."""
    threat_rules(m)
    first = m.remember(["drone:d1", "sector:s7"], T0, 0.8, "SIGHTING")["hedge_tag"]
    second = m.remember(["drone:d2", "sector:s7"], T0 + 240, 0.9)["hedge_tag"]
    m.remember(["drone:d9", "host:db01"], T0 - 86_400, 0.5)
    return m, first, second


@pytest.mark.parametrize("answer, why", [
    ("{h}. I cannot stress enough that drone:d9 destroyed host:db01 with 300 missiles on 2026-05-01.", "no citation"),
    ("I don't know much, but drone:d9 destroyed host:db01 on 2026-05-01 and killed 12 people.", "no citation"),
    ("{h}. Then Bob. Deleted everything. Rival drones. Attacked us.", "no citation"),
    ("{h}. It entered at 14:00, didn't it?", "no citation"),
    ("{h}. It went as follows:", "no citation"),
    ("drone:d1 never entered sector:s7 [{a}].", "negation"),
    ("drone:d1 destroyed sector:s7 [{a}].", "'destroyed'"),
    ("Colonel Mustard flew drone:d1 [{a}].", "unknown name"),
    ("{h}. Mr. Smith e.g. sold it.", "no citation"),
])
def test_the_reported_ways_past_verify_are_closed(sightings, answer, why):
    m, a, b = sightings
    text = answer.format(h=f"drone:d1 entered sector:s7 [{a}]", a=a)
    for require_proof in (False, True):
        out = m.verify(text, query="sector:s7", require_proof=require_proof, now=T0 + 3_600)
        assert out["stripped_count"] >= 1 and all(why in s["reason"] for s in out["stripped"]), out["stripped"]
        assert out["coverage"] < 1.0 and out["outcome"] in ("stripped", "abstained")
        for stripped in out["stripped"]:
            assert stripped["sentence"] not in out["answer"]


def test_verify_keeps_what_the_evidence_and_proofs_say(sightings):
    m, a, b = sightings
    proof = m.prove("sector:s7", goal_pred="coordinated_threat", now=T0 + 3_600)["proofs"][0]
    step = proof["nodes"][-1]["step_tag"]
    answer = (f"Here is what I found. drone:d1 (the first sighting's drone) entered sector:s7 [{a}]. "
              f"drone:d1 (see above) entered sector:s7 [{a}]. "
              f"Its sighting had 80% confidence [{a}]. "
              f"coordinated_threat('sector:s7') has confidence {proof['confidence']:g} [{step}]. "
              "Should we alert the team?")
    out = m.verify(answer, query="sector:s7", now=T0 + 3_600)
    assert [(s["text"], s["kept"], s["factual"]) for s in out["sentences"]] == [
        ("Here is what I found.", True, False),
        (f"drone:d1 (the first sighting's drone) entered sector:s7 [{a}].", False, True),  # 'first': an ordering
        (f"drone:d1 (see above) entered sector:s7 [{a}].", True, True),
        (f"Its sighting had 80% confidence [{a}].", True, True),  # 80 % is the weight 0.8
        (f"coordinated_threat('sector:s7') has confidence {proof['confidence']:g} [{step}].", True, True),
        ("Should we alert the team?", True, False)]


def test_what_a_proof_rests_on_and_concludes_is_evidence_when_its_step_is_cited(m):
    m.remember(["account:admin", "host:db01"], T0, 0.7)
    m.remember_fact("owner('host:db01', alice)")
    m.define_rule("exposed(H, P)", "owner(H, P), member(E, H), hedge(E, 'AUTH_EVENT', _, _)", name="exposure",
                  confidence=0.5)
    step = m.prove("host:db01", now=T0 + 60)["proofs"][0]["nodes"][-1]["step_tag"]
    out = m.verify(f"host:db01 of Alice is exposed with confidence 0.35 [{step}]. "
                   f"host:db01 of Bob is exposed [{step}]. "
                   f"host:db01 of Alice is exposed with confidence 0.7 [{step}].", query="host:db01", now=T0 + 60)
    assert [s["kept"] for s in out["sentences"]] == [True, False, False]
    assert "unknown name 'Bob'" in out["stripped"][0]["reason"]
    assert "0.7" in out["stripped"][1]["reason"]  # the login's weight is not the conclusion's confidence


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from(["drone:d1 entered sector:s7 [{a}].",
                                                 "drone:d1 was seen at sector:s7 with weight 0.8 [{a}].",
                                                 "drone:d1 and drone:d2 were sighted at sector:s7 [{a}] [{b}].",
                                                 "drone:d1 and drone:d2 converged on sector:s7 [STEP-1].",
                                                 "Both drones were at sector:s7 4 minutes apart [{a}] [{b}]."]),
       st.sampled_from(["entity", "number", "name", "negation", "uncited"]))
def test_a_kept_claim_changed_in_any_checked_part_is_stripped(number, sentence, change):
    """Law: a sentence verify keeps is stripped once one thing it asserts no longer matches the evidence."""
    import re

    with Memory(":memory:") as m:
        threat_rules(m)
        a = m.remember(["drone:d1", "sector:s7"], T0, 0.8)["hedge_tag"]
        b = m.remember(["drone:d2", "sector:s7"], T0 + 240, 0.9)["hedge_tag"]
        text = sentence.format(a=a, b=b)
        assert m.verify(text, query="sector:s7", now=T0 + 600)["supported_count"] == 1
        if change == "entity":
            text = text.replace("drone:d1", f"drone:n{number}", 1) if "drone:d1" in text else \
                text.replace("sector:s7", f"sector:n{number}")
        elif change == "number":
            text = text.replace("sector:s7", f"sector:s7 at {number % 24}:{number % 60:02d} on 2027-{number % 12 + 1:02d}-"
                                              f"{number % 28 + 1:02d}", 1)
        elif change == "name":
            text = text.replace("sector:s7", f"sector:s7 for Zed{number}", 1)
        elif change == "negation":
            text = re.sub(r" (entered|was|were|converged) ", r" never \1 ", text, count=1)
        else:
            text = re.sub(r" ?\[[^\]]+\]", "", text)
        out = m.verify(text, query="sector:s7", now=T0 + 600)
        assert out["supported_count"] == 0 and out["stripped_count"] == 1, (text, out["stripped"])


@given(st.lists(st.sampled_from(["drone:d1 entered sector:s7 [HEDGE-1].", "Mr. Smith (a.k.a. J. R.) sold it.",
                                 "It has weight 0.8, i.e. 80%.", 'He said "Go. Now." Then left.', "e.g. this!",
                                 "- item one", "1. item two", "Why?", "[STEP-2]", "etc. and so on.", "\n"]),
                min_size=1, max_size=8))
def test_splitting_loses_and_invents_no_text(parts):
    """Law: the units, in order, hold exactly the answer's non-space characters."""
    from memory.evidence.sentences import split_units

    answer = " ".join(parts)
    units = split_units(answer)
    assert "".join("".join(u.split()) for u in units) == "".join(answer.split())
    assert all(u == u.strip() and u for u in units)


@pytest.mark.parametrize("text, units", [
    ("drone:d1 (a.k.a. the scout) entered sector:s7 [HEDGE-1]. Mr. Smith e.g. sold it.",
     ["drone:d1 (a.k.a. the scout) entered sector:s7 [HEDGE-1].", "Mr. Smith e.g. sold it."]),
    ("J. R. Smith flew it. The weight was 0.8. Fine.", ["J. R. Smith flew it.", "The weight was 0.8.", "Fine."]),
    ('He said "It moved. Then it stopped." Next.', ['He said "It moved. Then it stopped."', "Next."]),
    ("It converged. [HEDGE-3] Then it left.", ["It converged. [HEDGE-3]", "Then it left."]),
    ("It converged [HEDGE-3]. [HEDGE-4] Then it left.", ["It converged [HEDGE-3].", "[HEDGE-4] Then it left."]),
    ("Seen (twice. maybe.) there. admin logged in.", ["Seen (twice. maybe.) there.", "admin logged in."]),
    ("In summary:\n- one [HEDGE-1]\n2. two", ["In summary:", "- one [HEDGE-1]", "2. two"]),
])
def test_sentences_split_past_abbreviations_initials_decimals_parentheses_and_quotes(text, units):
    from memory.evidence.sentences import split_units

    assert split_units(text) == units


def test_verify_keeps_the_answers_lines_headings_and_table_rows(m):
    """What verify keeps is laid out in the answer's own lines: a heading, a paragraph break and each table
    row stay on their own lines; a stripped line leaves no gap behind."""
    tag = m.remember(["account:erin", "host:web02"], event_ts=START, formation="login")["hedge_tag"]
    answer = (f"## Incident summary\naccount:erin logged in to host:web02 [{tag}]. The sky is green [{tag}].\n"
              f"account:zed logged in to host:db09 [{tag}].\n\n| who | where |\n| --- | --- |\n"
              f"| account:erin | host:web02 [{tag}] |")
    out = m.verify(answer, now=START + 3600)
    assert out["outcome"] == "stripped"
    assert out["answer"] == (f"## Incident summary\naccount:erin logged in to host:web02 [{tag}].\n\n"
                             f"| who | where |\n| --- | --- |\n| account:erin | host:web02 [{tag}] |")


@given(st.lists(st.sampled_from(["a [HEDGE-1].", "b.", "", "- c", "| x | y |", "d. e."]), min_size=1, max_size=8),
       st.data())
def test_kept_lines_are_the_answers_lines_in_order(lines, data):
    """Law: keeping every unit gives back the answer's non-blank lines (units of a line joined by one space),
    in order, with at most one blank line between them; keeping none gives nothing."""
    from memory.evidence.sentences import joined_lines, split_lines

    answer = "\n".join(lines)
    numbered = split_lines(answer)
    whole = joined_lines(answer, numbered)
    assert [line for line in whole.split("\n") if line] == [
        " ".join(u for n, u in numbered if n == i) for i, line in enumerate(answer.splitlines()) if line.strip()]
    assert "\n\n\n" not in whole and joined_lines(answer, []) == ""
    some = [u for u in numbered if data.draw(st.booleans())]
    assert [line for line in joined_lines(answer, some).split("\n") if line] == [
        " ".join(u for n, u in some if n == i) for i in sorted({n for n, _ in some})]


# --- detect ----------------------------------------------------------------------------------

def test_detect_finds_every_planted_pattern(scenario):
    out = scenario.detect(full_scan=True)
    by_pattern: dict = {}
    for finding in out["findings"]:
        by_pattern.setdefault(finding["pattern"], []).append(finding)
        assert 0 < finding["score"] <= 1 and finding["hedge_tags"] and finding["edge_count"] >= len(finding["hedge_tags"])
    assert HUB in [f["nodes"][0] for f in by_pattern["hub"]]
    assert BURST in [n for f in by_pattern["burst"] for n in f["nodes"]]
    assert set(CLUSTER) in [set(f["nodes"]) for f in by_pattern["dense_cluster"]]
    assert [TARGET_SECTOR, *CONVERGING] in [f["nodes"] for f in by_pattern["convergence"]]
    assert LATERAL in [f["nodes"] for f in by_pattern["lateral_movement"]]
    assert set(BEACON) in [set(f["nodes"]) for f in by_pattern["beaconing"]]
    assert [SPOKE] in [f["nodes"] for f in by_pattern["spectral"]]  # the account that keeps accompanying the hub
    assert 0 < out["summary"]["risk_score"] <= 1
    fast = scenario.detect()
    assert {f["pattern"] for f in fast["findings"]} <= {"hub", "burst", "dense_cluster", "fan_out", "convergence",
                                                        "spectral"}


def test_detect_flags_nothing_in_a_clean_background_of_the_same_size():
    with Memory(":memory:") as m:
        m.remember_observations(background(SIZE))
        out = m.detect(full_scan=True)
    assert out["findings"] == [] and out["summary"]["risk_score"] == 0.0


@pytest.mark.parametrize("seed, exponent", [(5, 1.1), (6, 1.0), (7, 1.3)])
def test_detect_is_quiet_on_clean_heavy_tailed_data(seed, exponent):
    """Zipf-distributed activity (a few entities do most of the work) is what real logs look like, not an attack."""
    with Memory(":memory:") as m:
        m.remember_observations(zipf_background(SIZE, seed, exponent))
        out = m.detect(full_scan=True)
    assert out["summary"]["edges_scanned"] == SIZE
    assert len(out["findings"]) <= 1 and out["summary"]["risk_score"] <= 0.3, out["summary"]


def test_detect_window_and_sensitivity_per_call(scenario):
    day = 86_400
    burst_day = START + 10 * day  # the planted burst; the hub and the beacon run all month
    inside = scenario.detect(window=f"between {burst_day} and {burst_day + day}", now=NOW)
    assert BURST in [n for f in inside["findings"] if f["pattern"] == "burst" for n in f["nodes"]]
    assert inside["summary"]["window"] == {"start": burst_day, "end": burst_day + day + 1,
                                           "text": f"between {burst_day} and {burst_day + day}"}
    assert 0 < inside["summary"]["edges_scanned"] < SIZE
    later = scenario.detect(window="last 3 days", now=NOW)
    assert later["summary"]["edges_scanned"] < SIZE // 5
    assert BURST not in [n for f in later["findings"] for n in f["nodes"]]
    whole = scenario.detect(full_scan=True)
    assert "window" not in whole["summary"] and whole["summary"]["sensitivity"] == 1.0
    keen = scenario.detect(full_scan=True, sensitivity=4)
    dull = scenario.detect(full_scan=True, sensitivity=0.25)
    assert len(dull["findings"]) <= len(whole["findings"]) <= len(keen["findings"])
    assert HUB in [f["nodes"][0] for f in keen["findings"] if f["pattern"] == "hub"]


@pytest.mark.parametrize("args", [{"sensitivity": 0}, {"sensitivity": 5}, {"sensitivity": True},
                                  {"sensitivity": float("nan")}, {"sensitivity": "high"}, {"window": ""},
                                  {"window": "last -3 days"}, {"window": "since 2026-13-45"},
                                  {"window": "last 3 days and some words"}, {"window": "whenever"}, {"window": 7}])
def test_detect_refuses_bad_windows_and_sensitivities(m, args):
    m.remember(["host:x", "account:a"], T0)
    with pytest.raises(InvalidArguments) as error:
        m.detect(**args, now=T0)
    assert error.value.details["argument"] == next(iter(args))


def test_risk_score_follows_the_documented_formula(scenario):
    out = scenario.detect(full_scan=True)
    expected = 1.0
    for f in out["findings"]:
        expected *= 1 - out["summary"]["weights"][f["pattern"]] * f["score"]
    assert out["summary"]["risk_score"] == pytest.approx(1 - expected, abs=1e-4)
    json.dumps(out)  # plain JSON all the way down


def test_rule_names_and_confidences_survive_export_import_and_snapshots(m):
    m.define_rule("p(X)", "q(X)", name="pq", confidence=0.75)
    m.define_rule("r(X)", "q(X)")
    text = m.export_program()
    assert ":- rule((p(X) :- q(X)), [name(pq), confidence(0.75)])." in text and "r(X) :- q(X)." in text
    m.save_snapshot("before")
    m.define_rule("p(X)", "q(X)", confidence=0.5)
    m.restore_snapshot("before")
    assert [(r["name"], r["confidence"]) for r in m.list_rules().items] == [("pq", 0.75), (None, 1.0)]
    with Memory(":memory:") as other:
        other.import_program(text)
        assert other.export_program() == text
        with pytest.raises(InvalidArguments):
            other.import_program(":- rule((s(X) :- q(X)), [colour(red)]).")


def test_concurrent_writers_keep_one_valid_hash_chain(tmp_path):
    import threading

    path = str(tmp_path / "shared.db")
    Memory(path).init()
    errors = []

    def writer(k: int) -> None:
        try:
            with Memory(path, actor=f"writer{k}") as mine:
                for i in range(40):
                    mine.remember([f"host:w{k}", f"account:a{i}"], T0 + i)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Memory(path) as m, m.store.read() as conn:
        rows = conn.execute("SELECT content_hash, chain_hash FROM hyperedges ORDER BY id").fetchall()
    assert len(rows) == 160
    chain = ""
    for content, chained in rows:
        chain = hashlib.sha256((chain + content).encode()).hexdigest()
        assert chained == chain


def test_detect_stays_bounded_on_a_dense_hop_graph(m):
    """Simple paths explode in dense login graphs; the chain search is bounded per start and in total."""
    import random

    rng = random.Random(1)
    hosts = [f"host:x{i}" for i in range(6)]
    m.remember_observations([{"members": ["account:z", *rng.sample(hosts, 2)], "event_ts": T0 + rng.randrange(3600)}
                             for _ in range(300)])
    chains = [f for f in m.detect(full_scan=True)["findings"] if f["pattern"] == "lateral_movement"]
    assert 0 < len(chains) <= 50 and all(f["details"]["hops"] <= 12 for f in chains)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(["host:a", "host:b", "account:x", "account:y", "drone:d"]),
                                   min_size=1, max_size=3), st.integers(-5 * 86_400, 0), st.sampled_from([0.3, 1.0])),
                min_size=1, max_size=15),
       st.sampled_from(["host:a", "x last 2 days", "drones", "account:y since 2025-12-30", "", "between 2025-12-28 "
                        "and 2025-12-30 host:b"]))
def test_recall_is_deterministic_and_its_tags_stable(observations, query):
    """Law: the same store, query and now give the same answer, in a fresh process-like Memory too; every
    returned edge lies in the parsed window and its tag is HEDGE-<id>."""
    rows = [{"members": ms, "event_ts": T0 + dt, "weight": w} for ms, dt, w in observations]
    with Memory(":memory:") as a, Memory(":memory:") as b:
        a.remember_observations(rows)
        b.remember_observations(rows)
        first, second, other = a.recall(query, now=T0), a.recall(query, now=T0), b.recall(query, now=T0)
    assert first == second == other
    window = first["parsed"]["window"]
    for edge in first["edges"]:
        assert edge["hedge_tag"] == f"HEDGE-{edge['id']}"
        if window:
            assert (window["start"] is None or edge["timestamp"] >= window["start"]) and \
                (window["end"] is None or edge["timestamp"] < window["end"])
    scores = [e["score"] for e in first["edges"]]
    assert scores == sorted(scores, reverse=True)


def test_retracted_observations_leave_recall_reasoning_and_detect_but_stay_chained(m):
    threat_rules(m)
    a = m.remember(["drone:x1", "sector:q"], T0, 0.9)["hedge_tag"]
    b = m.remember(["drone:x2", "sector:q"], T0 + 60, 0.8)["hedge_tag"]
    assert [d["fact"] for d in m.reason("sector:q", now=T0 + 600)["derived"] if d["pred"] == "coordinated_threat"]
    before = snapshot_counts(m)
    with pytest.raises(NotFound):
        m.forget_observation([a, "HEDGE-999"])  # all or nothing
    with pytest.raises(InvalidArguments):
        m.forget_observation(["edge 1"])
    assert snapshot_counts(m) == before
    out = m.forget_observation([b], reason="sensor glitch")
    assert out == {"retracted": [b], "already_retracted": [], "reason": "sensor glitch"}
    assert m.forget_observation([b])["already_retracted"] == [b]
    assert [e["hedge_tag"] for e in m.recall("sector:q", now=T0 + 600)["edges"]] == [a]
    assert m.reason("sector:q", now=T0 + 600)["derived"] == []
    assert m.query_logic("coordinated_threat(S)").bindings == []
    assert m.query_logic("member(E, 'drone:x2')").bindings == []
    with m.store.read() as conn:
        assert conn.execute("SELECT count(*) FROM hyperedges").fetchone()[0] == 2
        ops = [r[0] for r in conn.execute("SELECT operation FROM audit_log")]
    assert ops.count("forget_observation") == 1


def test_a_stored_fact_keeps_confidence_one_even_when_a_rule_also_derives_it(m):
    m.define_rule("seen(X)", "member(E, X), hedge(E, _, _, _)", confidence=0.5)
    m.define_rule("flagged(X)", "seen(X)")
    m.remember(["drone:d1", "sector:s1"], T0, 0.4)
    m.remember_fact("seen('drone:d1')")
    derived = {d["fact"]: d["confidence"] for d in m.reason("", now=T0)["derived"]}
    assert "seen('drone:d1')" not in derived  # stored, not concluded
    assert derived["flagged('drone:d1')"] == 1.0 and derived["flagged('sector:s1')"] == pytest.approx(0.2)
