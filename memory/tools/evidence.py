"""Evidence tools over time-stamped observations: remember, recall, reason, prove, verify, detect."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..api import Memory
from ..evidence.limits import MAX_ANSWER_CHARS, MAX_QUERY_CHARS, MAX_TOP_K, SENSITIVITY_RANGE
from ..evidence.observations import (FIRST_SECOND, LAST_SECOND, MAX_ENTITY_CHARS, MAX_LABEL_CHARS, MAX_MEMBERS,
                                     MAX_RETRACT, TAG)
from ..access.context import READ, WRITE_OBSERVATIONS
from .models import OutputPart, Rows, Segment, Strings, ToolInput, ToolOutput, about, int_field, name_field, text_field
from .registry import Annotations, Reply, tool
from .json_text import compact_json
from .notes import iso, warning_lines, with_notes

Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS, description=(
    "Entities (type:id or names) and a time window, in words"))]
Now = Annotated[int, Field(ge=FIRST_SECOND, le=LAST_SECOND, description=(
    "Epoch seconds that 'last 3 days' counts from (default now)"))]


def _top_k(default: int) -> Any:
    return int_field(f"Observations considered (default {default})", 1, MAX_TOP_K)


class RememberInput(ToolInput):
    members: Annotated[list[Annotated[str, Field(min_length=1, max_length=MAX_ENTITY_CHARS)]], Field(
        min_length=1, max_length=MAX_MEMBERS, description='e.g. ["account:admin", "host:db01"]')]
    event_ts: Annotated[int, Field(ge=FIRST_SECOND, le=LAST_SECOND,
                                   description="Epoch seconds (default now)")] | None = None
    weight: Annotated[float, Field(gt=0, le=1, description="In (0, 1] (default 1)")] | None = None
    formation: Annotated[str, Field(max_length=MAX_LABEL_CHARS, description="Your label, shown with it")] | None = None


class RememberOutput(ToolOutput):
    stored: bool
    table: str
    id: int
    hedge_tag: str
    event_ts: int
    formation: str
    structural_formation: str
    weight: float
    members: Strings
    member_ids: list[int]
    source: str


@tool(
    "remember",
    title="Remember observation",
    group="evidence",
    description=(
        "Record a time-stamped observation linking entities (type:id, e.g. host:db01, account:admin) at event_ts "
        "with a weight. Its formation is inferred from member types (see the conventions resource); your "
        "formation label is kept and shown. Cite it as HEDGE-<id>."
    ),
    details=(
        "Store one observation: a hyperedge linking members (entity names; the type:id prefix gives each its "
        "type) at event_ts (epoch seconds, default now) with a weight in (0, 1]. The structural formation "
        "(DRONE_EVENT, AUTH_EVENT, …) is inferred from member types; formation is your own label. Rules see "
        "observations as hedge(E, Formation, Ts, Weight), member(E, Entity) and entity_type(Entity, Type); "
        "the citation tag of the stored edge is HEDGE-<id>."
    ),
    capability=WRITE_OBSERVATIONS,
    annotations=Annotations(read_only=False, destructive=False, idempotent=False),
)
def remember(api: Memory, args: RememberInput) -> Reply[RememberOutput]:
    weight = 1.0 if args.weight is None else args.weight
    stored = RememberOutput.model_validate(api.evidence.remember(args.members, args.event_ts, weight, args.formation or ""))
    untyped = [m for m in stored.members if ":" not in m]
    warnings = [f"member {m} has no type (write type:id, e.g. service:{m}): a rule or recall asking for a type "
                "does not find it" for m in untyped[:5]]
    return Reply(with_notes(f"Stored observation {stored.hedge_tag} "
                            f"({_formation(stored.structural_formation, stored.formation)}) at {stored.event_ts} "
                            f"({iso(stored.event_ts)}): {', '.join(stored.members)}", warning_lines(warnings)), stored)


def _formation(structural: str, label: str) -> str:
    """The inferred formation and the caller's own label: AUTH_EVENT/failed_login."""
    return f"{structural}/{label}" if label and label != structural else structural


class ForgetInput(ToolInput):
    hedge_tags: Annotated[list[Annotated[str, Field(pattern=TAG.pattern)]], Field(
        min_length=1, max_length=MAX_RETRACT, description="Tags like HEDGE-12")]
    reason: Annotated[str, text_field("Why (kept with the observation)", 4096)] | None = None


class ForgetOutput(ToolOutput):
    retracted: Strings
    already_retracted: Strings


