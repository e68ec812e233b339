"""Queries: answers from kept evaluations while nothing they read changed, brought up to date when something
did, else evaluated afresh; and why an empty answer may be empty."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..datalog import BaseChange, Budget, Evaluation, Pred, solve_kept
from ..datalog.relations import release
from ..store.repository import Transaction

from ..terms import Compound, String, Term, format_term, indicator
from ..terms.codec import to_json
from .parsing import parse_goal
from .segments import Segment, resolve
from .goals import goals

from .core import KnowledgeCore, _check_page


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


class Queries(KnowledgeCore):
    """Answering goals."""

    def query_terms(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0,
                    budget: Budget | None = None):
        """Answers as engine tuples, with the segment they came from: kept answers while nothing they read has
        changed, a kept evaluation brought up to date when something has, else a new evaluation (kept).
        `budget`: the evaluation's, when not the call's own (a started one: its deadline stands)."""
        term = parse_goal(goal)
        text = format_term(term)
        kept: Evaluation | None = None  # a kept evaluation, to be told what changed
        changes: dict[Pred, BaseChange] | None = None
        inputs: dict = {}
        with self.repository.read() as tx:
            segment = resolve(tx, memory)
            program = self.program(tx, segment)
            warnings = self.undefined_calls(tx, segment, term)
            key = (segment.id, text, self.visibility(tx))
            everything = self.memo.get(key, program, tx, segment.generation)
            if everything is None:
                entry = self.memo.take(key, program)
                if entry is not None and entry.evaluation is not None:
                    changes = self._changes(tx, segment, entry.inputs, inputs)
                    if changes is None:  # cannot be followed: evaluated afresh
                        entry.evaluation.release()
                    else:
                        kept = entry.evaluation
        if everything is None:
            evaluation: Evaluation | None
            budget = budget.start() if budget is not None else self.new_budget()
            if kept is not None and changes is not None:
                try:
                    everything = kept.update(changes, budget)
                except BaseException:
                    kept.release()  # left half changed
                    raise
                evaluation = kept
            else:
                inputs = {}
                everything, evaluation = solve_kept(program, term, self.detached_loader(segment, inputs),
                                                    budget=budget, lookup=self._point_lookup(segment, inputs))
            answers = everything.page(limit, offset)
            if not self.memo.put(key, program, inputs, everything, evaluation):
                release(everything.rows)  # not kept: many answers freed a slice at a time, not in one stall
        else:
            answers = everything.page(limit, offset)
        if not answers.total and not warnings:
            # No answer and the goal's own calls are all defined: say so if a rule it reaches calls nothing.
            with self.repository.read() as tx:
                warnings = self.undefined_in_rules(tx, segment, term)
        if not answers.total:
            warnings = warnings + _string_arguments(term)
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
        by_head: dict[tuple, list[Compound]] = {}
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

    def _changes(self, tx: Transaction, segment: Segment, before: dict,
                 inputs: dict) -> dict[Pred, BaseChange] | None:
        """What changed in the stored predicates an evaluation read (`before`: where each stood, see `memo`), as
        of `tx`, for `Evaluation.update`; `inputs` records where they stand now. The warm relations say what they
        gained and lost since (`StoredRelation.changes_to`); a relation read afresh is compared with the one
        the evaluation read, if that one has not grown since. None when the changes cannot be told."""
        changes: dict[Pred, BaseChange] = {}
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
            added, removed = steps
            changes[Pred.stored(functor, arity)] = BaseChange(list(added), set(removed),
                                                              None if relation is old.relation else relation)
        return changes

    def query_logic(self, goal: str, memory: str | None = None, limit: int | None = None, offset: int = 0) -> QueryResult:
        limit, offset = _check_page(limit, offset, None)
        answers = self.query_terms(goal, memory, limit, offset)
        bindings = [{name: format_term(v) for name, v in zip(answers.variables, row)} for row in answers.rows]
        values = [{name: to_json(v) for name, v in zip(answers.variables, row)} for row in answers.rows]
        return QueryResult(answers.goal, answers.memory, answers.variables, bindings, values,
                           answers.total, limit, offset, answers.truncated, answers.warnings)


def _string_arguments(goal: Term) -> list[str]:
    """For an empty answer: the goal's string arguments, which never equal an atom of the same text (a caller
    used to JSON writes "tom" for tom)."""
    strings = list(dict.fromkeys(a for ref in goals(goal) for a in ref.args if type(a) is String))
    return [f"{format_term(a)} is a string, which never equals the atom {format_term(a.value)}; write the atom "
            f"without double quotes if the facts hold one" for a in strings[:3]]
