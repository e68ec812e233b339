"""The proof as people see it: one typed node, built here, rendered by every surface.

explain_why, get_belief_status, memory_recall's derived answers and prove all show a proof as a tree of
`ProofStep`s. The engine's `ProofNode` (memory/datalog/proofs.py) is what the evaluation rebuilds from
provenance; `build` turns it into steps with what a reader needs at the leaves (the supports of each stored
fact, the segment it came from), and the renderers below give every shape a reply uses: the reference tree
(goal, rule_applied, children), the text tree (plus supports), the flat node list of structured content
(children as indexes) and prove's graph of nodes and edges. Surfaces that only see structured content (the
CLI, the explorer) read the flat list back into steps with `from_flat`. Every key a proof is shown with is
spelled in this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..datalog.proofs import ProofNode, map_tree

# The kinds of step: the engine's (fact, rule, builtin, negation, aggregate) and prove's evidence leaf (an
# observation the conclusion rests on).
FACT, RULE, EVIDENCE = "fact", "rule", "evidence"


@dataclass
class Evidence:
    """The observation behind an evidence leaf of prove's proofs."""

    hedge_tag: str
    edge_id: int
    formation: str
    event_ts: Any
    members: list[str]
    weight: float
    content_hash: str


@dataclass
class ProofStep:
    goal: str  # the canonical text of what this step shows
    kind: str  # fact | rule | builtin | negation | aggregate | evidence
    rule: str | None = None  # the rule's source text, for a rule step
    rule_id: int | None = None  # its database id
    children: list["ProofStep"] = field(default_factory=list)
    truncated: bool = False  # premises cut (max_depth, or the node budget)
    supports: list[str] | None = None  # a stored fact's supports: asserted, assumption:<name>, source:<id>, ...
    memory: str | None = None  # the segment a stored fact came from, when not the one asked
    memories: list[dict[str, Any]] | None = None  # the source memories behind `source:` supports the caller reads
    confidence: float | None = None  # prove's: how strongly the step is believed
    label: str | None = None  # prove's rule_id as reported (rule:<name> or rule:<id>)
    evidence: Evidence | None = None

    @property
    def rule_applied(self) -> str:
        """The reference's field: the rule text for a rule step, else the step's kind."""
        return self.rule if self.kind == RULE and self.rule else self.kind

    def walk(self) -> Iterator["ProofStep"]:
        """Every step, parents before children, without recursion (proofs can be deep)."""
        stack = [self]
        while stack:
            step = stack.pop()
            yield step
            stack.extend(reversed(step.children))

    def leaves(self) -> Iterator["ProofStep"]:
        return (step for step in self.walk() if not step.children)


def _mapped(root: ProofStep, convert: Callable[[ProofStep], dict[str, Any]]) -> dict[str, Any]:
    """`convert(step)` (a dict with an empty "children" list) for every step, nested the same way."""
    return map_tree(root, convert)


# --- building --------------------------------------------------------------------------------------------
SupportsOf = Callable[[ProofNode], tuple[list[str], str | None]]


def build(proof: ProofNode, supports_of: SupportsOf) -> ProofStep:
    """The steps of an engine proof; `supports_of(node)` gives a stored fact's supports and the segment it
    came from when that is not the one asked (None)."""

    def step(node: ProofNode) -> ProofStep:
        out = ProofStep(node.goal, node.kind, node.rule, node.rule_id, truncated=node.truncated)
        if node.kind == FACT and node.pred is not None:
            out.supports, out.memory = supports_of(node)
        return out

    built: ProofStep = map_tree(proof, step, attach=lambda out, child: out.children.append(child))
    return built


# --- rendering -------------------------------------------------------------------------------------------
def reference(root: ProofStep) -> dict[str, Any]:
    """The reference shape: goal, rule_applied, children (and truncated when cut)."""
    def node(step: ProofStep) -> dict[str, Any]:
        out: dict[str, Any] = {"goal": step.goal, "rule_applied": step.rule_applied, "children": []}
        if step.truncated:
            out["truncated"] = True
        return out
    return _mapped(root, node)


def text_tree(root: ProofStep) -> dict[str, Any]:
    """What the reply's text shows: the reference shape plus each stored fact's supports (most hosts show the
    model the text only, so it must say what each leaf rests on)."""
    def node(step: ProofStep) -> dict[str, Any]:
        out: dict[str, Any] = {"goal": step.goal, "rule_applied": step.rule_applied, "children": []}
        if step.truncated:
            out["truncated"] = True
        if step.supports is not None:
            out["supports"] = step.supports
        return out
    return _mapped(root, node)


