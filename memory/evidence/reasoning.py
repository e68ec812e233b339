"""Confidence-weighted reasoning over observations, and proofs that end in stored evidence.

`reason` evaluates the segment's rules (stratified, semi-naive: the Datalog engine)
over the observations a query is about plus the stored facts. Confidence is
Viterbi-style max-product: a derivation's confidence is its rule's confidence times
the weights of the observations at its leaves, each observation once however
many of its facts (hedge/member) the derivation uses; stored facts, negations,
comparisons and aggregates count 1. A conclusion takes the best (maximum) of its
derivations. A derivation is never more confident than its premises, so the best
derivations form finite proof trees, and `prove` returns exactly those."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any
from dataclasses import dataclass, field

from ..datalog import BodyMatcher, Model, Pred, Program, Rule, goal_text
from ..errors import BudgetExceeded
from ..knowledge.proof_view import EVIDENCE, FACT, RULE, Evidence, ProofStep, evidence_graph
from ..knowledge.segments import resolve as resolve_segment
from ..knowledge.undefined import unknown_name
from ..store.repository import Transaction
from ..terms.codec import to_json
from ..validation import require_name
from .observations import RELATIONS, hedge_tag, relation_tuples
from .recall import check_top_k, edges_for

MAX_MATCHES = 2_000_000
EPSILON = 1e-12


@dataclass
class Best:
    confidence: float
    rule: Rule | None = None
    premises: list = field(default_factory=list)  # (kind, literal, value) as BodyMatcher matches them
    rules: float = 1.0  # product of the rule confidences in this derivation
    edges: frozenset = frozenset()  # the observations at its leaves (each weighs in once)


@dataclass
class Reasoning:
    program: Program
    model: Model | None  # None when the evaluation ran out of budget
    best: dict  # (pred, tuple) -> Best, for derived tuples
    edges: dict  # edge id -> Edge
    rule_meta: dict  # database rule id -> (name, confidence)
    iterations: int
    timed_out: bool
    segment: str

    def rule_label(self, rule: Rule) -> tuple[str, str, int | None]:
        """(rule_id as reported, RULE tag, database id)."""
        db_id = self.program.sources[rule.meaning.source].rule_id
        name = self.rule_meta.get(db_id, (None, 1.0))[0]
        return (f"rule:{name}" if name else f"rule:{db_id}"), f"RULE-{db_id}", db_id

    def premise(self, pred: Pred, values: tuple) -> tuple[float, frozenset]:
        """(rule-confidence product, observations) behind one premise."""
        found = self.best.get((pred, values))
        if found is not None:
            return found.rules, found.edges
        if pred.indicator in (("hedge", 4), ("member", 2)) and values and values[0] in self.edges:
            return 1.0, frozenset((values[0],))
        return 1.0, frozenset()

    def weigh(self, rules: float, edges: frozenset) -> float:
        value = rules
        for edge in edges:
            value *= self.edges[edge].weight
        return value

    def derived(self) -> list[tuple]:
        out = []
        for (pred, values), best in self.best.items():
            if pred.is_local and best.rule is not None:
                out.append((pred, values, best))
        out.sort(key=lambda d: (-d[2].confidence, goal_text(d[0], d[1])))
        return out


def run(kb, query: str, top_k: int | None, memory: str | None, now: object = None) -> Reasoning:
    top_k = check_top_k(top_k, 40)
    started = time.perf_counter()
    budget = kb.new_budget()
    with kb.repository.read() as tx:
        segment = resolve_segment(tx, memory)
        edges = edges_for(tx, query, top_k, now)
        program = kb.program(tx, segment)
        rule_meta = {rule.id: (rule.name, rule.confidence) for rule in tx.rules.all(segment.id)}

    def load(preds: set) -> dict:
        with kb.repository.read() as tx:
            observed = {p for p in preds if p.segment is None and p.indicator in RELATIONS}
            out = kb.loader(tx, segment)(preds - observed)
            for pred in observed:
                out[pred] = kb.stored_tuples(tx, segment, *pred.indicator) + relation_tuples(tx, pred.indicator, edges)
        return out

    try:  # outside the transaction: a long evaluation holds up no other call
        model = kb.evaluate_all(program, load, budget)
    except BudgetExceeded:
        return Reasoning(program, None, {}, {e.id: e for e in edges}, rule_meta, 0, True, segment.name)
    reasoning = Reasoning(program, model, {}, {e.id: e for e in edges}, rule_meta,
                          model.iterations, False, segment.name)
    deadline = started + budget.timeout_s if budget.timeout_s else None
    reasoning.timed_out = not _propagate(reasoning, model, deadline)
    return reasoning


def _propagate(reasoning: Reasoning, model: Model, deadline: float | None) -> bool:
    """Max-product confidences to a fixpoint; False when the time budget ran out."""
    matcher = BodyMatcher.over(model)
    user_rules = [r for r in model.rules if not r.head.pred.is_auxiliary]
    seen = 0
    changed = True
    while changed:
        changed = False
        for rule in user_rules:
            db_id = reasoning.program.sources[rule.meaning.source].rule_id
            weight = reasoning.rule_meta.get(db_id, (None, 1.0))[1]
            for premises, head in matcher.matches(rule):
                seen += 1
                if seen % 1000 == 0 and deadline is not None and time.perf_counter() > deadline or seen > MAX_MATCHES:
                    return False
                rules_product, edges = weight, frozenset[int]()
                for kind, lit, found in premises:
                    if kind == "lit":
                        r, e = reasoning.premise(lit.pred, found)
                        rules_product *= r
                        edges |= e
                value = reasoning.weigh(rules_product, edges)
                provenance = model.provenance(rule.head.pred, head)
                if provenance is not None and not provenance.derived:
                    continue  # also a stored fact: believed outright, confidence 1
                key = (rule.head.pred, head)
                current = reasoning.best.get(key)
                if current is None or value > current.confidence + EPSILON:
                    reasoning.best[key] = Best(value, rule, premises, rules_product, edges)
                    changed = True
    return True


def reason(kb, query: str = "", top_k: int | None = None, memory: str | None = None, now: object = None) -> dict:
    r = run(kb, query, top_k, memory, now)
    derived = []
    fired: list[str] = []
    for pred, values, best in r.derived():
        rule_id, rule_tag, _ = r.rule_label(best.rule)
        derived.append({"fact": goal_text(pred, values), "pred": pred.name,
                        "args": [to_json(v) for v in values], "confidence": round(best.confidence, 6),
                        "rule_id": rule_id, "rule_tag": rule_tag})
        if rule_id not in fired:
            fired.append(rule_id)
    return {"query": query, "memory": r.segment, "derived": derived, "rules_fired": sorted(fired),
            "iterations": r.iterations, "timed_out": r.timed_out, "edges_considered": len(r.edges),
            "hedge_tags": [hedge_tag(i) for i in r.edges]}


class _ProofWriter:
    """Proofs from the best derivations, as proof steps (memory/knowledge/proof_view.py) in prove's graph shape:
    evidence leaves, conclusion nodes, STEP tags in first-seen post-order across the call's proofs."""

    def __init__(self, reasoning: Reasoning, kb, tx: Transaction) -> None:
        self.r = reasoning
        self.kb = kb
        self.tx = tx
        self.step_of: dict[str, str] = {}

    def proof(self, pred: Pred, values: tuple) -> dict:
        nodes, edges = evidence_graph(self.step(pred, values, set()), self.step_of)
        body = json.dumps({"nodes": [{k: v for k, v in n.items() if k not in ("id", "step_tag")} for n in nodes],
                           "edges": edges}, sort_keys=True, ensure_ascii=False)
        root = nodes[-1]
        return {"proof_id": "proof-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16], "status": "proved",
                "confidence": root["confidence"], "fact": root["fact"], "nodes": nodes, "edges": edges}

    def step(self, pred: Pred, values: tuple, path: set) -> ProofStep:
        """The proof step of a conclusion (its best derivation), or the evidence it rests on; a conclusion met
        again on its own path is shown as evidence, so every proof is finite."""
        text = goal_text(pred, values)
        best = self.r.best.get((pred, values))
        if best is None or best.rule is None or (pred, values) in path:
            return self._evidence(pred, values, text)
        children = []
        for kind, lit, found in best.premises:
            if kind == "lit":
                children.append(self.step(lit.pred, found, path | {(pred, values)}))
            else:
                children.append(ProofStep(found, kind, confidence=1.0))
        label, _, db_id = self.r.rule_label(best.rule)
        return ProofStep(text, RULE, self.r.program.sources[best.rule.meaning.source].text, db_id, children,
                         confidence=round(best.confidence, 6), label=label)

    def _evidence(self, pred: Pred, values: tuple, text: str) -> ProofStep:
        if pred.indicator in (("hedge", 4), ("member", 2)) and values and values[0] in self.r.edges:
            edge = self.r.edges[values[0]]
            return ProofStep(text, EVIDENCE, confidence=edge.weight, evidence=Evidence(
                edge.tag, edge.id, edge.formation, edge.event_ts, edge.members, edge.weight, edge.content_hash))
        supports = self.kb.supports_of(self.r.segment, text)
        if self.kb.computed is not None and pred.indicator in self.kb.computed.preds:
            supports += self.kb.computed.supports(self.tx, pred.indicator, values)
        return ProofStep(text, FACT, supports=supports, confidence=1.0)


