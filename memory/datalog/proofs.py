"""Proof trees rebuilt from provenance.

Every derived tuple carries the rule that first derived it and a stamp strictly
greater than the stamps of that derivation's premises. A proof of a tuple is
found by matching the rule's head and searching its body for premises with
smaller stamps, which always exist and always end, even for cyclic rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .matching import BodyMatcher, goal_text
from .predicates import Pred
from .program import Program, Rule
from .relations import RULE_BITS, RULE_MASK

MAX_PROOF_NODES = 10_000


@dataclass
class ProofNode:
    goal: str
    kind: str  # fact | rule | builtin | negation | aggregate
    rule: str | None = None  # the source rule text for kind == "rule"
    rule_id: int | None = None
    pred: Pred | None = None
    args: tuple | None = None
    children: list["ProofNode"] = field(default_factory=list)
    truncated: bool = False

    @property
    def rule_applied(self) -> str:
        return self.rule if self.kind == "rule" and self.rule else self.kind

    def to_dict(self) -> dict:
        """The reference shape (goal, rule_applied, children), built without recursion: proofs can be deep."""
        return map_tree(self, ProofNode._plain)

    def _plain(self) -> dict:
        out: dict = {"goal": self.goal, "rule_applied": self.rule_applied, "children": []}
        if self.truncated:
            out["truncated"] = True
        return out


def map_tree(root, convert, children=lambda node: node.children,
             attach=lambda out, child: out["children"].append(child)):
    """`convert(node)` for every node of a tree, nested the same way (by default a dict with an empty
    "children" list; `attach(parent, child)` nests otherwise), with an explicit stack instead of recursion."""
    top = convert(root)
    stack = [(root, top)]
    while stack:
        node, out = stack.pop()
        for child in children(node):
            converted = convert(child)
            attach(out, converted)
            stack.append((child, converted))
    return top


class ProofBuilder:
    def __init__(self, program: Program, rules: list[Rule], relations: dict, budget=None,
                 indexes: dict | None = None) -> None:
        self.program = program
        self.rules = rules  # evaluated rules; code index i -> rules[i - 1]
        self.relations = relations  # original pred -> {tuple: code}
        self.matcher = BodyMatcher(relations, budget, indexes)  # indexes: as BodyMatcher takes them
        self.nodes = 0

    def prove(self, pred: Pred, args: tuple, depth: int, max_depth: int | None) -> ProofNode | None:
        """The proof of a tuple, built depth first with an explicit stack (a chain of 10,000 derivations must
        not recurse 10,000 deep). Children keep their premises' order; past MAX_PROOF_NODES nodes the
        remaining premises are cut and their parent marked truncated."""
        root: ProofNode | None = None
        # (parent or None, "lit" with (pred, args) or a leaf kind with its text, depth)
        stack: list = [(None, "lit", (pred, args), depth)]
        while stack:
            parent, kind, value, level = stack.pop()
            if parent is not None:
                if parent.truncated:
                    continue  # an earlier sibling's subtree used up the node budget
                if self.nodes >= MAX_PROOF_NODES:
                    parent.truncated = True
                    continue
            if kind != "lit":
                self.nodes += 1
                parent.children.append(ProofNode(value, kind))
                continue
            node, premises = self._derivation(value[0], value[1], level, max_depth)
            if node is None:
                continue
            if parent is None:
                root = node
            else:
                parent.children.append(node)
            for premise_kind, literal, premise in reversed(premises):
                if premise_kind == "lit":
                    stack.append((node, "lit", (literal.pred, premise), level + 1))
                else:
                    stack.append((node, premise_kind, premise, level + 1))
        return root

    def _derivation(self, pred: Pred, args: tuple, depth: int, max_depth: int | None):
        """One proof node and the premises still to prove under it (none for a fact or a cut-off node)."""
        code = self.relations.get(pred, {}).get(args)
        if code is None:
            return None, []
        self.nodes += 1
        goal = goal_text(pred, args)
        if not code & RULE_MASK:
            return ProofNode(goal, "fact", pred=pred, args=args), []
        rule = self.rules[(code & RULE_MASK) - 1].meaning
        source = self.program.sources[rule.source]
        node = ProofNode(goal, "rule", rule=source.text, rule_id=source.rule_id, pred=pred, args=args)
        if max_depth is not None and depth >= max_depth:
            node.truncated = True
            return node, []
        premises = self.matcher.derivation(rule, args, code >> RULE_BITS)
        if premises is None:
            node.truncated = True
            return node, []
        return node, premises