@tool(
    "forget_observation",
    title="Retract observations",
    group="evidence",
    description=(
        "Retract observations by tag (HEDGE-<id>): they stay in the audit chain but no longer count for recall, "
        "reason, prove, verify or detect."
    ),
    details=(
        "Retract observations by their tags (HEDGE-<id>) with an optional reason: they stay stored, audited and "
        "in the hash chain, but recall, reason, prove, verify and detect no longer use them, so conclusions "
        "resting on them go. All or nothing; retracting one twice changes nothing."
    ),
    capability=WRITE_OBSERVATIONS,
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
)
def forget_observation(api: Memory, args: ForgetInput) -> Reply[ForgetOutput]:
    result = ForgetOutput.model_validate(api.evidence.forget_observation(args.hedge_tags, args.reason))
    return Reply(f"Retracted {len(result.retracted)} observation(s)"
                 + (f": {', '.join(result.retracted)}" if result.retracted else ""), result)


class RecallInput(ToolInput):
    query: Query | None = None
    top_k: Annotated[int, _top_k(20)] | None = None
    now: Now | None = None


class Parsed(OutputPart):
    entities: Strings
    unknown_entities: Strings
    types: Strings
    unparsed: Strings


class RecallOutput(ToolOutput):
    query: str
    now: int
    parsed: Parsed
    count: int
    edges: Rows
    abstained: bool


