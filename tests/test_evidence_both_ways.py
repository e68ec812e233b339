"""verify keeps honest answers and refuses adversarial ones over one incident scenario, side by side; the
reference's documented examples pass as documented; recall understands a time phrase or says it did not."""

import pytest

from incident_corpus import (ADVERSARIAL, DRONES_ADVERSARIAL, DRONES_HONEST, HONEST, NOW, RECALL_NOW,
                             RECALL_PHRASES, build)
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