def _detailed_node(step: ProofStep) -> dict[str, Any]:
    out: dict[str, Any] = {"goal": step.goal, "rule_applied": step.rule_applied, "kind": step.kind, "children": []}
    if step.rule_id is not None:
        out["rule_id"] = step.rule_id
    if step.truncated:
        out["truncated"] = True
    if step.supports is not None:
        out["supports"] = step.supports
    if step.memory is not None:
        out["memory"] = step.memory
    if step.memories is not None:
        out["memories"] = step.memories
    return out


def detailed(root: ProofStep) -> dict[str, Any]:
    """The nested tree with every step's kind, rule id, supports and source memories."""
    return _mapped(root, _detailed_node)


def flat(root: ProofStep) -> list[dict[str, Any]]:
    """The structured result's proof_nodes: the detailed nodes in depth-first order (the root first), each
    one's children the indexes of its children in the list, as shallow in JSON as a proof of any depth."""
    nodes: list[dict[str, Any]] = []
    stack: list[tuple[ProofStep, int | None]] = [(root, None)]
    while stack:
        step, parent = stack.pop()
        index = len(nodes)
        nodes.append(_detailed_node(step))
        if parent is not None:
            nodes[parent]["children"].append(index)
        stack.extend((child, index) for child in reversed(step.children))
    return nodes


def from_flat(nodes: list[dict[str, Any]]) -> ProofStep | None:
    """The steps of a structured result's proof_nodes (what the CLI and the explorer receive); None for none."""
    if not nodes:
        return None
    steps = [ProofStep(n["goal"], n.get("kind", RULE if n["rule_applied"] not in _KINDS else n["rule_applied"]),
                       n["rule_applied"] if n["rule_applied"] not in _KINDS else None, n.get("rule_id"),
                       truncated=bool(n.get("truncated")), supports=n.get("supports"), memory=n.get("memory"),
                       memories=n.get("memories")) for n in nodes]
    for step, node in zip(steps, nodes):
        step.children = [steps[i] for i in node["children"]]
    return steps[0]


_KINDS = frozenset({FACT, "builtin", "negation", "aggregate"})


def evidence_graph(root: ProofStep, step_of: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """prove's shape of a proof: its nodes in post-order (premises before what they prove), ids n1, n2, ...,
    and edges from each premise to its conclusion. `step_of` gives each conclusion one STEP tag however many
    proofs show it (shared by the proofs of one call, numbered in the order conclusions are first written)."""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    # (step, its children's ids once they are written): a step is written after all of its children
    stack: list[tuple[ProofStep, list[str] | None]] = [(root, None)]
    pending: list[list[str]] = []
    while stack:
        step, children = stack.pop()
        if children is None and step.kind == RULE:
            stack.append((step, []))
            pending.append([])
            stack.extend((child, None) for child in reversed(step.children))
            continue
        if children is not None:
            children = pending.pop()
        ident = f"n{len(nodes) + 1}"
        node = _graph_node(step, step_of, ident)
        nodes.append(node)
        if children is not None:
            edges.extend({"from": child, "to": ident} for child in children)
        if pending:
            pending[-1].append(ident)
    return nodes, edges


def _graph_node(step: ProofStep, step_of: dict[str, str], ident: str) -> dict[str, Any]:
    if step.kind == RULE:
        if step.goal not in step_of:
            step_of[step.goal] = f"STEP-{len(step_of) + 1}"
        return {"kind": "conclusion", "fact": step.goal, "confidence": step.confidence, "rule_id": step.label,
                "rule_tag": f"RULE-{step.rule_id}", "rule": step.rule, "step_tag": step_of[step.goal], "id": ident}
    if step.kind == EVIDENCE and step.evidence is not None:
        e = step.evidence
        return {"kind": EVIDENCE, "fact": step.goal, "hedge_tag": e.hedge_tag, "edge_id": e.edge_id,
                "formation": e.formation, "event_ts": e.event_ts, "members": e.members, "weight": e.weight,
                "content_hash": e.content_hash, "confidence": step.confidence, "id": ident}
    if step.kind == FACT:
        return {"kind": FACT, "fact": step.goal, "supports": step.supports, "confidence": step.confidence, "id": ident}
    return {"id": ident, "kind": step.kind, "fact": step.goal, "confidence": step.confidence}
