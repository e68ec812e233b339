"""Explanations: the proof of a ground fact as people see it (proof_view.py), and recording it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..datalog import explain
from ..datalog.proofs import ProofNode
from ..errors import Conflict, InvalidArguments
from ..store.repository import Transaction

from ..terms import Compound, format_term
from .parsing import parse_fact
from . import proof_view
from .proof_view import ProofStep
from .proof_edges import proof_conclusions, record_proof
from .segments import DEFAULT, Segment, resolve

from .core import KnowledgeCore


@dataclass
class Explanation:
    fact: str
    memory: str
    proven: bool
    proof: ProofStep | None  # the proof as people see it (memory/knowledge/proof_view.py)
    warnings: list[str] = field(default_factory=list)  # calls that nothing defines
    recorded: dict | None = None  # with record_proof: what was written to derived and proof_edges

    @property
    def proof_tree(self) -> dict | None:
        """The reference shape: goal, rule_applied, children."""
        return None if self.proof is None else proof_view.reference(self.proof)

    @property
    def detailed_tree(self) -> dict | None:
        """Plus kind, rule_id, the supports of every stored fact and the memories behind them."""
        return None if self.proof is None else proof_view.detailed(self.proof)


class Explanations(KnowledgeCore):
    """Proofs of facts."""

    def explain_why(self, fact: str, max_depth: int | None = None, memory: str | None = None,
                    record_proof: bool = False) -> Explanation:
        """The proof tree of a ground fact; with `record_proof`, its conclusions and their premises are also
        written to `derived` and `proof_edges` at the current generation (one audited transaction)."""
        term = parse_fact(fact)
        if max_depth is not None and (type(max_depth) is not int or max_depth < 1):
            raise InvalidArguments("'max_depth' must be a positive integer", argument="max_depth")
        if type(record_proof) is not bool:
            raise InvalidArguments("'record_proof' must be true or false", argument="record_proof")
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            program = self.program(tx, segment)
        proof = explain(program, term, self.detached_loader(segment), max_depth=max_depth, budget=self.new_budget())
        with self.repository.read() as tx:
            steps = self.proof_steps(tx, segment, proof) if proof else None
            warnings = self.undefined_calls(tx, segment, term)
        text = format_term(term)
        recorded = self._record_proof(segment, proof, text) if record_proof and proof is not None else None
        return Explanation(text, segment.name, proof is not None, steps, warnings, recorded)

    def _record_proof(self, segment: Segment, proof, text: str) -> dict:
        conclusions, complete = proof_conclusions(proof, self._computed_preds(segment))
        with self.repository.write() as tx:
            current = resolve(tx, segment.name)
            if current.generation != segment.generation:
                raise Conflict(f"memory '{segment.name}' changed while the proof was built; try again",
                               memory=segment.name)
            written = record_proof(tx, current, conclusions)
            tx.audit.record(self.actor, "record_proof", current.name,
                            {"fact": text, "generation": current.generation, "conclusions": written,
                             "complete": complete})
        return {"generation": segment.generation, "conclusions": len(conclusions), "written": written,
                "complete": complete}

    def proof_steps(self, tx: Transaction, segment: Segment, proof: ProofNode) -> ProofStep:
        """The proof as people see it, each stored fact's supports (asserted, assumption:…) on its leaf."""
        return proof_view.build(proof, lambda node: self._leaf_supports(tx, segment, node))

    def _leaf_supports(self, conn: Transaction, segment: Segment, node: ProofNode) -> tuple[list[str], str | None]:
        """A stored fact's supports, and the segment it is stored in when that is another one."""
        assert node.pred is not None
        owner = segment if node.pred.segment is None else resolve(conn, node.pred.segment)
        text = format_term(Compound(node.pred.name, node.args) if node.args else node.pred.name)
        if owner.scope == "global" and self.global_source is not None:
            supports = self.global_source().supports_of(owner.name, text)
        else:
            seen = self.visibility(conn)
            fact_id = conn.facts.find(owner.id, text, seen)
            supports = conn.supports.of(fact_id, seen) if fact_id else []
            if self.computed is not None and owner.name == DEFAULT and node.pred.indicator in self.computed.preds:
                supports += self.computed.supports(conn, node.pred.indicator, node.args or ())
        return supports, (owner.name if owner is not segment else None)