def prove(kb, query: str = "", goal_pred: str | None = None, top_k: int | None = None,
          memory: str | None = None, now: object = None) -> dict:
    if goal_pred is not None:
        require_name("goal_pred", goal_pred)
    return proofs_of(kb, run(kb, query, top_k, memory, now), query, goal_pred)


def proofs_of(kb, r: Reasoning, query: str, goal_pred: str | None) -> dict:
    """prove's result for a reasoning already run."""
    derived = r.derived()
    with kb.repository.read() as tx:
        writer = _ProofWriter(r, kb, tx)
        # Every conclusion's proof is written, in one order, so a STEP tag names the same conclusion whatever
        # goal_pred keeps: prove with goal_pred and verify without it (or with another) agree on the tags.
        proofs = [proof for pred, values, _ in derived for proof in [writer.proof(pred, values)]
                  if goal_pred is None or pred.name == goal_pred]
    out: dict[str, Any] = {
        "query": query, "memory": r.segment, "goal_pred": goal_pred, "count": len(proofs),
        "derived_count": len(derived), "edges_considered": len(r.edges), "timed_out": r.timed_out, "proofs": proofs}
    heads = {rule.head.pred.name for rule in r.program.rules if rule.head.pred.is_local}
    if goal_pred is not None and goal_pred not in heads:  # a typo would read as "nothing happened"
        out["warnings"] = [unknown_name("goal_pred", goal_pred, heads, "is no predicate a rule defines")]
    return out

