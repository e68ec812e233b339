"""Recall through rules: conclusions derived from projections, led back to the memories they rest on.

When rules define the recalled predicate, `memory_recall` also answers it as a query
and keeps each answer whose proof ends in at least one memory the caller may read,
listing those memories, with their exact text when asked or when one of them was
projected lossily. With `as_of` the rules (as they are now) run over what held then: the
projections of the memories current at that moment and the facts that rest on no memory."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog import explain, solve
from ..datalog.proofs import ProofNode
from ..knowledge.parsing import parse_fact, parse_goal
from ..knowledge.proof_view import ProofStep
from ..knowledge.segments import DEFAULT, resolve
from ..store.repository import Visibility, new_fact
from ..terms import Compound, Term, Var, format_term
from ..terms.codec import decode_many
from .memories import MemoryRecord, SourceMemories
from ..access.namespaces import readable_namespaces
from .projections import to_value

MAX_PROOFS = 200


def _leaf_memories(proof: ProofStep, found: dict) -> None:
    for step in proof.walk():
        for memory in step.memories or ():
            found.setdefault(memory["id"], memory)


def _lossy(sources: SourceMemories, ids: list[str]) -> set[str]:
    """The memories among `ids` with a projection that is lossy or needs context."""
    with sources.repository.read() as tx:
        return tx.memory_projections.lossy(ids)


def derived_recall(kb, sources: SourceMemories, predicate: str, arguments: list | None, include_source: bool,
                   limit: int, as_of: str | None = None) -> list[dict]:
    """The conclusions of the rules defining `predicate` that rest on memories the caller may read, each with
    those memories; with `as_of`, as the memories stood at that moment."""
    with kb.repository.read() as tx:
        arities = tx.rules.head_arities(resolve(tx, None).id, predicate)
    if arguments is not None:
        arities = [a for a in arities if a == len(arguments)]
    if as_of is not None:
        return _derived_as_of(kb, sources, predicate, arguments, arities, include_source, limit, as_of)
    out: list[dict] = []
    for goal, fact_of in _goals(predicate, arguments, arities):
        answers = kb.query_terms(goal, limit=MAX_PROOFS)
        for row in answers.rows:
            explanation = kb.explain_why(format_term(fact_of(row)))
            if explanation.proof is None:
                continue
            sources.annotate_proof(explanation.proof)
            found: dict = {}
            _leaf_memories(explanation.proof, found)
            if not found:
                continue  # not resting on any memory the caller may read: not a recalled memory
            with_source = include_source or bool(_lossy(sources, list(found)))
            memories = [{"id": m["id"], "namespace": m["namespace"], "status": m["status"],
                         **({"source_text": m["source_text"]} if with_source else {})} for m in found.values()]
            out.append({"fact": explanation.fact, "derived": True, "rule": explanation.proof.rule_applied,
                        "memories": memories, "source_context_included": with_source})
            if len(out) > limit:
                return out
    return out


def _goals(predicate: str, arguments: list | None, arities: list[int]):
    """(goal text, answer row -> ground fact) for each arity the recalled pattern may have."""
    for arity in arities:
        pattern = arguments if arguments is not None else [None] * arity
        args = tuple(Var(f"A{i}") if value is None else to_value(value, f"arguments[{i}]")
                     for i, value in enumerate(pattern))
        goal = format_term(Compound(predicate, args) if args else predicate)

        def fact_of(row: tuple, args: tuple = args) -> Term:
            values = iter(row)
            return Compound(predicate, tuple(next(values) if type(a) is Var else a for a in args)) if args \
                else predicate
        yield goal, fact_of


# Sees every support but source memories' projections: the facts that hold whatever the memories say.
NO_MEMORIES = Visibility(())


@dataclass
class _ProjectedThen:
    """The projections of the memories current at a moment (in the namespaces the caller may read): the
    tuples per predicate, and for each fact the memories it came from."""
    tuples: dict[tuple[str, int], list[tuple]] = field(default_factory=dict)
    memories: dict[tuple, list[dict]] = field(default_factory=dict)  # (functor, arity, args) -> memories
    lossy: set[str] = field(default_factory=set)  # ids of memories with a lossy or context-needing projection


def _projected_then(sources: SourceMemories, at: str) -> _ProjectedThen:
    then = _ProjectedThen()
    with sources.repository.read() as tx:
        spaces = readable_namespaces(tx.connection, sources.context)
        if not spaces:
            return then
        rows = tx.memory_projections.settled_facts(spaces, at)
    for row in rows:
        record, fact, quality = MemoryRecord.of(row.memory), row.fact, row.quality
        stored = new_fact(parse_fact(fact))
        args = decode_many([stored.args])[0]
        key = (stored.functor, stored.arity, args)
        if key not in then.memories:
            then.tuples.setdefault((stored.functor, stored.arity), []).append(args)
        memories = then.memories.setdefault(key, [])
        if all(m["id"] != record.id for m in memories):
            # current at `at` by the filter above: active then, whatever it is now
            memories.append({"id": record.id, "namespace": record.ns.to_dict(), "status": "active",
                             "source_text": record.text})
        if quality != "exact":
            then.lossy.add(record.id)
    return then


def _derived_as_of(kb, sources: SourceMemories, predicate: str, arguments: list | None, arities: list[int],
                   include_source: bool, limit: int, at: str) -> list[dict]:
    then = _projected_then(sources, at)
    with kb.repository.read() as tx:
        segment = resolve(tx, DEFAULT)
        program = kb.program(tx, segment)

    read: dict = {}  # pred -> its tuples as they stood then: read once for the query and every proof after it

    def load(preds: set) -> dict:
        out = {}
        with kb.repository.read() as tx:
            mounted = kb.loader(tx, segment)  # another segment's facts (seg:pred), as they are now
            for pred in preds:
                if pred.segment is not None:
                    out.update(mounted({pred}))
                elif pred.is_stored:
                    if pred not in read:
                        rows = tx.facts.tuples(segment.id, pred.name, pred.arity, NO_MEMORIES)
                        if kb.computed is not None and (pred.name, pred.arity) in kb.computed.preds:
                            rows += kb.computed.tuples(tx, (pred.name, pred.arity))
                        rows += then.tuples.get((pred.name, pred.arity), [])
                        read[pred] = list(dict.fromkeys(rows))
                    out[pred] = list(read[pred])  # a list each evaluation owns
        return out

    out: list[dict] = []
    for goal, fact_of in _goals(predicate, arguments, arities):
        answers = solve(program, parse_goal(goal), load, limit=MAX_PROOFS, budget=kb.new_budget())
        for row in answers.rows:
            fact = fact_of(row)
            proof = explain(program, fact, load, budget=kb.new_budget())
            if proof is None:
                continue
            found: dict = {}
            for node in _nodes(proof):
                if node.kind == "fact" and node.pred is not None:
                    for memory in then.memories.get((node.pred.name, node.pred.arity, node.args), ()):
                        found.setdefault(memory["id"], memory)
            if not found:
                continue  # rests on no memory the caller could read then
            with_source = include_source or bool(then.lossy & set(found))
            memories = [{"id": m["id"], "namespace": m["namespace"], "status": m["status"],
                         **({"source_text": m["source_text"]} if with_source else {})} for m in found.values()]
            out.append({"fact": format_term(fact), "derived": True, "rule": proof.rule_applied,
                        "memories": memories, "source_context_included": with_source})
            if len(out) > limit:
                return out
    return out


def _nodes(root: ProofNode):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)