@tool(
    "recall",
    title="Recall observations",
    group="evidence",
    description=(
        "The observations most relevant to a query: entities (type:id or names) and a time window ('last 3 days', "
        "'since 2026-01-01') are parsed out; the text says what was not understood and which entities are "
        "unknown."
    ),
    details=(
        "Deterministically retrieve the observations most relevant to a query, without any model: entities "
        "(type:id tokens, known names, type words like 'drones') and a time window ('last 3 days', 'since "
        "2026-01-01', 'between … and …', 'yesterday', ISO dates, epoch seconds) are parsed out relative to now; "
        "edges are ranked by member overlap, weight and recency (ties by id). 'in May 2026', 'during 2025' "
        "name a month or year; since/after never reach past now; an impossible date or a negative duration is "
        "an error. Returns what was parsed (parsed.unparsed: the words that had no effect) and each edge with "
        "its stable hedge_tag."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def recall(api: Memory, args: RecallInput) -> Reply[RecallOutput]:
    found = api.evidence.recall(args.query or "", args.top_k, args.now)
    result = RecallOutput.model_validate(found)
    lines = [f"{e['hedge_tag']} {_formation(e['formation'], e.get('label', ''))} {iso(e['timestamp'])} "
             f"w={e['weight']:g}: {', '.join(e['members'])}" for e in result.edges]
    if not result.edges:
        lines.append(f"No observations recalled ({found['reason']})")
    return Reply("\n".join([*_parse_lines(found), *lines, *_recall_cut(found)]), result)


def _parse_lines(found: dict[str, Any]) -> list[str]:
    """What the query was read as, when something in it had no effect or names nothing stored: the words a
    model must not take as answered."""
    parsed, lines = found["parsed"], []
    window = parsed.get("window")
    if parsed.get("unknown_entities"):
        lines.append(f"% unknown: {', '.join(parsed['unknown_entities'])} (no observation names them: what "
                     "follows is about other entities)")
    from ..evidence.recall import word_parts  # loaded with the first recall, not by the command line's start

    timeless = set(parsed.get("time_not_understood") or ())
    ignored = [w for w in parsed.get("unparsed") or () if not timeless & {w, *word_parts(w)}]
    if ignored:
        lines.append(f"% not understood (ignored): {', '.join(ignored)}")
    if timeless:
        lines.append(f"% time not understood, so nothing is recalled: {', '.join(parsed['time_not_understood'])} "
                     "(write an ISO time, e.g. 2026-12-01T11:00Z, or a range such as 'between 2026-12-01T09:00Z and "
                     "2026-12-01T11:00Z')")
    if window and (lines or not found.get("count")):  # an empty answer says which window it looked in
        start, end = (iso(window[k]) if window.get(k) is not None else "open" for k in ("start", "end"))
        lines.append(f"% window: {start} .. {end}")
    return lines


def _recall_cut(found: dict[str, Any]) -> list[str]:
    total, shown = found.get("total", found["count"]), found["count"]
    return [f"% {shown} of {total} observations shown (raise top_k for more)"] if total > shown else []


class ReasonInput(ToolInput):
    query: Query | None = None
    top_k: Annotated[int, _top_k(40)] | None = None
    memory: Segment | None = None
    now: Now | None = None


class ReasonOutput(ToolOutput):
    derived: Rows
    rules_fired: Strings
    iterations: int
    timed_out: bool
    edges_considered: int


@tool(
    "reason",
    title="Reason over observations",
    group="evidence",
    description=(
        "Forward-chain the segment's rules over the observations a query recalls and the stored facts; each "
        "conclusion with its confidence and rule."
    ),
    details=(
        "Stratified forward chaining of the segment's rules over the observations relevant to query (top_k) "
        "and the stored facts, without any model. Each derived fact has a confidence (the product of its "
        "rule confidences and of the weights of the observations it rests on, each once; the best derivation "
        "wins) and the rule that produced it."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def reason(api: Memory, args: ReasonInput) -> Reply[ReasonOutput]:
    result = ReasonOutput.model_validate(api.evidence.reason(args.query or "", args.top_k, args.memory, args.now))
    return Reply(compact_json({"derived": result.derived, "rules_fired": result.rules_fired,
                               "iterations": result.iterations, "timed_out": result.timed_out,
                               "edges_considered": result.edges_considered}), result)


class ProveInput(ToolInput):
    query: Query | None = None
    goal_pred: Annotated[str, name_field("Only proofs of this predicate")] | None = None
    top_k: Annotated[int, _top_k(40)] | None = None
    memory: Segment | None = None
    now: Now | None = None


class ProveOutput(ToolOutput):
    count: int
    derived_count: int
    edges_considered: int
    proofs: Rows
    warnings: Strings | None = None  # goal_pred names no rule-defined predicate


@tool(
    "prove",
    title="Prove conclusions",
    group="evidence",
    description=(
        "The proof of each conclusion the rules derive from recalled observations: evidence HEDGE-<id>, rule "
        "RULE-<id>, step STEP-<n>. Cite these tags in an answer you check with verify."
    ),
    details=(
        "Reason, then return the proof of each conclusion (or only those of goal_pred): nodes of kind "
        "evidence (a stored observation, with its hedge_tag), fact (a stored fact) and conclusion (with "
        "rule_tag RULE-<id> and step_tag STEP-<n>), and the edges between them. proof_id is a hash of the "
        "proof, so the same proof always has the same id."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def prove(api: Memory, args: ProveInput) -> Reply[ProveOutput]:
    result = ProveOutput.model_validate(api.evidence.prove(args.query or "", args.goal_pred, args.top_k, args.memory,
                                                  args.now))
    lines = [_proof_line(p) for p in result.proofs]
    return Reply(with_notes("\n".join(lines) if lines else "Nothing proved", warning_lines(result.warnings)),
                 result)


def _proof_line(proof: dict[str, Any]) -> str:
    """One proof with every tag verify accepts for it: the conclusion's STEP and RULE, its evidence's HEDGEs."""
    tags = [f"{n['step_tag']} ({n['rule_tag']} {n.get('rule_id', '')})".replace(" )", ")")
            for n in proof["nodes"] if n["kind"] == "conclusion" and n.get("fact") == proof["fact"]]
    evidence = sorted({n["hedge_tag"] for n in proof["nodes"] if n["kind"] == "evidence"},
                      key=lambda tag: int(tag.split("-")[1]))
    return (f"{proof['proof_id']} {proof['status']} {proof['confidence']:g}: {proof['fact']} "
            f"{' '.join(tags)} <- {', '.join(evidence) or 'stored facts only'}")


class VerifyInput(ToolInput):
    answer: Annotated[str, text_field("The answer, citing HEDGE-, RULE-, STEP- tags", MAX_ANSWER_CHARS)]
    query: Query | None = None
    require_proof: Annotated[bool, about("Abstain unless something is proved")] | None = None
    goal_pred: Annotated[str, name_field("Only proofs of this predicate")] | None = None
    top_k: Annotated[int, _top_k(40)] | None = None
    memory: Segment | None = None
    now: Now | None = None


class VerifyOutput(ToolOutput):
    outcome: Literal["supported", "stripped", "abstained"]
    abstained: bool
    coverage: float
    supported_count: int
    stripped_count: int
    stripped: Rows
    answer: str
    allowed_tags: Strings
    proved: bool
    derived_count: int


@tool(
    "verify",
    title="Verify an answer",
    group="evidence",
    description=(
        "Check a written answer against evidence before giving it: keeps each sentence whose citations (HEDGE-, "
        "RULE-, STEP- tags) carry what it says, strips the rest, and says why for each sentence stripped."
    ),
    details=(
        "Gate an answer against evidence: split it into sentences and list items; keep a sentence that makes "
        "no claim at all, and keep a factual one only if it cites an allowed tag (HEDGE-n, RULE-n, STEP-n from "
        "this query's recall and proofs) and what it asserts is carried by the cited evidence: its entities "
        "and types, numbers (percentages, counts, durations), dates and times, and relation words (the cited "
        "observation's formation or the proved conclusion's predicate and rule names); negation, ordering "
        "and words outside that vocabulary are stripped. Returns the sanitized answer, outcome (supported, "
        "stripped, abstained), coverage and each stripped sentence with its reason. require_proof abstains "
        "when nothing is proved and allows only tags from proofs."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
    evaluates=True,
)
def verify(api: Memory, args: VerifyInput) -> Reply[VerifyOutput]:
    result = VerifyOutput.model_validate(api.evidence.verify(args.answer, args.query or "", bool(args.require_proof),
                                                    args.goal_pred, args.top_k, args.memory, args.now))
    kept, checked = result.supported_count, result.supported_count + result.stripped_count
    if result.outcome == "supported":
        return Reply(f"{result.answer}\n\n% outcome: supported ({kept} of {checked} sentence(s) kept)", result)
    lines = [f"% outcome: {result.outcome} ({kept} of {checked} sentence(s) kept)"]
    lines += [f"% stripped: {_quoted(s['sentence'])}: {s['reason']}" for s in result.stripped]
    if result.allowed_tags:
        lines.append(f"% tags you may cite: {', '.join(result.allowed_tags[:30])}"
                     + (" …" if len(result.allowed_tags) > 30 else ""))
    return Reply("\n".join([result.answer, "", *lines]), result)  # the answer first, as the reference gives it


def _quoted(sentence: str, size: int = 120) -> str:
    flat = " ".join(sentence.split())
    return '"' + (flat if len(flat) <= size else flat[:size] + "…") + '"'


class DetectInput(ToolInput):
    full_scan: Annotated[bool, about("Also run the heavier detectors")] | None = None
    window: Annotated[str, Field(min_length=1, max_length=256, description=(
        "Only observations in this time window, e.g. 'last 7 days', 'between 2026-05-01 and 2026-05-08' "
        "(default: all)"))] | None = None
    sensitivity: Annotated[float, Field(ge=SENSITIVITY_RANGE[0], le=SENSITIVITY_RANGE[1], description=(
        "Divides the z thresholds and required excesses (default 1)"))] | None = None
    now: Now | None = None


class DetectSummary(OutputPart):
    risk_score: float
    findings: int
    edges_scanned: int
    sensitivity: float
    window: Annotated[dict[str, Any], about("The window scanned, when one was given")] | None = None


class DetectOutput(ToolOutput):
    findings: Rows
    summary: DetectSummary


@tool(
    "detect",
    title="Detect patterns",
    group="evidence",
    description=(
        "Scan observations for hubs, bursts, dense clusters, fan-out, convergence and outliers; full_scan adds "
        "lateral movement and beaconing. Each finding with its score and tags."
    ),
    details=(
        "Scan all observations for hubs, bursts, dense clusters, fan-out, convergence on a quiet entity and "
        "spectral outliers against per-type baselines that hold on heavy-tailed (Zipf-like) activity; full_scan "
        "adds lateral movement (time-ordered host-to-host chains) and beaconing (regular intervals). window "
        "limits the scan to a time phrase ('last 7 days', 'in May 2026'); sensitivity scales the thresholds "
        "(above 1 finds more). Each finding names its pattern, score, nodes and the hedge_tags behind it; "
        "summary.risk_score = 1 − Π(1 − weight·score) over the findings."
    ),
    capability=READ,
    annotations=Annotations(read_only=True),
)
def detect(api: Memory, args: DetectInput) -> Reply[DetectOutput]:
    result = DetectOutput.model_validate(api.evidence.detect(bool(args.full_scan), args.window, args.sensitivity, args.now))
    lines = [f"{f['pattern']} {f['score']:g}: {', '.join(f['nodes']) or '(all)'} [{', '.join(f['hedge_tags'][:5])}"
             f"{', …' if f['edge_count'] > 5 else ''}]" for f in result.findings]
    lines.append(f"risk_score {result.summary.risk_score:g} ({len(result.findings)} finding(s))")
    scheduled = result.model_dump().get("scheduled") or []
    lines += [f"% scheduled, not a finding: {', '.join(s['nodes'])} every {s['interval_s']} s ({s['events']} times)"
              for s in scheduled[:10]]
    if not result.findings:
        lines.append("% thresholds (summary.thresholds): each pattern's minimum size and z; small stores rarely "
                     "reach them")
    return Reply("\n".join(lines), result)
