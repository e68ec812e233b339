"""verify against the corpora: every sentence written to slip past it is stripped, and correct ones are kept.

The corpora and their scenario are in verify_corpus.py. Units are judged one by one (a unit's
verdict does not depend on its neighbours), so the adversarial answers are gated in batches of
answers, one answer a line group, to keep the suite fast; the correct answers one call each."""

import pytest

from verify_corpus import (ATTACKS, KEEPS, NON_FACTUAL, NOW, QUERY, adversarial_answers, build, correct_answers,
                           joined)

FALSE_STRIP_GOAL = 0.05
BATCH = 12


@pytest.fixture(scope="module")
def planted():
    memory, tags = build()
    yield memory, tags
    memory.close()


def _judge(memory, answers: list[list[tuple[str, bool]]]) -> dict:
    """Gate answers; count attacks kept and correct sentences stripped, checking the split against the labels."""
    tally = {"units": 0, "attacks": 0, "attacks_kept": [], "keeps": 0, "false_strips": []}
    for start in range(0, len(answers), BATCH):
        batch = answers[start:start + BATCH]
        out = memory.verify("\n".join(joined(units) for units in batch), query=QUERY, now=NOW)
        labelled = [unit for units in batch for unit in units]
        assert [s["text"] for s in out["sentences"]] == [text for text, _ in labelled]  # split as labelled
        for (text, keep), sentence in zip(labelled, out["sentences"]):
            tally["units"] += 1
            if keep:
                tally["keeps"] += 1
                if not sentence["kept"]:
                    tally["false_strips"].append((text, sentence["reason"]))
            else:
                tally["attacks"] += 1
                if sentence["kept"] or text in out["answer"]:
                    tally["attacks_kept"].append(text)
    return tally


def test_the_corpora_are_big_enough_and_cover_every_class():
    assert len(ATTACKS) >= 100 and len(KEEPS) >= 40 and len(NON_FACTUAL) >= 5
    memory, tags = build()
    try:
        assert len(adversarial_answers(tags)) >= 200 and len(correct_answers(tags)) >= 40
    finally:
        memory.close()


def test_no_fabricated_claim_survives_the_adversarial_corpus(planted):
    memory, tags = planted
    tally = _judge(memory, adversarial_answers(tags))
    rate = len(tally["false_strips"]) / tally["keeps"]
    print(f"\nadversarial corpus: {len(adversarial_answers(tags))} answers, {tally['attacks']} fabricated sentences, "
          f"{len(tally['attacks_kept'])} kept; {tally['keeps']} correct sentences beside them, "
          f"{len(tally['false_strips'])} stripped ({rate:.1%})")
    assert tally["attacks_kept"] == []
    assert rate <= FALSE_STRIP_GOAL, tally["false_strips"]


def test_correct_answers_are_kept(planted):
    memory, tags = planted
    answers = correct_answers(tags)
    false_strips, keeps = [], 0
    for units in answers:  # one call per answer, as a client would make it
        out = memory.verify(joined(units), query=QUERY, now=NOW)
        assert [s["text"] for s in out["sentences"]] == [text for text, _ in units]
        keeps += len(units)
        false_strips += [(s["text"], s["reason"]) for s in out["sentences"] if not s["kept"]]
        if not any(s["reason"] for s in out["sentences"]):
            assert out["outcome"] == "supported" and out["coverage"] == 1.0 and out["answer"] == joined(units)  # kept whole, in its own lines
    rate = len(false_strips) / keeps
    print(f"\ncorrect corpus: {len(answers)} answers, {keeps} sentences, {len(false_strips)} stripped ({rate:.1%}): "
          f"{sorted({text for text, _ in false_strips})}")
    assert rate <= FALSE_STRIP_GOAL, false_strips
