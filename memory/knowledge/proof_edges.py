"""Proof edges: the premises of each derived conclusion's recorded derivation, written to `proof_edges`.

The engine records for every derived tuple the rule that first derived it and a stamp greater than the
stamps of that derivation's premises; the premises themselves are found again by the proof search
(`BodyMatcher.derivation`). Written next to `derived`, they let a recursive query over one table walk any
proof down to stored facts and their supports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..datalog import BodyMatcher, Model, Pred, Program, goal_text
from ..store.repository import DerivedRow, EdgeRow, Transaction
from ..terms import Compound, format_term
from .segments import Segment, resolve

BUDGET_STEP = 1_000  # conclusions between two looks at the evaluation budget
WRITE_BATCH = 10_000  # rows per insert batch (the budget is checked between batches)


@dataclass(frozen=True)
class Premise:
    kind: str  # fact | derived | observation | builtin | negation | aggregate
    text: str  # as a proof shows it (seg:goal for another segment's fact)
    pred: Pred | None = None
    args: tuple | None = None


@dataclass(frozen=True)
class Conclusion:
    pred: Pred
    args: tuple
    text: str  # canonical text, as derived.text holds it
    rule_id: int | None
    stamp: int
    premises: tuple  # of Premise, in the order of the rule's body


def fact_text(pred: Pred, args: tuple) -> str:
    """Canonical text of a stored tuple, without any segment qualifier (as `facts.text` holds it)."""
    return format_term(Compound(pred.name, args) if args else pred.name)


class _Texts:
    """Canonical texts of tuples, each printed once: a tuple is the premise of many conclusions."""

    def __init__(self) -> None:
        self.plain: dict = {}
        self.goals: dict = {}

    def fact(self, pred: Pred, args: tuple) -> str:
        key = (pred, args)
        text = self.plain.get(key)
        if text is None:
            text = self.plain[key] = fact_text(pred, args)
        return text

    def goal(self, pred: Pred, args: tuple) -> str:
        if pred.segment is None:
            return self.fact(pred, args)
        key = (pred, args)
        text = self.goals.get(key)
        if text is None:
            text = self.goals[key] = goal_text(pred, args)
        return text


def _premise(texts: _Texts, pred: Pred, args: tuple, derived: bool, computed: set) -> Premise:
    text = texts.goal(pred, args)
    if derived:
        return Premise("derived", text, pred, args)
    return Premise("observation" if pred.segment is None and pred.indicator in computed else "fact", text, pred, args)


def model_conclusions(program: Program, model: Model, budget=None, computed: Iterable = ()) -> list[Conclusion]:
    """Every derived tuple of the user's predicates in an evaluated model, with its derivation's premises."""
    matcher = BodyMatcher.over(model, budget)
    computed = set(computed)
    texts = _Texts()
    out: list[Conclusion] = []
    for pred in model.predicates():
        if not pred.is_local:
            continue
        for args, provenance in model.derivations(pred):
            assert provenance.rule is not None  # a derivation names its rule
            rule = provenance.rule.meaning
            found = matcher.derivation(rule, args, provenance.stamp) or []
            premises = []
            for kind, literal, value in found:
                if kind == "lit":
                    found_premise = model.provenance(literal.pred, value)
                    assert found_premise is not None  # a premise the matcher found is in the model
                    premises.append(_premise(texts, literal.pred, value, found_premise.derived, computed))
                else:
                    premises.append(Premise(kind, value))
            out.append(Conclusion(pred, args, texts.fact(pred, args), program.sources[rule.source].rule_id,
                                  provenance.stamp, tuple(premises)))
            if budget is not None and not len(out) % BUDGET_STEP:
                budget.check()
    return out


def proof_conclusions(root, computed: Iterable = ()) -> tuple[list[Conclusion], bool]:
    """The conclusions of one proof tree (ProofNode) whose proofs are whole, each once, with their premises;
    and whether the whole tree was (no node cut by max_depth or the node limit). A conclusion above a cut is
    left out: every recorded conclusion rests on recorded premises all the way down, so a later complete
    proof can be recorded over nothing half-written. Stamps are derivation heights: a leaf is 0, a
    conclusion one more than its highest premise, so they order premises below conclusions."""
    computed = set(computed)
    texts = _Texts()
    order, stack = [], [root]
    while stack:  # no recursion: proofs can be thousands of steps deep
        node = stack.pop()
        order.append(node)
        stack.extend(node.children)
    heights: dict = {}
    whole: dict = {}  # id(node) -> its subtree has no cut
    out: list[Conclusion] = []
    seen: set = set()
    for node in reversed(order):  # children before their parents
        whole[id(node)] = not node.truncated and all(whole[id(c)] for c in node.children)
        if node.kind != "rule":
            heights[id(node)] = 0
            continue
        heights[id(node)] = 1 + max((heights[id(c)] for c in node.children), default=0)
        key = (node.pred, node.args)
        if whole[id(node)] and key not in seen:
            seen.add(key)
            out.append(_conclusion(texts, node, heights[id(node)], computed))
    return out, whole[id(root)]


def _conclusion(texts: _Texts, node, stamp: int, computed: set) -> Conclusion:
    premises = tuple(_premise(texts, c.pred, c.args, c.kind == "rule", computed) if c.pred is not None
                     else Premise(c.kind, c.goal) for c in node.children)
    return Conclusion(node.pred, node.args, texts.fact(node.pred, node.args), node.rule_id, stamp, premises)


def edge_rows(conn: Transaction, segment: Segment, conclusions: Iterable[Conclusion], ids: dict) -> list[EdgeRow]:
    """The premises of the given conclusions as `proof_edges` rows; `ids` maps the text of every conclusion
    (and of every derived premise) to its row in `derived`."""
    others: dict = {}  # segment name -> id in this file (None for a global segment in its own file)
    rows = []
    for conclusion in conclusions:
        conclusion_id = ids[conclusion.text]
        for position, premise in enumerate(conclusion.premises):
            memory = fact_segment = stored = derived = observation = None
            if premise.pred is not None:
                stored = premise.text if premise.pred.segment is None else fact_text(premise.pred, premise.args)
                if premise.kind == "derived":
                    derived, stored = ids.get(stored), None
                elif premise.pred.segment is not None:
                    memory = premise.pred.segment
                    if memory not in others:  # a mounted global segment keeps its facts in the global file
                        other = resolve(conn, memory)
                        others[memory] = None if other.scope == "global" else other.id
                    fact_segment = others[memory]
                else:
                    fact_segment = segment.id
                if premise.kind == "observation" and premise.pred.indicator in (("hedge", 4), ("member", 2)) \
                        and type(premise.args[0]) is int:
                    observation = premise.args[0]
            rows.append(EdgeRow(conclusion_id, position, premise.kind, premise.text, memory, fact_segment, stored,
                                derived, observation, segment.generation))
    return rows


def write_conclusions(tx: Transaction, segment: Segment, conclusions: list[Conclusion], budget=None) -> int:
    """Insert the conclusions into `derived` (the segment's old rows must be gone) and their proof edges;
    returns the number of edges. Ids are assigned here, so no edge has to look its rows up."""
    first = tx.derived.next_id()
    ids = {c.text: first + i for i, c in enumerate(conclusions)}
    _in_batches(tx.derived.add_many, [derived_row(segment, c, ids[c.text]) for c in conclusions], budget)
    rows = edge_rows(tx, segment, conclusions, ids)
    _in_batches(tx.derived.add_edges, rows, budget)
    return len(rows)


def _in_batches(insert, rows: list, budget) -> None:
    for i in range(0, len(rows), WRITE_BATCH):
        insert(rows[i:i + WRITE_BATCH])
        if budget is not None:
            budget.check()


def derived_row(segment: Segment, conclusion: Conclusion, derived_id: int | None = None) -> DerivedRow:
    name, arity = conclusion.pred.indicator
    return DerivedRow(derived_id, segment.id, name, arity, conclusion.text, conclusion.args, conclusion.rule_id,
                      conclusion.stamp, segment.generation)


def record_proof(tx: Transaction, segment: Segment, conclusions: list[Conclusion]) -> int:
    """Write the conclusions of one proof and their edges at the segment's current generation; rows already
    current (a materialization or an earlier proof at this generation) are kept as they are. Returns the
    conclusions written."""
    fresh, ids = [], {}
    for conclusion in conclusions:
        row = tx.derived.find(segment.id, conclusion.text)
        if row is not None and row[1] == segment.generation:
            ids[conclusion.text] = row[0]
            continue
        if row is not None:  # a stale row: its edges go, the row takes the new derivation
            tx.derived.restamp(row[0], conclusion.rule_id, conclusion.stamp, segment.generation)
            ids[conclusion.text] = row[0]
        else:
            ids[conclusion.text] = tx.derived.add(derived_row(segment, conclusion))
        fresh.append(conclusion)
    tx.derived.add_edges(edge_rows(tx, segment, fresh, ids))
    return len(fresh)
