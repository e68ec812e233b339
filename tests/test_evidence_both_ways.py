"""verify keeps honest answers and refuses adversarial ones over one incident scenario, side by side; the
reference's documented examples pass as documented; recall understands a time phrase or says it did not."""

import pytest

from incident_corpus import (ADVERSARIAL, DRONES_ADVERSARIAL, DRONES_HONEST, HONEST, NOW, RECALL_NOW,
                             RECALL_PHRASES, SUMMARY, build)
from memory.errors import InvalidArguments

QUERY = ""
TOP_K = 100


@pytest.fixture(scope="module")
def scenario():
    memory, tags = build()
    yield memory, tags
    memory.close()


def _judged(memory, tags, text: str) -> dict:
    out = memory.verify(text.format(**tags), query=QUERY, top_k=TOP_K, now=NOW)
    assert len(out["sentences"]) == 1, out["sentences"]
    return out["sentences"][0]


@pytest.mark.parametrize("text", HONEST + DRONES_HONEST)
def test_an_honest_answer_is_kept(scenario, text):
    sentence = _judged(*scenario, text)
    assert sentence["kept"], sentence["reason"]


@pytest.mark.parametrize("text", ADVERSARIAL + DRONES_ADVERSARIAL)
def test_an_adversarial_answer_is_refused(scenario, text):
    sentence = _judged(*scenario, text)
    assert not sentence["kept"], text
    assert sentence["factual"] and sentence["reason"]


def test_the_references_verify_example_is_supported_as_documented(scenario):
    memory, tags = scenario
    answer = f"The two drones converged into a coordinated threat [{tags['threat']}]."
    out = memory.verify(answer, query="drones", now=NOW)
    assert out["outcome"] == "supported" and out["coverage"] == 1.0 and out["answer"] == answer
    assert out["proved"] and out["derived_count"] >= 1 and tags["threat"] in out["allowed_tags"]


def test_a_summary_as_a_model_writes_it_is_kept_whole_in_one_call(scenario):
    memory, tags = scenario
    answer = SUMMARY.format(**tags)
    out = memory.verify(answer, query=QUERY, top_k=TOP_K, now=NOW)
    assert out["outcome"] == "supported" and out["coverage"] == 1.0, out["stripped"]
    assert out["answer"] == answer, "kept whole, in its own lines"
    assert "| Account | Host | Time |" in out["answer"]


def test_a_markdown_table_keeps_its_header(scenario):
    memory, tags = scenario
    table = "| Account | Host | When |\n|---|---|---|\n| account:mallory | host:db01 | 2026-03-20 [{mallory}] |"
    out = memory.verify(table.format(**tags), query=QUERY, top_k=TOP_K, now=NOW)
    assert out["outcome"] == "supported", out["stripped"]
    assert out["answer"].startswith("| Account | Host | When |")


@pytest.mark.parametrize("query, expected", RECALL_PHRASES)
def test_recall_understands_a_time_phrase_or_says_so(scenario, query, expected):
    memory, _ = scenario
    try:
        out = memory.recall(query, now=RECALL_NOW)
    except InvalidArguments as error:
        assert expected == "refused", f"{query!r}: {error}"
        return
    window = out["parsed"]["window"]
    if expected == "refused":
        assert out["abstained"] and out["count"] == 0 and "time" in (out["reason"] or ""), (query, out["parsed"])
    elif expected is None:
        assert window is None and not out["abstained"], out["parsed"]
    else:
        assert window is not None and (window["start"], window["end"]) == expected, (query, window)
        assert not out["reason"] or out["reason"].startswith("no_edges"), out["reason"]


@pytest.mark.parametrize("query", ["account:Mallory", "ACCOUNT:MALLORY", "host:DB01", "mallory", "MALLORY"])
def test_recall_matches_entity_names_case_insensitively(scenario, query):
    memory, _ = scenario
    out = memory.recall(query, now=RECALL_NOW)
    assert out["count"] > 0 and not out["abstained"], out["reason"]


def test_recall_refuses_a_reversed_window(scenario):
    memory, _ = scenario
    with pytest.raises(InvalidArguments):
        memory.recall("between 2026-03-26 and 2026-03-10", now=RECALL_NOW)


# --- the reference's documented examples, on a scenario that matches them -----------------------------------

DRONES_AT = 1_700_000_000
THREAT = ("coordinated_threat(E)", "hedge(E, 'DRONE_EVENT', _, _), member(E, A), entity_type(A, drone), "
          "member(E, B), entity_type(B, drone), A @< B")


@pytest.fixture
def drones():
    from memory import Memory

    memory = Memory(":memory:", actor="agent")
    stored = memory.remember(["drone:d1", "drone:d2", "sector:s1"], DRONES_AT)
    memory.define_rule(*THREAT, name="coordinated_threat", confidence=0.9)
    yield memory, stored
    memory.close()


def test_the_references_remember_and_recall_examples(drones):
    memory, stored = drones
    assert stored["stored"] is True and stored["table"] == "MEMORY" and stored["event_ts"] == DRONES_AT
    assert stored["weight"] == 1.0 and stored["members"] == ["drone:d1", "drone:d2", "sector:s1"]
    assert len(stored["member_ids"]) == 3 and "source" in stored
    found = memory.recall("drones", now=DRONES_AT + 60)
    assert found["count"] == 1 and found["edges"][0]["edge_idx"] == 0
    edge = found["edges"][0]
    assert edge["hedge_tag"] == stored["hedge_tag"] and edge["timestamp"] == DRONES_AT
    assert edge["member_ids"] == stored["member_ids"]


