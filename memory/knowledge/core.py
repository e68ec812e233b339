"""What every job of the knowledge base shares: its collaborators, the caller's view of supports, each
segment's program (kept while its rules stay the same), the engine's loaders over the store, budgets."""

from __future__ import annotations

from typing import Any

from ..datalog import Budget, Pred, Program, evaluate_program
from ..datalog.relations import StoredRelation
from ..errors import InvalidArguments
from ..store.repository import Repository, Transaction, Visibility

from ..terms import Compound, Term, call_prefix, format_term, indicator, plain_call
from .collaborators import ComputedRelations, GlobalSource, ProjectionGuard, SupportVisibility
from .segments import DEFAULT, Segment, resolve
from .undefined import undefined_warnings
from .memo import AnswerMemo
from .warm import Input, WarmRelations

from .program_cache import ProgramCache, build_program

MAX_LIMIT = 10_000


def _check_page(limit: Any, offset: Any, default: int | None) -> tuple[int | None, int]:
    if limit is not None and (type(limit) is not int or limit < 0 or limit > MAX_LIMIT):
        raise InvalidArguments(f"'limit' must be an integer from 0 to {MAX_LIMIT}", argument="limit")
    if type(offset) is not int or offset < 0:
        raise InvalidArguments("'offset' must be a non-negative integer", argument="offset")
    return (default if limit is None else limit), offset


class KnowledgeCore(object):
    """The knowledge base's state and the reads its jobs share (KnowledgeBase puts the jobs together)."""

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
        self.programs = ProgramCache()  # each segment's analyzed program, kept while its rules stay the same
        self.memo = AnswerMemo()  # answers of queries asked again while nothing they read changed
        self.warm = WarmRelations()  # stored predicates kept in memory across calls
        self.global_source = global_source
        self._visibility = visibility
        self.projection_guard = projection_guard
        self.computed = computed

    def visibility(self, tx: Transaction) -> Visibility | None:
        """The caller's view of supports in this transaction; every fact and support read goes through it."""
        return self._visibility(tx) if self._visibility is not None else None

    def build_program(self, tx: Transaction, segment: Segment) -> Program:
        """A new program of the segment's stored rules, not analyzed yet (program_cache.build_program)."""
        return build_program(tx, segment)

    def program(self, tx: Transaction, segment: Segment) -> Program:
        """The segment's analyzed program, kept while its rules stay the same (callers must not change it)."""
        return self.programs.get(tx, segment)

    def loader(self, conn: Transaction, segment: Segment, inputs: dict | None = None):
        """The engine's loader for a segment's program, reading inside the transaction `conn`: each stored
        predicate's visible tuples (another mounted segment's for `seg:pred`, the computed relations for the
        default segment). `inputs`, when given, records where each stood (see `memo`)."""
        def load(preds: set) -> dict:
            out: dict[Pred, Any] = {}  # a warm StoredRelation, or the global database's tuples
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

    def undefined_calls(self, tx: Transaction, segment: Segment, body: Term, head: Term | None = None) -> list[str]:
        """Warnings for the predicates `body` calls that have no visible facts or rules in `segment`
        (a rule's own head counts as defined: it may call itself)."""
        defined = set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()
        if head is not None:
            defined.add(indicator(head))
        return undefined_warnings(tx, segment.id, body, self.visibility(tx), defined)

    def supports_of(self, memory: str, text: str) -> list[str]:
        """The supports of a stored fact (canonical text) in a segment; [] when it is not stored."""
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            seen = self.visibility(tx)
            fact_id = tx.facts.find(segment.id, text, seen)
            return tx.supports.of(fact_id, seen) if fact_id else []

    def _computed_preds(self, segment: Segment) -> set:
        """Predicates computed from observations: they join the default segment only."""
        return set(self.computed.preds) if self.computed is not None and segment.name == DEFAULT else set()

    def evaluate_all(self, program: Program, load, budget: Budget | None = None):
        """The whole model of a program: every stored relation its rules mention, loaded and evaluated."""
        return evaluate_program(program, load, budget or self.new_budget())

    def new_budget(self) -> Budget:
        """A fresh budget for one call, its clock started now: loading the facts counts too."""
        return self.budget.copy().start()
