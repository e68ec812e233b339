"""Evidence tools over time-stamped observations: remember, recall, reason, prove, verify, detect."""

from __future__ import annotations

from ..evidence.observations import (FIRST_SECOND, LAST_SECOND, MAX_ENTITY_CHARS, MAX_LABEL_CHARS, MAX_MEMBERS,
                                     MAX_RETRACT, TAG)
from ..evidence.limits import MAX_ANSWER_CHARS, MAX_QUERY_CHARS, MAX_TOP_K, SENSITIVITY_RANGE
from ..sources.context import READ, WRITE_OBSERVATIONS
from .registry import Annotations, ToolResult, tool
from .schemas import BOOLEAN, INTEGER, ROWS, STRING, STRINGS, compact_json, integer, memory_arg, name_arg, obj, out, text

QUERY = {"type": "string", "maxLength": MAX_QUERY_CHARS,
         "description": "Natural-language query: entities (type:id or known names) and a time window are parsed out"}
NOW = {"type": "integer", "minimum": FIRST_SECOND, "maximum": LAST_SECOND,
       "description": "Epoch seconds that relative times ('last 3 days') count from (default: now)"}
NUMBER = {"type": "number"}


def _top_k(default: int) -> dict:
    return integer(f"How many observations to consider (default {default})", 1, MAX_TOP_K)


@tool(
    "remember",
    title="Remember observation",
    group="evidence",
    description=(
        "Store one observation: a hyperedge linking members (entity names; the type:id prefix gives each its "
        "type) at event_ts (epoch seconds, default now) with a weight in (0, 1]. The structural formation "
        "(DRONE_EVENT, AUTH_EVENT, …) is inferred from member types; formation is your own label. Rules see "
        "observations as hedge(E, Formation, Ts, Weight), member(E, Entity) and entity_type(Entity, Type); "
        "the citation tag of the stored edge is HEDGE-<id>."
    ),
    input_schema=obj({
        "members": {"type": "array", "minItems": 1, "maxItems": MAX_MEMBERS,
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_ENTITY_CHARS},
                    "description": "Entity names to link, e.g. [\"account:admin\", \"host:db01\"]"},
        "event_ts": {"type": "integer", "minimum": FIRST_SECOND, "maximum": LAST_SECOND,
                     "description": "Epoch seconds of the event (default now)"},
        "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                   "description": "Strength of the observation in (0, 1] (default 1.0)"},
        "formation": {"type": "string", "maxLength": MAX_LABEL_CHARS, "description": "Your label for it"},
    }, ["members"]),
    output_schema=out({"stored": BOOLEAN, "table": STRING, "id": INTEGER, "hedge_tag": STRING, "event_ts": INTEGER,
                       "formation": STRING, "structural_formation": STRING, "weight": NUMBER, "members": STRINGS,
                       "member_ids": {"type": "array", "items": INTEGER}, "source": STRING}),
    capability=WRITE_OBSERVATIONS,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def remember(api, members: list, **kw) -> ToolResult:
    stored = api.remember(members, kw.get("event_ts"), kw.get("weight", 1.0), kw.get("formation", ""))
    return ToolResult(f"Stored observation {stored['hedge_tag']} ({stored['structural_formation']}) at "
                      f"{stored['event_ts']}: {', '.join(stored['members'])}", stored)


