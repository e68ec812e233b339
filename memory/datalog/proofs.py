"""Proof trees rebuilt from provenance.

Every derived tuple carries the rule that first derived it and a stamp strictly
greater than the stamps of that derivation's premises. A proof of a tuple is
found by matching the rule's head and searching its body for premises with
smaller stamps, which always exist and always end, even for cyclic rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..terms import Compound, format_term, is_ground
from .builtins import unify, resolve
from .plan import EMPTY_AGGREGATE, MISSING, aggregate_value, order_body, term_getter, number_getter, _match
from .program import Agg, Builtin, Lit, Neg, Program, Rule, literal_term, format_literal
from .relations import RULE_BITS, RULE_MASK
from .builtins import NUMERIC_COMPARE, ORDER_COMPARE, from_number, order_key

MAX_PROOF_NODES = 10_000


@dataclass
class ProofNode:
    goal: str
    kind: str  # fact | rule | builtin | negation | aggregate
    rule: str | None = None  # the source rule text for kind == "rule"
    rule_id: int | None = None
    pred: tuple | None = None
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
        out = {"goal": self.goal, "rule_applied": self.rule_applied, "children": []}
        if self.truncated:
            out["truncated"] = True
        return out


def map_tree(root, convert, children=lambda node: node.children) -> dict:
    """`convert(node)` (a dict with an empty "children" list) for every node of a tree, nested the same
    way, with an explicit stack instead of recursion."""
    top = convert(root)
    stack = [(root, top)]
    while stack:
        node, out = stack.pop()
        for child in children(node):
            converted = convert(child)
            out["children"].append(converted)
            stack.append((child, converted))
    return top


def walk_tree(tree: dict):
    """Every node of a proof tree (dict form), parents before children, without recursion."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("children", ())))


def flatten_tree(tree: dict) -> list[dict]:
    """A proof tree as a flat list in depth-first order (the root first), each node's `children` the indexes
    of its children in that list: as shallow in JSON as a proof of any depth can be."""
    nodes: list[dict] = []
    stack: list[tuple[dict, int | None]] = [(tree, None)]
    while stack:
        node, parent = stack.pop()
        index = len(nodes)
        nodes.append({**{k: v for k, v in node.items() if k != "children"}, "children": []})
        if parent is not None:
            nodes[parent]["children"].append(index)
        stack.extend((child, index) for child in reversed(node.get("children", ())))
    return nodes


def _goal_text(pred: tuple, args: tuple) -> str:
    return format_term(literal_term(Lit(pred, args)))


