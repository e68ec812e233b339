"""The knowledge base service: facts with supports, rules, queries, proofs and materialization."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..datalog import Budget, Normalizer, Program, analyze, evaluate_program, explain, solve
from ..datalog.proofs import map_tree
from ..errors import Conflict, InvalidArguments, NotFound
from ..store import Store, record_audit, utc_now
from typing import Iterable

from ..terms import Compound, Term, format_term, indicator, parse_term
from ..terms.codec import decode_args, encode_args, to_json
from ..validation import require_name
from .parsing import parse_fact, parse_goal, parse_rule
from .proof_edges import model_conclusions, proof_conclusions, record_proof, write_conclusions
from .rows import EVERYTHING, release, support_fact, visible_fact, visible_supports
from .segments import DEFAULT, Segment, bump_generation, resolve
from .undefined import undefined_warnings

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
    def __init__(self, store: Store, actor: str, budget: Budget | None = None) -> None:
        self.store = store
        self.actor = actor
        self.budget = budget or Budget()
        self._programs: dict = {}  # segment id -> (generation, Program)
        self._facts: dict = {}  # (segment id, pred) -> (generation, tuples)
        # The knowledge base of the global database (for mounted global segments), set by Memory
        self.global_source = None
        # Which supports the caller may see (source-memory projections are namespace-bound), set by Memory:
        # conn -> (SQL condition over a supports row `s`, parameters), or None when every support is visible.
        # Every fact and support read below goes through seen() or visible().
        self.support_filter = None
        # Refuses (PermissionDenied) rewriting the projections of the given source memories, set by Memory:
        # (conn, memory ids, what is being done) -> None.
        self.projection_guard = None
        # Relations computed from other tables (the evidence memory's observations), set by Memory: an object
        # with `preds`, `tuples(conn, pred)` and `supports(conn, pred, args)`; they join the default segment's facts.
        self.computed = None

    def seen(self, conn) -> tuple[str, list]:
        """The caller's support filter: SQL over a supports row `s`, and its parameters."""
        clause = self.support_filter(conn) if self.support_filter is not None else None
        return clause or EVERYTHING

    def visible(self, conn) -> tuple[str, list]:
        """The caller's fact filter: SQL over a facts row `f`, and its parameters."""
        seen = self.seen(conn)
        if seen is EVERYTHING:
            return EVERYTHING
        return f"EXISTS (SELECT 1 FROM supports AS s WHERE s.fact_id = f.id AND {seen[0]})", seen[1]

    # --- facts ---------------------------------------------------------
    def remember_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.store.write() as conn:
            segment = resolve(conn, memory, write=True)
            seen = self.seen(conn)
            fact_id, created, added = support_fact(conn, segment, term, "asserted", "", self.actor, seen)
            if added:  # remembering what is already asserted writes nothing
                bump_generation(conn, segment)  # a new support can make the fact visible to someone
                record_audit(conn, self.actor, "remember_fact", segment.name, {"fact": text, "created": created})
            supports = visible_supports(conn, fact_id, seen)
        return FactChange(text, segment.name, created, supports=supports)

    def forget_fact(self, fact: str, memory: str | None = None) -> FactChange:
        term = parse_fact(fact)
        text = format_term(term)
        with self.store.write() as conn:
            segment = resolve(conn, memory, write=True)
            seen = self.seen(conn)
            fact_id = visible_fact(conn, segment, text, seen)
            if fact_id is None:
                raise NotFound(f"No matching clause found for: {text}", fact=text, memory=segment.name, plain=True)
            conn.execute("DELETE FROM supports WHERE fact_id = ? AND kind = 'asserted'", (fact_id,))
            dropped = conn.changes() > 0
            supports = release(conn, fact_id, seen)
            removed = not supports
            if dropped or removed:  # what other callers see may change with any support
                bump_generation(conn, segment)
            record_audit(conn, self.actor, "forget_fact", segment.name,
                         {"fact": text, "removed": removed, "remaining_supports": supports})
        return FactChange(text, segment.name, False, removed=removed, supports=supports)

    def add_facts(self, terms: Iterable[Term], memory: str | None = None, operation: str = "import_facts") -> tuple[int, int]:
        """Assert many checked facts in one transaction with one audit row; returns (new, already there)."""
        rows = []
        for term in terms:
            name, arity = indicator(term)
            args = term.args if type(term) is Compound else ()
            rows.append((name, arity, format_term(term), encode_args(args)))
        with self.store.write() as conn:
            segment = resolve(conn, memory, write=True)
            visible, visible_params = self.visible(conn)
            count = f"SELECT count(*) FROM facts AS f WHERE f.segment_id = ? AND {visible}"
            before = conn.execute(count, (segment.id, *visible_params)).fetchone()[0]
            now = utc_now(conn.clock)
            conn.executemany(
                "INSERT INTO facts (segment_id, functor, arity, text, args, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (segment_id, text) DO NOTHING",
                [(segment.id, name, arity, text, args, now) for name, arity, text, args in rows],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO supports (fact_id, kind, ref, actor, created_at) "
                "SELECT id, 'asserted', '', ?, ? FROM facts WHERE segment_id = ? AND text = ?",
                [(self.actor, now, segment.id, text) for _, _, text, _ in rows],
            )
            after = conn.execute(count, (segment.id, *visible_params)).fetchone()[0]
            added = after - before
            if added:
                bump_generation(conn, segment)
            record_audit(conn, self.actor, operation, segment.name, {"facts": len(rows), "added": added})
        return added, len(rows) - added

    def list_facts(self, memory: str | None = None, functor: str | None = None, arity: int | None = None,
                   limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        where, params = ["f.segment_id = ?"], []
        with self.store.read() as conn:
            segment = resolve(conn, memory)
            params.append(segment.id)
            visible, visible_params = self.visible(conn)
            where.append(visible)
            params += visible_params
            if functor is not None:
                where.append("f.functor = ?")
                params.append(functor)
            if arity is not None:
                where.append("f.arity = ?")
                params.append(arity)
            clause = " AND ".join(where)
            total = conn.execute(f"SELECT count(*) FROM facts AS f WHERE {clause}", params).fetchone()[0]
            # The supports and the time of the first one are those the caller sees: a fact row is shared with
            # projections it may not see, which must not show through (not even as an earlier created_at).
            seen, seen_params = self.seen(conn)
            rows = conn.execute(
                f"SELECT f.id, f.text, (SELECT min(s.created_at) FROM supports AS s WHERE s.fact_id = f.id AND {seen}), "
                f"(SELECT group_concat(s.kind || CASE WHEN s.ref = '' THEN '' ELSE ':' || s.ref END, ',' "
                f"ORDER BY s.id) FROM supports AS s WHERE s.fact_id = f.id AND {seen}) "
                f"FROM facts AS f WHERE {clause} ORDER BY f.functor, f.arity, f.text LIMIT ? OFFSET ?",
                [*seen_params, *seen_params, *params, limit, offset],
            ).fetchall()
        items = [{"id": i, "fact": t, "created_at": c, "supports": (s or "").split(",") if s else []}
                 for i, t, c, s in rows]
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
        with self.store.write() as conn:
            segment = resolve(conn, memory, write=True)
            if name is not None:
                other = conn.execute("SELECT text FROM rules WHERE segment_id = ? AND name = ? AND text <> ?",
                                     (segment.id, name, text)).fetchone()
                if other is not None:
                    raise Conflict(f"Rule name '{name}' is already used by: {other[0]}", name=name)
            row = conn.execute("SELECT id, name, confidence FROM rules WHERE segment_id = ? AND text = ?",
                               (segment.id, text)).fetchone()
            if row is not None:  # already defined: only a new name or confidence is written
                rule_id, old_name, old_confidence = row
                new_name = old_name if name is None else name
                new_confidence = old_confidence if confidence is None else float(confidence)
                if (new_name, new_confidence) != (old_name, old_confidence):
                    conn.execute("UPDATE rules SET name = ?, confidence = ? WHERE id = ?",
                                 (new_name, new_confidence, rule_id))
                    record_audit(conn, self.actor, "define_rule", segment.name, {
                        "rule": text, "created": False, "rule_id": rule_id, "name": new_name,
                        "confidence": new_confidence})
                warnings = self.undefined_calls(conn, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
                return RuleChange(text, segment.name, False, rule_id, new_name, new_confidence, warnings)
            program = self._build_program(conn, segment)
            normalizer = Normalizer(program)
            normalizer.add_clause(clause, text)
            analyze(program)  # the whole program must stay safe and stratified
            warnings = self.undefined_calls(conn, segment, clause.args[1], clause.args[0])  # type: ignore[union-attr]
            functor, arity = indicator(clause.args[0])  # type: ignore[union-attr]
            conn.execute(
                "INSERT INTO rules (segment_id, head_functor, head_arity, text, created_at, name, confidence) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (segment.id, functor, arity, text, utc_now(conn.clock), name, 1.0 if confidence is None else float(confidence)),
            )
            rule_id = conn.last_insert_rowid()
            bump_generation(conn, segment)
            record_audit(conn, self.actor, "define_rule", segment.name, {
                "rule": text, "created": True, "rule_id": rule_id, "name": name, "confidence": confidence})
        return RuleChange(text, segment.name, True, rule_id, name, 1.0 if confidence is None else float(confidence),
                          warnings)

    def list_rules(self, memory: str | None = None, limit: int | None = None, offset: int = 0) -> Page:
        limit, offset = _check_page(limit, offset, 100)
        with self.store.read() as conn:
            segment = resolve(conn, memory)
            total = conn.execute("SELECT count(*) FROM rules WHERE segment_id = ?", (segment.id,)).fetchone()[0]
            rows = conn.execute(
                "SELECT id, text, head_functor, head_arity, created_at, name, confidence FROM rules "
                "WHERE segment_id = ? ORDER BY id LIMIT ? OFFSET ?", (segment.id, limit, offset),
            ).fetchall()
        items = [{"id": i, "rule": t, "head": f"{f}/{a}", "created_at": c, "name": n, "confidence": k}
                 for i, t, f, a, c, n, k in rows]
        return Page(items, total, limit, offset)  # type: ignore[arg-type]

    # --- reasoning -----------------------------------------------------
    def _build_program(self, conn, segment: Segment) -> Program:
        program = Program()
        normalizer = Normalizer(program)
        for rule_id, text in conn.execute("SELECT id, text FROM rules WHERE segment_id = ? ORDER BY id", (segment.id,)):
            normalizer.add_clause(parse_term(text), text, rule_id)
        return program

    def _program(self, conn, segment: Segment) -> Program:
        cached = self._programs.get(segment.id)
        if cached and cached[0] == segment.generation:
            return cached[1]
        program = self._build_program(conn, segment)
        analyze(program)
        self._programs[segment.id] = (segment.generation, program)
        return program

    def _loader(self, conn, segment: Segment):
        def load(preds: set) -> dict:
            out = {}
            for pred in preds:
                if pred.segment is not None:  # segment:name(...) reads another mounted segment
                    other = resolve(conn, pred.segment)
                    if other.scope == "global" and self.global_source is not None:
                        out[pred] = self.global_source().facts_of(other.name, pred.name, pred.arity)
                    else:
                        out[pred] = self._tuples(conn, other, pred.name, pred.arity)
                elif pred.is_stored:
                    out[pred] = self._tuples(conn, segment, pred.name, pred.arity)
            return out
        return load

    def _detached_loader(self, segment: Segment):
        """A loader that reads in its own short transaction: evaluations run outside any transaction,
        so a long one never keeps the store (and the other calls on it) waiting."""
        def load(preds: set) -> dict:
            with self.store.read() as conn:
                return self._loader(conn, segment)(preds)
        return load

    def facts_of(self, memory: str, functor: str, arity: int) -> list:
        """Base tuples of one predicate of a segment, read in their own transaction."""
        with self.store.read() as conn:
            return self._tuples(conn, resolve(conn, memory), functor, arity)

    def _tuples(self, conn, segment: Segment, functor: str, arity: int) -> list:
        key = (segment.id, functor, arity)
        cached = self._facts.get(key)
        if cached and cached[0] == segment.generation:
            return cached[1]
        tuples = self._stored_tuples(conn, segment, functor, arity)
        if self.computed is not None and segment.name == DEFAULT and (functor, arity) in self.computed.preds:
            tuples += self.computed.tuples(conn, (functor, arity))
        self._facts[key] = (segment.generation, tuples)
        return tuples

    def _stored_tuples(self, conn, segment: Segment, functor: str, arity: int) -> list:
        """The stored facts of one predicate the caller may see, as engine tuples."""
        visible, params = self.visible(conn)
        rows = conn.execute(f"SELECT args FROM facts AS f WHERE segment_id = ? AND functor = ? AND arity = ? AND {visible}",
                            (segment.id, functor, arity, *params)).fetchall()
        return [decode_args(r[0]) for r in rows]

    def query_terms(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0):
        """Answers as engine tuples, with the segment they came from."""
        term = parse_goal(goal)
        with self.store.read() as conn:
            segment = resolve(conn, memory)
            program = self._program(conn, segment)
            warnings = self.undefined_calls(conn, segment, term)
        answers = solve(program, term, self._detached_loader(segment), limit=limit, offset=offset,
                        budget=self._budget())
        answers.warnings = warnings
        answers.memory = segment.name
        answers.goal = format_term(term)
        return answers

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
        with self.store.read() as conn:
            segment = resolve(conn, memory)
            program = self._program(conn, segment)
        proof = explain(program, term, self._detached_loader(segment), max_depth=max_depth, budget=self._budget())
        tree = proof.to_dict() if proof else None
        with self.store.read() as conn:
            detailed = self._with_supports(conn, segment, proof) if proof else None
            warnings = self.undefined_calls(conn, segment, term)
        text = format_term(term)
        recorded = self._record_proof(segment, proof, text) if record_proof and proof is not None else None
        return Explanation(text, segment.name, proof is not None, tree, detailed, warnings, recorded)

    def _record_proof(self, segment: Segment, proof, text: str) -> dict:
        conclusions, complete = proof_conclusions(proof, self._computed_preds(segment))
        with self.store.write() as conn:
            current = resolve(conn, segment.name)
            if current.generation != segment.generation:
                raise Conflict(f"memory '{segment.name}' changed while the proof was built; try again",
                               memory=segment.name)
            written = record_proof(conn, current, conclusions)
            record_audit(conn, self.actor, "record_proof", current.name,
                         {"fact": text, "generation": current.generation, "conclusions": written,
                          "complete": complete})
        return {"generation": segment.generation, "conclusions": len(conclusions), "written": written,
                "complete": complete}

    def undefined_calls(self, conn, segment: Segment, body: Term, head: Term | None = None) -> list[str]:
        """Warnings for the predicates `body` calls that have no visible facts or rules in `segment`
        (a rule's own head counts as defined: it may call itself)."""
        defined = set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()
        if head is not None:
            defined.add(indicator(head))
        return undefined_warnings(conn, segment.id, body, self.visible(conn), defined)

    def _with_supports(self, conn, segment: Segment, proof) -> dict:
        """The proof tree with each stored fact's supports (asserted, assumption:…) on its leaf."""
        return map_tree(proof, lambda node: self._detailed_node(conn, segment, node))

    def _detailed_node(self, conn, segment: Segment, node) -> dict:
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
                fact_id = visible_fact(conn, owner, text, self.seen(conn))
                out["supports"] = visible_supports(conn, fact_id, self.seen(conn)) if fact_id else []
                if self.computed is not None and owner.name == DEFAULT and node.pred.indicator in self.computed.preds:
                    out["supports"] += self.computed.supports(conn, node.pred.indicator, node.args)
            if owner is not segment:
                out["memory"] = owner.name
        return out

    def supports_of(self, memory: str, text: str) -> list[str]:
        """The supports of a stored fact (canonical text) in a segment; [] when it is not stored."""
        with self.store.read() as conn:
            segment = resolve(conn, memory)
            fact_id = visible_fact(conn, segment, text, self.seen(conn))
            return visible_supports(conn, fact_id, self.seen(conn)) if fact_id else []

    def materialize(self, memory: str | None = None) -> Materialization:
        """Write every derived conclusion with its rule and stamp, and the premises of its derivation
        (proof_edges), under the current generation.

        The model and the premises are computed outside any transaction and written in one short one, so
        other writers (in this process or another) wait only for the write; if the memory changed meanwhile,
        the evaluation is redone (a few times at most) so what is written matches the generation it names."""
        started = time.perf_counter()
        budget = self._budget()
        for _ in range(MATERIALIZE_ATTEMPTS):
            with self.store.read() as conn:
                segment = resolve(conn, memory)
                program = self._program(conn, segment)
            model = self.evaluate_all(program, self._detached_loader(segment), budget)
            conclusions = model_conclusions(program, model, budget, self._computed_preds(segment))
            with self.store.write() as conn:
                if resolve(conn, memory).generation != segment.generation:
                    continue
                conn.execute("DELETE FROM derived WHERE segment_id = ?", (segment.id,))
                edges = write_conclusions(conn, segment, conclusions, budget)
                seconds = time.perf_counter() - started
                conn.execute(
                    "INSERT INTO materializations (segment_id, generation, materialized_at, tuples, seconds) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (segment_id) DO UPDATE SET generation = excluded.generation, "
                    "materialized_at = excluded.materialized_at, tuples = excluded.tuples, seconds = excluded.seconds",
                    (segment.id, segment.generation, utc_now(conn.clock), len(conclusions), seconds),
                )
                record_audit(conn, self.actor, "materialize", segment.name,
                             {"generation": segment.generation, "tuples": len(conclusions), "proof_edges": edges})
            return Materialization(segment.name, segment.generation, len(conclusions), seconds, edges)
        raise Conflict(f"memory '{segment.name}' kept changing while it was materialized; try again",
                       memory=segment.name)

    def _computed_preds(self, segment: Segment) -> set:
        """Predicates computed from observations: they join the default segment only."""
        return set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()

    def evaluate_all(self, program: Program, load, budget: Budget | None = None):
        """The whole model of a program: every stored relation its rules mention, loaded and evaluated."""
        return evaluate_program(program, load, budget or self._budget())

    def _budget(self) -> Budget:
        """A fresh budget for one call, its clock started now: loading the facts counts too."""
        return self.budget.copy().start()