@tool(
    "forget_observation",
    title="Retract observations",
    group="evidence",
    description=(
        "Retract observations by their tags (HEDGE-<id>) with an optional reason: they stay stored, audited and "
        "in the hash chain, but recall, reason, prove, verify and detect no longer use them, so conclusions "
        "resting on them go. All or nothing; retracting one twice changes nothing."
    ),
    input_schema=obj({
        "hedge_tags": {"type": "array", "minItems": 1, "maxItems": MAX_RETRACT,
                       "items": {"type": "string", "pattern": TAG.pattern}, "description": "Tags like HEDGE-12"},
        "reason": text("Why (kept with the observation)", 4096),
    }, ["hedge_tags"]),
    output_schema=out({"retracted": STRINGS, "already_retracted": STRINGS}),
    capability=WRITE_OBSERVATIONS,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def forget_observation(api, hedge_tags: list, **kw) -> ToolResult:
    result = api.forget_observation(hedge_tags, kw.get("reason"))
    return ToolResult(f"Retracted {len(result['retracted'])} observation(s)"
                      + (f": {', '.join(result['retracted'])}" if result["retracted"] else ""), result)


@tool(
    "recall",
    title="Recall observations",
    group="evidence",
    description=(
        "Deterministically retrieve the observations most relevant to a query, without any model: entities "
        "(type:id tokens, known names, type words like 'drones') and a time window ('last 3 days', 'since "
        "2026-01-01', 'between … and …', 'yesterday', ISO dates, epoch seconds) are parsed out relative to now; "
        "edges are ranked by member overlap, weight and recency (ties by id). 'in May 2026', 'during 2025' "
        "name a month or year; since/after never reach past now; an impossible date or a negative duration is "
        "an error. Returns what was parsed (parsed.unparsed: the words that had no effect) and each edge with "
        "its stable hedge_tag."
    ),
    input_schema=obj({"query": QUERY, "top_k": _top_k(20), "now": NOW}),
    output_schema=out({"query": STRING, "now": INTEGER, "parsed": {"type": "object", "properties": {
        "entities": STRINGS, "unknown_entities": STRINGS, "types": STRINGS, "unparsed": STRINGS},
        "required": ["entities", "unknown_entities", "types", "unparsed"]}, "count": INTEGER,
                       "edges": ROWS, "abstained": BOOLEAN}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def recall(api, **kw) -> ToolResult:
    found = api.recall(kw.get("query", ""), kw.get("top_k"), kw.get("now"))
    if not found["edges"]:
        return ToolResult(f"No observations recalled ({found['reason']})", found)
    lines = [f"{e['hedge_tag']} {e['formation']} @{e['timestamp']} w={e['weight']:g}: {', '.join(e['members'])}"
             for e in found["edges"]]
    return ToolResult("\n".join(lines), found)


@tool(
    "reason",
    title="Reason over observations",
    group="evidence",
    description=(
        "Stratified forward chaining of the segment's rules over the observations relevant to query (top_k) "
        "and the stored facts, without any model. Each derived fact has a confidence (the product of its "
        "rule confidences and of the weights of the observations it rests on, each once; the best derivation "
        "wins) and the rule that produced it."
    ),
    input_schema=obj({"query": QUERY, "top_k": _top_k(40), "memory": memory_arg(), "now": NOW}),
    output_schema=out({"derived": ROWS, "rules_fired": STRINGS, "iterations": INTEGER, "timed_out": BOOLEAN,
                       "edges_considered": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def reason(api, **kw) -> ToolResult:
    result = api.reason(kw.get("query", ""), kw.get("top_k"), kw.get("memory"), kw.get("now"))
    return ToolResult(compact_json({k: result[k] for k in ("derived", "rules_fired", "iterations", "timed_out",
                                                            "edges_considered")}), result)


@tool(
    "prove",
    title="Prove conclusions",
    group="evidence",
    description=(
        "Reason, then return the proof of each conclusion (or only those of goal_pred): nodes of kind "
        "evidence (a stored observation, with its hedge_tag), fact (a stored fact) and conclusion (with "
        "rule_tag RULE-<id> and step_tag STEP-<n>), and the edges between them. proof_id is a hash of the "
        "proof, so the same proof always has the same id."
    ),
    input_schema=obj({"query": QUERY, "goal_pred": name_arg("Only prove conclusions of this predicate"),
                      "top_k": _top_k(40), "memory": memory_arg(), "now": NOW}),
    output_schema=out({"count": INTEGER, "derived_count": INTEGER, "edges_considered": INTEGER, "proofs": ROWS}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def prove(api, **kw) -> ToolResult:
    result = api.prove(kw.get("query", ""), kw.get("goal_pred"), kw.get("top_k"), kw.get("memory"), kw.get("now"))
    lines = [f"{p['proof_id']} {p['status']} {p['confidence']:g}: {p['fact']} "
             f"[{', '.join(sorted({n['hedge_tag'] for n in p['nodes'] if n['kind'] == 'evidence'}))}]"
             for p in result["proofs"]]
    return ToolResult("\n".join(lines) if lines else "Nothing proved", result)


@tool(
    "verify",
    title="Verify an answer",
    group="evidence",
    description=(
        "Gate an answer against evidence: split it into sentences and list items; keep a sentence that makes "
        "no claim at all, and keep a factual one only if it cites an allowed tag (HEDGE-n, RULE-n, STEP-n from "
        "this query's recall and proofs) and what it asserts is carried by the cited evidence: its entities "
        "and types, numbers (percentages, counts, durations), dates and times, and relation words (the cited "
        "observation's formation or the proved conclusion's predicate and rule names); negation, ordering "
        "and words outside that vocabulary are stripped. Returns the sanitized answer, outcome (supported, "
        "stripped, abstained), coverage and each stripped sentence with its reason. require_proof abstains "
        "when nothing is proved and allows only tags from proofs."
    ),
    input_schema=obj({
        "answer": text("The answer to gate", MAX_ANSWER_CHARS),
        "query": QUERY,
        "require_proof": {"type": "boolean", "description": "Abstain unless something is proved"},
        "goal_pred": name_arg("Restrict proofs to this predicate"),
        "top_k": _top_k(40),
        "memory": memory_arg(),
        "now": NOW,
    }, ["answer"]),
    output_schema=out({"outcome": {"type": "string", "enum": ["supported", "stripped", "abstained"]},
                       "abstained": BOOLEAN, "coverage": NUMBER, "supported_count": INTEGER,
                       "stripped_count": INTEGER, "stripped": ROWS, "answer": STRING, "allowed_tags": STRINGS,
                       "proved": BOOLEAN, "derived_count": INTEGER}),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def verify(api, answer: str, **kw) -> ToolResult:
    result = api.verify(answer, kw.get("query", ""), kw.get("require_proof", False), kw.get("goal_pred"),
                        kw.get("top_k"), kw.get("memory"), kw.get("now"))
    return ToolResult(result["answer"], result)


@tool(
    "detect",
    title="Detect patterns",
    group="evidence",
    description=(
        "Scan all observations for hubs, bursts, dense clusters, fan-out, convergence on a quiet entity and "
        "spectral outliers against per-type baselines that hold on heavy-tailed (Zipf-like) activity; full_scan "
        "adds lateral movement (time-ordered host-to-host chains) and beaconing (regular intervals). window "
        "limits the scan to a time phrase ('last 7 days', 'in May 2026'); sensitivity scales the thresholds "
        "(above 1 finds more). Each finding names its pattern, score, nodes and the hedge_tags behind it; "
        "summary.risk_score = 1 − Π(1 − weight·score) over the findings."
    ),
    input_schema=obj({"full_scan": {"type": "boolean", "description": "Also run the heavier detectors"},
                      "window": {"type": "string", "minLength": 1, "maxLength": 256,
                                 "description": "Only observations in this time window, e.g. 'last 7 days', "
                                                "'between 2026-05-01 and 2026-05-08' (default: all)"},
                      "sensitivity": {"type": "number", "minimum": SENSITIVITY_RANGE[0],
                                      "maximum": SENSITIVITY_RANGE[1],
                                      "description": "Divides the z thresholds and required excesses (default 1)"},
                      "now": NOW}),
    output_schema=out({"findings": ROWS, "summary": {"type": "object", "properties": {
        "risk_score": NUMBER, "findings": INTEGER, "edges_scanned": INTEGER, "sensitivity": NUMBER,
        "window": {"type": "object", "description": "The window scanned, when one was given"}},
        "required": ["risk_score", "findings", "edges_scanned", "sensitivity"]}}),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def detect(api, **kw) -> ToolResult:
    result = api.detect(kw.get("full_scan", False), kw.get("window"), kw.get("sensitivity"), kw.get("now"))
    lines = [f"{f['pattern']} {f['score']:g}: {', '.join(f['nodes']) or '(all)'} [{', '.join(f['hedge_tags'][:5])}"
             f"{', …' if f['edge_count'] > 5 else ''}]" for f in result["findings"]]
    lines.append(f"risk_score {result['summary']['risk_score']:g} ({len(result['findings'])} finding(s))")
    return ToolResult("\n".join(lines), result)
