"""The answer gate: keep a factual sentence only if it cites allowed evidence that says what it says.

The answer is split into sentences (and list items). A sentence is factual unless it
is a question, a hedge ("I could not find …"), a greeting, or too short to assert
anything. A factual sentence is kept when it cites at least one allowed tag
(HEDGE-n, RULE-n, STEP-n from this query's recall and proofs) and every entity,
number, date and time it names appears in the evidence behind its cited tags;
otherwise it is stripped with the reason. `require_proof` allows only tags from
proofs and abstains when nothing is proved."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from ..terms import Compound, parse_term
from ..terms.codec import to_json
from ..validation import require_name, require_text
from .reasoning import proofs_of, run
from .recall import TYPED, known_names, typed_tokens

ABSTAIN_TEXT = "I cannot answer this from verified memory."
MAX_ANSWER_CHARS = 65_536
_TAG = re.compile(r"\b(?:HEDGE|RULE|STEP)-\d+\b")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b")
_TIME = re.compile(r"(?<![\d:])(\d{1,2}:\d{2})(?::\d{2})?(?![\d:])")
_NUMBER = re.compile(r"(?<![\w.:-])(\d+(?:\.\d+)?)(?![\w:-]|\.\d)")
_WORD = re.compile(r"[A-Za-z_][\w.@-]*")
_SPLIT = re.compile(r"(?<=[.!?])\s+")
HEDGES = ("i could not", "i couldn't", "i can't", "i cannot", "i do not know", "i don't know", "i am not sure",
          "i'm not sure", "there is not enough", "there isn't enough", "no evidence", "not enough information",
          "it is unclear", "it's unclear")
GREETINGS = ("hello", "hi", "hey", "thanks", "thank you", "sure", "okay", "ok", "in summary", "summary", "answer")


def _units(answer: str) -> list[str]:
    units: list[str] = []
    for line in answer.splitlines():
        for part in _SPLIT.split(line.strip()):
            if not part:
                continue
            if _TAG.sub("", part).strip(" []().,;") == "" and units:
                units[-1] += " " + part  # "…converged. [HEDGE-3]": the tag belongs to the sentence before
            else:
                units.append(part)
    return units


def is_factual(sentence: str) -> bool:
    text = _TAG.sub("", sentence).strip(" []()")
    low = text.lower()
    if not re.search(r"\w", text) or text.endswith("?"):
        return False
    if low.startswith(HEDGES) or low.rstrip(".!:,") in GREETINGS or text.endswith(":"):
        return False
    return bool(re.search(r"\d", text) or TYPED.search(text)) or len(_WORD.findall(text)) >= 3


def _day_and_time(ts: int) -> tuple[str, str]:
    moment = datetime.fromtimestamp(ts, timezone.utc)
    return moment.strftime("%Y-%m-%d"), moment.strftime("%H:%M")


class Evidence:
    """What one tag vouches for: entity names, numbers, days and times."""

    def __init__(self) -> None:
        self.entities: set[str] = set()
        self.numbers: set[float] = set()
        self.days: set[str] = set()
        self.times: set[str] = set()

    def add_edge(self, edge: dict) -> None:
        self.entities.update(m.lower() for m in edge["members"])
        ts = edge.get("timestamp", edge.get("event_ts"))
        self.numbers.update({float(ts), float(edge["weight"]), float(len(edge["members"]))})
        day, clock = _day_and_time(ts)
        self.days.add(day)
        self.times.add(clock)

    def add_value(self, value) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            self.numbers.add(float(value))
        elif isinstance(value, str):
            self.entities.add(value.lower())

    def merge(self, other: "Evidence") -> None:
        self.entities |= other.entities
        self.numbers |= other.numbers
        self.days |= other.days
        self.times |= other.times


def _evidence_by_tag(recalled: list[dict], proofs: dict, proofs_only: bool) -> dict[str, Evidence]:
    tags: dict[str, Evidence] = {}
    if not proofs_only:
        for edge in recalled:
            tags.setdefault(edge["hedge_tag"], Evidence()).add_edge(edge)
    for proof in proofs["proofs"]:
        below: dict[str, Evidence] = {}
        for node in proof["nodes"]:  # post-order: children come first
            ev = Evidence()
            if node["kind"] == "evidence":
                ev.add_edge(node)
                tags.setdefault(node["hedge_tag"], Evidence()).add_edge(node)
            for link in proof["edges"]:
                if link["to"] == node["id"]:
                    ev.merge(below[link["from"]])
            if node["kind"] in ("conclusion", "fact"):
                _fact_values(node["fact"], ev)
            below[node["id"]] = ev
            if node["kind"] == "conclusion":
                tags.setdefault(node["step_tag"], Evidence()).merge(ev)
                tags.setdefault(node["rule_tag"], Evidence()).merge(ev)
    return tags


def _fact_values(fact: str, ev: Evidence) -> None:
    term = parse_term(fact)
    if isinstance(term, Compound):
        for arg in term.args:
            value = to_json(arg)
            ev.add_value(value if not isinstance(value, (dict, list)) else json.dumps(value))


def _mentions(conn, sentence: str) -> tuple[set[str], set[float], set[str], set[str]]:
    text = _TAG.sub(" ", sentence)
    days, times = set(), set()
    for day, clock in _DATE.findall(text):
        days.add(day)
        if clock:
            times.add(clock)
    text = _DATE.sub(" ", text)
    times |= {t if len(t) == 5 else "0" + t for t in _TIME.findall(text)}
    text = _TIME.sub(" ", text)
    entities = {t.lower() for t in typed_tokens(text)}
    text = TYPED.sub(" ", text)
    words = [w.rstrip(".").lower() for w in _WORD.findall(text)]
    if words:
        known = {name.lower() for name in known_names(conn, words)}
        for w in words:  # a bare word names an entity when it is one, or is the id part of one
            matches = {k for k in known if k == w or k.split(":", 1)[-1] == w}
            if matches:
                entities.add(next(iter(sorted(matches))) if len(matches) == 1 else w)
    numbers = {float(n) for n in _NUMBER.findall(text)}
    return entities, numbers, days, times


def _aligned(conn, sentence: str, evidence: Evidence) -> str | None:
    entities, numbers, days, times = _mentions(conn, sentence)
    for entity in sorted(entities):
        if entity not in evidence.entities and not any(e.split(":", 1)[-1] == entity for e in evidence.entities):
            return f"entity {entity} is not in the cited evidence"
    for number in sorted(numbers):
        if number not in evidence.numbers:
            return f"number {number:g} is not in the cited evidence"
    for day in sorted(days):
        if day not in evidence.days:
            return f"date {day} is not in the cited evidence"
    for clock in sorted(times):
        if clock not in evidence.times:
            return f"time {clock} is not in the cited evidence"
    return None


def verify(kb, answer: str, query: str = "", require_proof: bool = False, goal_pred: str | None = None,
           top_k: int | None = None, memory: str | None = None, now: object = None) -> dict:
    answer = require_text("answer", answer, max_chars=MAX_ANSWER_CHARS)
    if goal_pred is not None:
        require_name("goal_pred", goal_pred)
    reasoning = run(kb, query, top_k, memory, now)  # recalls the query's edges once, for proofs and tags alike
    proofs = proofs_of(kb, reasoning, query, goal_pred)
    with kb.store.read() as conn:
        tags = _evidence_by_tag([e.to_dict() for e in reasoning.edges.values()], proofs, require_proof)
        proved = proofs["count"] > 0
        allowed = sorted(tags, key=lambda t: (t.split("-")[0], int(t.split("-")[1])))
        sentences, kept = [], []
        for unit in _units(answer):
            factual = is_factual(unit)
            cited = _TAG.findall(unit)
            reason = None
            if factual:
                usable = [t for t in cited if t in tags]
                if not cited:
                    reason = "no citation"
                elif not usable:
                    reason = f"cites no allowed tag ({', '.join(cited)})"
                else:
                    evidence = Evidence()
                    for t in usable:
                        evidence.merge(tags[t])
                    reason = _aligned(conn, unit, evidence)
            sentences.append({"text": unit, "factual": factual, "tags": cited, "kept": reason is None,
                              "reason": reason})
            if reason is None:
                kept.append(unit)
    factual = [s for s in sentences if s["factual"]]
    supported = [s for s in factual if s["kept"]]
    stripped = [{"sentence": s["text"], "reason": s["reason"]} for s in factual if not s["kept"]]
    coverage = len(supported) / len(factual) if factual else 1.0
    if require_proof and not proved:
        outcome, why = "abstained", "require_proof: nothing was proved"
    elif factual and not supported:
        outcome, why = "abstained", "no factual sentence is supported"
    else:
        outcome, why = ("supported" if not stripped else "stripped"), None
    text = ABSTAIN_TEXT if outcome == "abstained" else " ".join(kept)
    return {"outcome": outcome, "abstained": outcome == "abstained", "abstain_reason": why,
            "coverage": round(coverage, 6), "supported_count": len(supported), "stripped_count": len(stripped),
            "stripped": stripped, "answer": text, "allowed_tags": allowed, "proved": proved,
            "derived_count": proofs["derived_count"], "sentences": sentences}