class ProofBuilder:
    def __init__(self, program: Program, rules: list[Rule], relations: dict, budget=None) -> None:
        self.program = program
        self.budget = budget  # checked at every search step: a proof search can backtrack a long time
        self.rules = rules  # evaluated rules; code index i -> rules[i - 1]
        self.relations = relations  # original pred -> {tuple: code}
        self.indexes: dict = {}
        self.ready: dict = {}  # (rule, remaining literals, bound variables) -> the literal to try next
        self.nodes = 0

    def candidates(self, pred: tuple, args: tuple, binding: dict) -> list:
        relation = self.relations.get(pred, {})
        key_cols, key = [], []
        for j, a in enumerate(args):
            value = resolve(a, binding)
            if is_ground(value):
                key_cols.append(j)
                key.append(value)
        if len(key_cols) == len(args):
            t = tuple(key)
            return [t] if t in relation else []
        if not key_cols:
            return relation.keys()  # a view: only the literal chosen is copied, when filtered by stamp
        cols = tuple(key_cols)
        idx = self.indexes.get((pred, cols))
        if idx is None:
            idx = {}
            for t in relation:
                idx.setdefault(tuple(t[c] for c in cols), []).append(t)
            self.indexes[(pred, cols)] = idx
        return idx.get(tuple(key), [])

    def prove(self, pred: tuple, args: tuple, depth: int, max_depth: int | None) -> ProofNode | None:
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

    def _derivation(self, pred: tuple, args: tuple, depth: int, max_depth: int | None):
        """One proof node and the premises still to prove under it (none for a fact or a cut-off node)."""
        code = self.relations.get(pred, {}).get(args)
        if code is None:
            return None, []
        self.nodes += 1
        goal = _goal_text(pred, args)
        if not code & RULE_MASK:
            return ProofNode(goal, "fact", pred=pred, args=args), []
        rule = self.rules[(code & RULE_MASK) - 1].meaning
        source = self.program.sources[rule.source]
        node = ProofNode(goal, "rule", rule=source.text, rule_id=source.rule_id, pred=pred, args=args)
        if max_depth is not None and depth >= max_depth:
            node.truncated = True
            return node, []
        binding: dict = {}
        for pattern, value in zip(rule.head.args, args):
            if not unify(pattern, value, binding):
                return node, []  # cannot happen for a tuple this rule produced
        premises = self.search(rule, binding, code >> RULE_BITS)
        if premises is None:
            node.truncated = True
            return node, []
        return node, premises

    def search(self, rule: Rule, binding: dict, stamp: int):
        """Premises for one derivation: relational literals are tried most-selective first
        (fewest candidates under the current binding), other literals once their inputs are bound."""
        premises: list = [None] * len(rule.body)

        def step(remaining: list, binding: dict) -> bool:
            if not remaining:
                return True
            if self.budget is not None:
                self.budget.check()
            key = (id(rule), tuple(remaining), frozenset(binding))
            ready = self.ready.get(key)
            if ready is None:  # the order depends only on which literals remain and which variables are bound
                ready = self.ready[key] = order_body(
                    Rule(rule.head, tuple(rule.body[i] for i in remaining), rule.source), set(binding), lambda p: 0)[0]
            i = remaining[ready]
            lit = rule.body[i]
            if isinstance(lit, Lit):
                best = None
                for j in remaining:
                    other = rule.body[j]
                    if isinstance(other, Lit):
                        cands = self.candidates(other.pred, other.args, binding)
                        if best is None or len(cands) < len(best[1]):
                            best = (j, cands)
                i, cands = best  # type: ignore[misc]
                lit = rule.body[i]
                rel = self.relations.get(lit.pred, {})
                cands = [t for t in cands if (rel[t] >> RULE_BITS) < stamp]
                if len(cands) > 1:
                    cands.sort(key=lambda t: (rel[t] >> RULE_BITS, tuple(order_key(x) for x in t)))
                rest = [j for j in remaining if j != i]
                for t in cands:
                    trial = dict(binding)
                    if all(unify(a, v, trial) for a, v in zip(lit.args, t)):
                        premises[i] = ("lit", lit, t)
                        if step(rest, trial):
                            return True
                return False
            ok, trial, text, kind = self.check(lit, binding)
            if not ok:
                return False
            premises[i] = (kind, lit, text)
            return step([j for j in remaining if j != i], trial)

        if not step(list(range(len(rule.body))), binding):
            return None
        return [p for p in premises if p is not None]

    def check(self, lit, binding: dict):
        """Evaluate a non-relational literal under a binding: (holds, extended binding, text, kind)."""
        if isinstance(lit, Neg):
            args = tuple(resolve(a, binding) for a in lit.lit.args)
            holds = not any(
                all(_match(a, v, (), {}, {}) for a, v in zip(args, t)) for t in self.candidates(lit.lit.pred, args, {})
            )
            return holds, binding, "\\+ " + _goal_text(lit.lit.pred, args), "negation"
        if isinstance(lit, Builtin):
            left, right = resolve(lit.left, binding), resolve(lit.right, binding)
            trial = dict(binding)
            op = lit.op
            if op == "is":
                value = from_number(number_getter(right, {})(()))
                holds = unify(left, value, trial)
                left = resolve(left, trial)
            elif op == "=":
                holds = unify(left, right, trial)
                left, right = resolve(left, trial), resolve(right, trial)
            elif op in NUMERIC_COMPARE:
                holds = NUMERIC_COMPARE[op](number_getter(left, {})(()), number_getter(right, {})(()))
            elif op in ORDER_COMPARE:
                holds = ORDER_COMPARE[op](order_key(left), order_key(right))
            elif op == "==":
                holds = left == right
            else:
                holds = left != right
            if lit.negated:
                holds, trial = not holds, binding
            text = format_term(Compound(op, (left, right)))
            return holds, trial, ("\\+ " + text if lit.negated else text), "builtin"
        # aggregate
        position = {v: i for i, v in enumerate(lit.goal.args)}
        template = term_getter(lit.template, position) if lit.template is not None else None
        members = [t for t in self.relations.get(lit.goal.pred, {})
                   if all(t[position[v]] == resolve(v, binding) for v in lit.group)]
        value = aggregate_value(lit.kind, members, template) if members else EMPTY_AGGREGATE.get(lit.kind, MISSING)
        if value is MISSING:
            return False, binding, "", "aggregate"
        trial = dict(binding)
        holds = unify(lit.result, value, trial)
        text = format_literal(Agg(lit.kind, lit.template, lit.goal, lit.group, resolve(lit.result, trial)))
        return holds, trial, text, "aggregate"

