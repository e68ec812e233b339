"""The knowledge base service: facts with supports, rules, queries, proofs and materialization."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..datalog import BaseChange, Budget, Normalizer, Pred, Program, analyze, evaluate_program, explain, solve_kept
from ..datalog.proofs import map_tree
from ..datalog.relations import StoredRelation, release
from ..errors import Conflict, InvalidArguments, NotFound
from ..store.repository import IMPORT_BATCH, NewFact, Repository, Transaction, Visibility, new_fact
from typing import Callable, Iterable

from ..terms import Compound, Term, call_prefix, format_term, indicator, parse_term, plain_call
from ..terms.codec import to_json
from ..validation import require_name
from .parsing import parse_fact, parse_goal, parse_rule
from .collaborators import ComputedRelations, GlobalSource, ProjectionGuard, SupportVisibility
from .proof_edges import model_conclusions, proof_conclusions, record_proof, write_conclusions
from .segments import DEFAULT, Segment, bump_generation, resolve
from .goals import goals
from .undefined import undefined_warnings
from .memo import AnswerMemo
from .warm import Input, WarmRelations

MAX_LIMIT = 10_000
MATERIALIZE_ATTEMPTS = 3


@dataclass
class FactChange:
    fact: str
    memory: str
    created: bool  # a new fact row (it was not believed before)
    removed: bool = False  # forgetting removed its last support
    supports: list[str] = field(default_factory=list)  # what still supports it


@dataclass
class RuleChange:
    rule: str
    memory: str
    created: bool
    rule_id: int
    name: str | None = None
    confidence: float = 1.0
    warnings: list[str] = field(default_factory=list)  # body calls that nothing defines


@dataclass
class Page:
    items: list[dict]
    total: int
    limit: int
    offset: int

    @property
    def truncated(self) -> bool:
        return self.offset + len(self.items) < self.total


@dataclass
class QueryResult:
    goal: str
    memory: str
    variables: list[str]
    bindings: list[dict[str, Any]]  # variable -> canonical text of its value
    values: list[dict[str, Any]]  # variable -> JSON-encoded value (atoms as strings, ...)
    total: int
    limit: int | None
    offset: int
    truncated: bool
    warnings: list[str] = field(default_factory=list)  # goal calls that nothing defines


@dataclass
class Explanation:
    fact: str
    memory: str
    proven: bool
    proof_tree: dict | None  # the reference shape: goal, rule_applied, children
    detailed_tree: dict | None = None  # plus kind, rule_id and the supports of every stored fact
    warnings: list[str] = field(default_factory=list)  # calls that nothing defines
    recorded: dict | None = None  # with record_proof: what was written to derived and proof_edges


@dataclass
class Materialization:
    memory: str
    generation: int
    tuples: int
    seconds: float
    proof_edges: int = 0


def _check_page(limit: Any, offset: Any, default: int | None) -> tuple[int | None, int]:
    if limit is not None and (type(limit) is not int or limit < 0 or limit > MAX_LIMIT):
        raise InvalidArguments(f"'limit' must be an integer from 0 to {MAX_LIMIT}", argument="limit")
    if type(offset) is not int or offset < 0:
        raise InvalidArguments("'offset' must be a non-negative integer", argument="offset")
    return (default if limit is None else limit), offset


class KnowledgeBase:
    def __init__(self, repository: Repository, actor: str, budget: Budget | None = None, *,
                 visibility: SupportVisibility | None = None, projection_guard: ProjectionGuard | None = None,
                 computed: ComputedRelations | None = None, global_source: GlobalSource | None = None) -> None:
        """`visibility`: which supports the caller may see (None: all of them); `projection_guard`: refuses
        rewriting source memories' projections the caller may not write; `computed`: relations computed from
        other tables, joining the default segment; `global_source`: the global database's knowledge base,
        for mounted global segments. Each absent one means there is nothing of its kind in this store."""
        self.repository = repository
        self.store = repository.store
        self.actor = actor
        self.budget = budget or Budget()
        self._programs: dict = {}  # segment id -> (generation, rule ids and texts, Program)
        self.memo = AnswerMemo()  # answers of queries asked again while nothing they read changed
        self.warm = WarmRelations()  # stored predicates kept in memory across calls
        self.global_source = global_source
        self._visibility = visibility
        self.projection_guard = projection_guard
        self.computed = computed

    def visibility(self, tx: Transaction) -> Visibility | None:
        """The caller's view of supports in this transaction; every fact and support read goes through it."""
        return self._visibility(tx) if self._visibility is not None else None

    # --- facts ---------------------------------------------------------
    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            seen = self.visibility(tx)
            fact_id, created, added = tx.facts.support(segment.id, new_fact(term), "asserted", "", self.actor, seen)
            if added:  # remembering what is already asserted writes nothing
                bump_generation(tx, segment)  # a new support can make the fact visible to someone
                tx.audit.record(self.actor, "remember_fact", segment.name, {"fact": text, "created": created})
            supports = tx.supports.of(fact_id, seen)
        return FactChange(text, segment.name, created, supports=supports)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            seen = self.visibility(tx)
            fact_id = tx.facts.find(segment.id, text, seen)
            if fact_id is None:
                raise NotFound(f"No matching clause found for: {text}", fact=text, memory=segment.name, plain=True)
            dropped = tx.supports.remove(fact_id, "asserted")
            supports = tx.facts.release(fact_id, seen)
            removed = not supports
            if dropped or removed:  # what other callers see may change with any support
                bump_generation(tx, segment)
            tx.audit.record(self.actor, "forget_fact", segment.name,
                            {"fact": text, "removed": removed, "remaining_supports": supports})
        return FactChange(text, segment.name, False, removed=removed, supports=supports)

    def add_facts(self, terms: Iterable[Term | NewFact], memory: str | None = None, operation: str = "import_facts",
                  batch: int = IMPORT_BATCH, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Assert many checked facts in one transaction with one audit row; returns (new, already there).

        `terms` are checked facts, as terms or already in stored form (knowledge/parsing.py plain_row). They
        are read as they are stored, `batch` at a time (memory/store/repository/facts.py assert_all), so a
        file's rows stream through in bounded memory; an error it raises part-way changes nothing."""
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            rows = (t if type(t) is NewFact else new_fact(t) for t in terms)  # a reader may give stored forms
            added, read = tx.facts.assert_all(segment.id, rows, self.actor, self.visibility(tx), batch, progress)
            if added:
                bump_generation(tx, segment)
            tx.audit.record(self.actor, operation, segment.name, {"facts": read, "added": added})
        return added, read - added

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            seen = self.visibility(tx)
            total = tx.facts.count(segment.id, seen, functor, arity)
            rows = tx.facts.listing(segment.id, seen, functor, arity, limit, offset)  # type: ignore[arg-type]
        items = [{"id": r.id, "fact": r.text, "created_at": r.created_at, "supports": r.supports} for r in rows]
        return Page(items, total, limit, offset)  # type: ignore[arg-type]

    # --- rules ---------------------------------------------------------
    def define_rule(self, head: str, body: str, memory: str | None = None, name: str | None = None,
                    confidence: float | None = None) -> RuleChange:
        """Add a rule; `name` (an atom, unique in the segment) and `confidence` in (0, 1] are what the
        evidence tools report and weigh it by."""
        clause = parse_rule(head, body)
        text = format_term(clause)
        if name is not None:
            name = require_name("name", name)
        if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                                       or not 0 < confidence <= 1):
            raise InvalidArguments("'confidence' must be a number in (0, 1]", argument="confidence")
        with self.repository.write() as tx:
            segment = resolve(tx, memory, write=True)
            if name is not None:
                other = tx.rules.text_named(segment.id, name, text)
                if other is not None:
                    raise Conflict(f"Rule name '{name}' is already used by: {other}", name=name)
            row = tx.rules.by_text(segment.id, text)
            if row is not None:  # already defined: only a new name or confidence is written
                rule_id, old_name, old_confidence = row.id, row.name, row.confidence
                new_name = old_name if name is None else name
                new_confidence = old_confidence if confidence is None else float(confidence)
                if (new_name, new_confidence) != (old_name, old_confidence):
                    tx.rules.set_options(rule_id, new_name, new_confidence)
                    tx.audit.record(self.actor, "define_rule", segment.name, {
                        "rule": text, "created": False, "rule_id": rule_id, "name": new_name,
                        "confidence": new_confidence})
                warnings = self.undefined_calls(tx, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
                return RuleChange(text, segment.name, False, rule_id, new_name, new_confidence, warnings)
            program = self.build_program(tx, segment)
            normalizer = Normalizer(program)
            normalizer.add_clause(clause, text)
            analyze(program)  # the whole program must stay safe and stratified
            warnings = self.undefined_calls(tx, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
            functor, arity = indicator(clause.args[0])  # type: ignore[union-attr]
            rule_id = tx.rules.add(segment.id, functor, arity, text, name,
                                   1.0 if confidence is None else float(confidence))
            bump_generation(tx, segment)
            tx.audit.record(self.actor, "define_rule", segment.name, {
                "rule": text, "created": True, "rule_id": rule_id, "name": name, "confidence": confidence})
        return RuleChange(text, segment.name, True, rule_id, name, 1.0 if confidence is None else float(confidence),
                          warnings)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            total = tx.rules.count(segment.id)
            rows = tx.rules.page(segment.id, limit, offset)  # type: ignore[arg-type]
        items = [{"id": r.id, "rule": r.text, "head": f"{r.head_functor}/{r.head_arity}", "created_at": r.created_at,
                  "name": r.name, "confidence": r.confidence} for r in rows]
        return Page(items, total, limit, offset)  # type: ignore[arg-type]

    # --- reasoning -----------------------------------------------------
    def build_program(self, tx: Transaction, segment: Segment) -> Program:
        """A new program of the segment's stored rules, not analyzed yet: for a caller that adds clauses to it
        and then checks (analyzes) the whole."""
        program = Program()
        normalizer = Normalizer(program)
        for rule_id, text in tx.rules.texts(segment.id):
            normalizer.add_clause(parse_term(text), text, rule_id)
        return program

    def program(self, tx: Transaction, segment: Segment) -> Program:
        """The segment's analyzed program (callers must not change it): the same object while its rules stay the
        same, whatever else changes (kept answers are tied to it)."""
        cached = self._programs.get(segment.id)
        if cached and cached[0] == segment.generation:
            return cached[2]
        texts = tx.rules.texts(segment.id)
        if cached and cached[1] == texts:
            self._programs[segment.id] = (segment.generation, texts, cached[2])
            return cached[2]
        program = self.build_program(tx, segment)
        analyze(program)
        self._programs[segment.id] = (segment.generation, texts, program)
        return program

    def loader(self, conn: Transaction, segment: Segment, inputs: dict | None = None):
        """The engine's loader for a segment's program, reading inside the transaction `conn`: each stored
        predicate's visible tuples (another mounted segment's for `seg:pred`, the computed relations for the
        default segment). `inputs`, when given, records where each stood (see `memo`)."""
        def load(preds: set) -> dict:
            out = {}
            for pred in preds:
                if pred.segment is not None:  # segment:name(...) reads another mounted segment
                    other = resolve(conn, pred.segment)
                    if inputs is not None:  # which segment a name mounts can change: such answers are not kept
                        inputs[None] = None
                    if other.scope == "global" and self.global_source is not None:
                        out[pred] = self.global_source().facts_of(other.name, pred.name, pred.arity)
                    else:
                        out[pred] = self._relation(conn, other, pred.name, pred.arity, inputs)
                elif pred.is_stored:
                    out[pred] = self._relation(conn, segment, pred.name, pred.arity, inputs)
            return out
        return load

    def detached_loader(self, segment: Segment, inputs: dict | None = None):
        """A loader that reads in its own short transaction: evaluations run outside any transaction,
        so a long one never keeps the store (and the other calls on it) waiting."""
        def load(preds: set) -> dict:
            with self.repository.read() as tx:
                return self.loader(tx, segment, inputs)(preds)
        return load

    def _point_lookup(self, segment: Segment, inputs: dict | None = None):
        """The store's answer to one call of a stored predicate of this segment with its first arguments bound:
        the facts whose text starts with those arguments, through the text index (None where that cannot
        answer: another segment's predicate, one that computed relations join, a name printed as an operator)."""
        def lookup(pred, leading: tuple):
            if pred.segment is not None or not plain_call(pred.name, pred.arity) \
                    or pred.indicator in self._computed_preds(segment):
                return None
            whole = len(leading) == pred.arity
            if not whole:
                text = call_prefix(pred.name, leading)
            else:
                text = format_term(Compound(pred.name, leading) if pred.arity else pred.name)
            with self.repository.read() as tx:
                seen = self.visibility(tx)
                if inputs is not None:
                    inputs[(segment.id, pred.name, pred.arity, seen)] = Input(
                        tx.facts.state(segment.id, pred.name, pred.arity), None)
                return tx.facts.tuples_by_text(segment.id, pred.name, pred.arity, text, not whole, seen)
        return lookup

    def facts_of(self, memory: str, functor: str, arity: int) -> list:
        """Base tuples of one predicate of a segment, read in their own transaction (a list the caller owns)."""
        with self.repository.read() as tx:
            return list(self._relation(tx, resolve(tx, memory), functor, arity).tuples)

    def rules_of(self, memory: str) -> list[tuple[int, str]]:
        """(id, text) of a segment's rules in definition order, read in their own transaction."""
        with self.repository.read() as tx:
            return tx.rules.texts(resolve(tx, memory).id)

    def _relation(self, tx: Transaction, segment: Segment, functor: str, arity: int,
                  inputs: dict | None = None) -> StoredRelation:
        """A stored predicate's visible facts, warm across calls (`WarmRelations`), with the tuples computed
        relations add to the default segment."""
        computed = None
        if self.computed is not None and segment.name == DEFAULT and (functor, arity) in self.computed.preds:
            computed = lambda: self.computed.tuples(tx, (functor, arity))  # noqa: E731
        return self.warm.relation(tx, segment, functor, arity, self.visibility(tx), computed, inputs)

    def stored_tuples(self, tx: Transaction, segment: Segment, functor: str, arity: int) -> list:
        """The stored facts of one predicate the caller may see, as engine tuples (a new list)."""
        return tx.facts.tuples(segment.id, functor, arity, self.visibility(tx))

    def query_terms(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0):
        """Answers as engine tuples, with the segment they came from: kept answers while nothing they read has
        changed, a kept evaluation brought up to date when something has, else a new evaluation (kept)."""
        term = parse_goal(goal)
        text = format_term(term)
        kept = None
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            program = self.program(tx, segment)
            warnings = self.undefined_calls(tx, segment, term)
            key = (segment.id, text, self.visibility(tx))
            everything = self.memo.get(key, program, tx, segment.generation)
            if everything is None:
                kept = self.memo.take(key, program)
                if kept is not None:
                    inputs: dict = {}
                    changes = self._changes(tx, segment, kept.inputs, inputs)
                    if changes is None:  # cannot be followed: evaluated afresh
                        kept.evaluation.release()
                        kept = None
        if everything is None:
            if kept is not None:
                try:
                    everything = kept.evaluation.update(changes, self.new_budget())
                except BaseException:
                    kept.evaluation.release()  # left half changed
                    raise
                evaluation = kept.evaluation
            else:
                inputs = {}
                everything, evaluation = solve_kept(program, term, self.detached_loader(segment, inputs),
                                                    budget=self.new_budget(), lookup=self._point_lookup(segment, inputs))
            answers = everything.page(limit, offset)
            if not self.memo.put(key, program, inputs, everything, evaluation):
                release(everything.rows)  # not kept: many answers freed a slice at a time, not in one stall
        else:
            answers = everything.page(limit, offset)
        if not answers.total and not warnings:
            # No answer and the goal's own calls are all defined: say so if a rule it reaches calls nothing.
            with self.repository.read() as tx:
                warnings = self.undefined_in_rules(tx, segment, term)
        answers.warnings = warnings
        answers.memory = segment.name
        answers.goal = text
        return answers

    def undefined_in_rules(self, tx: Transaction, segment: Segment, goal: Term) -> list[str]:
        """Warnings for the rules a goal reaches (through other rules) that call a predicate nothing defines:
        the reason a query can be empty though every name in it is spelled right."""
        pending = [(ref.name, ref.arity) for ref in goals(goal) if ref.qualifier is None]
        if not set(pending) & set(tx.rules.head_counts(segment.id)):
            return []  # the goal reads stored facts only: nothing more to say (a point lookup stays one lookup)
        by_head: dict[tuple, list[Term]] = {}
        for source in self.program(tx, segment).sources:  # the cached program's parsed clauses: no parsing here
            clause = source.clause
            if isinstance(clause, Compound) and clause.functor == ":-" and len(clause.args) == 2:
                by_head.setdefault(indicator(clause.args[0]), []).append(clause)
        seen: set = set()
        found: list[str] = []
        while pending:
            head = pending.pop()
            if head in seen:
                continue
            seen.add(head)
            for clause in by_head.get(head, ()):
                body = clause.args[1]
                found += [f"{w} (called by the rule {format_term(clause)})"
                          for w in self.undefined_calls(tx, segment, body, clause.args[0])]
                pending += [(ref.name, ref.arity) for ref in goals(body) if ref.qualifier is None]
        return list(dict.fromkeys(found))

    def _changes(self, tx: Transaction, segment: Segment, before: dict, inputs: dict) -> dict | None:
        """What changed in the stored predicates an evaluation read (`before`: where each stood, see `memo`), as
        of `tx`, for `Evaluation.update`; `inputs` records where they stand now. The warm relations say what they
        gained and lost since (`StoredRelation.changes_to`); a relation read afresh is compared with the one
        the evaluation read, if that one has not grown since. None when the changes cannot be told."""
        changes = {}
        for (segment_id, functor, arity, visibility), old in before.items():
            relation = self._relation(tx, segment, functor, arity, inputs)
            if inputs[(segment_id, functor, arity, visibility)] == old:
                continue
            steps = old.relation.changes_to(relation, old.position)
            if steps is None:
                if old.relation.position != old.position:
                    return None
                read, current = old.relation.tuples.keys(), relation.tuples.keys()
                steps = list(current - read), set(read - current)
            changes[Pred.stored(functor, arity)] = BaseChange(*steps, None if relation is old.relation else relation)
        return changes

    def query_logic(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0) -> QueryResult:
        limit, offset = _check_page(limit, offset, None)
        answers = self.query_terms(goal, memory, limit, offset)
        bindings = [{name: format_term(v) for name, v in zip(answers.variables, row)} for row in answers.rows]
        values = [{name: to_json(v) for name, v in zip(answers.variables, row)} for row in answers.rows]
        return QueryResult(answers.goal, answers.memory, answers.variables, bindings, values,
                           answers.total, limit, offset, answers.truncated, answers.warnings)

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
        tree = proof.to_dict() if proof else None
        with self.repository.read() as tx:
            detailed = self.with_supports(tx, segment, proof) if proof else None
            warnings = self.undefined_calls(tx, segment, term)
        text = format_term(term)
        recorded = self._record_proof(segment, proof, text) if record_proof and proof is not None else None
        return Explanation(text, segment.name, proof is not None, tree, detailed, warnings, recorded)

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

    def undefined_calls(self, tx: Transaction, segment: Segment, body: Term, head: Term | None = None) -> list[str]:
        """Warnings for the predicates `body` calls that have no visible facts or rules in `segment`
        (a rule's own head counts as defined: it may call itself)."""
        defined = set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()
        if head is not None:
            defined.add(indicator(head))
        return undefined_warnings(tx, segment.id, body, self.visibility(tx), defined)

    def with_supports(self, tx: Transaction, segment: Segment, proof) -> dict:
        """The proof tree with each stored fact's supports (asserted, assumption:…) on its leaf."""
        return map_tree(proof, lambda node: self._detailed_node(tx, segment, node))

    def _detailed_node(self, conn: Transaction, segment: Segment, node) -> dict:
        out = {"goal": node.goal, "rule_applied": node.rule_applied, "kind": node.kind, "children": []}
        if node.rule_id is not None:
            out["rule_id"] = node.rule_id
        if node.truncated:
            out["truncated"] = True
        if node.kind == "fact" and node.pred is not None:
            owner = segment if node.pred.segment is None else resolve(conn, node.pred.segment)
            text = format_term(Compound(node.pred.name, node.args) if node.args else node.pred.name)
            if owner.scope == "global" and self.global_source is not None:
                out["supports"] = self.global_source().supports_of(owner.name, text)
            else:
                seen = self.visibility(conn)
                fact_id = conn.facts.find(owner.id, text, seen)
                out["supports"] = conn.supports.of(fact_id, seen) if fact_id else []
                if self.computed is not None and owner.name == DEFAULT and node.pred.indicator in self.computed.preds:
                    out["supports"] += self.computed.supports(conn, node.pred.indicator, node.args)
            if owner is not segment:
                out["memory"] = owner.name
        return out

    def supports_of(self, memory: str, text: str) -> list[str]:
        """The supports of a stored fact (canonical text) in a segment; [] when it is not stored."""
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            seen = self.visibility(tx)
            fact_id = tx.facts.find(segment.id, text, seen)
            return tx.supports.of(fact_id, seen) if fact_id else []

    def materialize(self, memory: str | None = None) -> Materialization:
        """Write every derived conclusion with its rule and stamp, and the premises of its derivation
        (proof_edges), under the current generation.

        The model and the premises are computed outside any transaction and written in one short one, so
        other writers (in this process or another) wait only for the write; if the memory changed meanwhile,
        the evaluation is redone (a few times at most) so what is written matches the generation it names."""
        started = time.perf_counter()
        budget = self.new_budget()
        for _ in range(MATERIALIZE_ATTEMPTS):
            with self.repository.read() as tx:
                segment = resolve(tx, memory)
                program = self.program(tx, segment)
            model = self.evaluate_all(program, self.detached_loader(segment), budget)
            conclusions = model_conclusions(program, model, budget, self._computed_preds(segment))
            with self.repository.write() as tx:
                if resolve(tx, memory).generation != segment.generation:
                    continue
                tx.derived.clear(segment.id)
                edges = write_conclusions(tx, segment, conclusions, budget)
                seconds = time.perf_counter() - started
                tx.derived.record_materialization(segment.id, segment.generation, len(conclusions), seconds)
                tx.audit.record(self.actor, "materialize", segment.name,
                                {"generation": segment.generation, "tuples": len(conclusions), "proof_edges": edges})
            return Materialization(segment.name, segment.generation, len(conclusions), seconds, edges)
        raise Conflict(f"memory '{segment.name}' kept changing while it was materialized; try again",
                       memory=segment.name)

    def _computed_preds(self, segment: Segment) -> set:
        """Predicates computed from observations: they join the default segment only."""
        return set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()

    def evaluate_all(self, program: Program, load, budget: Budget | None = None):
        """The whole model of a program: every stored relation its rules mention, loaded and evaluated."""
        return evaluate_program(program, load, budget or self.new_budget())

    def new_budget(self) -> Budget:
        """A fresh budget for one call, its clock started now: loading the facts counts too."""
        return self.budget.copy().start()