def test_the_references_reason_and_prove_examples(drones):
    memory, stored = drones
    reasoned = memory.reason("drones", now=DRONES_AT + 60)
    [derived] = reasoned["derived"]
    assert derived["pred"] == "coordinated_threat" and derived["confidence"] == pytest.approx(0.9)
    assert derived["rule_id"] == "rule:coordinated_threat" and reasoned["rules_fired"] == ["rule:coordinated_threat"]
    assert reasoned["timed_out"] is False and reasoned["edges_considered"] == 1 and reasoned["iterations"] >= 1
    proved = memory.prove("drones", now=DRONES_AT + 60)
    assert proved["count"] == 1 and proved["derived_count"] == 1 and proved["edges_considered"] == 1
    [proof] = proved["proofs"]
    assert proof["status"] == "proved" and proof["confidence"] == pytest.approx(0.9)
    kinds = {n["kind"] for n in proof["nodes"]}
    assert {"evidence", "conclusion"} <= kinds
    assert any(n.get("hedge_tag") == stored["hedge_tag"] for n in proof["nodes"] if n["kind"] == "evidence")
    conclusion = next(n for n in proof["nodes"] if n["kind"] == "conclusion")
    assert conclusion["rule_tag"].startswith("RULE-") and conclusion["step_tag"].startswith("STEP-")


def test_the_references_verify_example_on_its_own_scenario(drones):
    memory, stored = drones
    answer = f"The two drones converged into a coordinated threat [{stored['hedge_tag']}]."
    out = memory.verify(answer, query="drones", now=DRONES_AT + 60)
    assert out["outcome"] == "supported" and out["abstained"] is False and out["coverage"] == 1.0
    assert out["supported_count"] == 1 and out["stripped_count"] == 0 and out["stripped"] == []
    assert out["answer"] == answer and out["proved"] is True and out["derived_count"] == 1
    assert stored["hedge_tag"] in out["allowed_tags"]
    assert any(t.startswith("RULE-") for t in out["allowed_tags"]) and any(t.startswith("STEP-")
                                                                           for t in out["allowed_tags"])
    required = memory.verify(answer, query="drones", require_proof=True, now=DRONES_AT + 60)
    assert required["outcome"] == "supported", required["stripped"]  # the step's evidence is the same sighting


def test_the_references_detect_example_finds_the_hub():
    """The detector's documented finding, a hub: 70 accounts onto one host among 400 ordinary observations."""
    from evidence_scenario import NOW as SCENARIO_NOW, START, background
    from memory import Memory

    memory = Memory(":memory:", actor="agent")
    try:
        memory.remember_observations(background(400) + [
            {"members": [f"account:visitor{i}", "host:hub"], "event_ts": START + 3_600 * i} for i in range(70)])
        found = memory.detect(now=SCENARIO_NOW)
        hubs = [f for f in found["findings"] if f["pattern"] == "hub"]
        assert [f["nodes"] for f in hubs] == [["host:hub"]], found["findings"]
        assert 0 < hubs[0]["score"] <= 1 and found["summary"]["risk_score"] > 0
    finally:
        memory.close()


# --- detect against the store's own daily and weekly rhythm -------------------------------------------------

RHYTHM_SIZE = 8_000


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_detect_is_quiet_on_clean_data_with_daily_and_weekly_cycles(seed):
    """Business hours on weekdays and a nightly backup job: no burst at the daily peak, the job is scheduled
    activity and not beaconing."""
    from evidence_scenario import NIGHTLY, NOW as SCENARIO_NOW, rhythmic_background
    from memory import Memory

    with Memory(":memory:") as memory:
        memory.remember_observations(rhythmic_background(RHYTHM_SIZE, seed))
        out = memory.detect(full_scan=True, now=SCENARIO_NOW)
    assert out["findings"] == [] and out["summary"]["risk_score"] == 0.0, out["findings"]
    assert [s["nodes"] for s in out["scheduled"]] == [list(NIGHTLY)]
    assert out["summary"]["thresholds"]["beaconing"]["min_events"] == 8


def test_a_windowed_scan_still_knows_the_daily_rhythm():
    """A scan of the last two days measures each hour against the weeks before it, not against two days' flat rate."""
    from evidence_scenario import NOW as SCENARIO_NOW, rhythmic_background
    from memory import Memory

    with Memory(":memory:") as memory:
        memory.remember_observations(rhythmic_background(RHYTHM_SIZE, 3))
        for window in ("last 2 days", "yesterday", "last 7 days"):
            out = memory.detect(full_scan=True, window=window, now=SCENARIO_NOW)
            assert out["findings"] == [], (window, out["findings"])


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_detect_finds_patterns_planted_into_rhythmic_data(seed):
    from evidence_scenario import (NEW_BEACON, NOW as SCENARIO_NOW, PER_HOST_ACCOUNT, PER_HOST_HOSTS, QUIET_HOST,
                                   rhythmic_background, rhythmic_planted)
    from memory import Memory

    with Memory(":memory:") as memory:
        memory.remember_observations(rhythmic_background(RHYTHM_SIZE, seed) + rhythmic_planted())
        out = memory.detect(full_scan=True, now=SCENARIO_NOW)
    nodes = {f["pattern"]: f["nodes"] for f in out["findings"]}
    assert nodes.get("lateral_movement") == [PER_HOST_ACCOUNT, *PER_HOST_HOSTS], out["findings"]
    assert set(nodes.get("beaconing", ())) == set(NEW_BEACON)
    assert nodes.get("convergence", [None])[0] == QUIET_HOST
    for finding in out["findings"]:  # each finding says what it crossed
        assert finding["details"]["threshold"] == out["summary"]["thresholds"][finding["pattern"]]
