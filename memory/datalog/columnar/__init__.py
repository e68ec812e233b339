"""Columnar evaluation of a rule over a large delta (see `arrays`), and the dispatch that picks it per firing.

The engine fires rules through `DispatchingRule`: the tuple-at-a-time `CompiledRule` for small deltas (a bound
query's few seeds, a chain's single tuple), the columnar evaluator for deltas of `THRESHOLD` tuples or more, and
for smaller ones while what they read is still columns (see `arrays`: deferred tuples), unless so many small
firings have run that turning those columns into tuples costs less (`SMALL_FIRING_ROWS`). Both keep one
contract (`CompiledRule.fire`): new head tuples go into `into` with the same provenance code (as columns, on the
columnar path, until a reader needs tuples), so proofs and materialization read the same relations whichever
path derived a tuple, and the two paths derive the same model, codes included.

Rules the columnar path takes: every body literal a positive relational literal whose arguments are variables or
ground terms, the head's arguments likewise. Anything else (negation, builtins, aggregates, patterns) stays on
the tuple path. numpy is imported with the first large delta: an interactive call never pays for it.
"""

from __future__ import annotations

from itertools import islice
from operator import itemgetter

from ...terms import Var, is_ground
from ..compiler import CompiledRule
from ..program import Lit, Neg, Rule
from ..relations import RELEASE_SLICE, Relations

# Deltas of at least this many tuples go columnar (None: never). Below it, the fixed cost of a few dozen numpy
# calls per firing exceeds what the tuple path spends (about 0.6 µs a derived tuple on a chain): measured with
# `benchmarks/engine.py --thresholds`, where the 1,000-edge chain's rounds shrink from 1,000 seeds to 1.
THRESHOLD: int | None = 512
# A firing below THRESHOLD costs the columnar path about as much as turning this many deferred tuples into Python
# tuples (the settling the tuple path needs first): small firings stay columnar until they have cost that much.
SMALL_FIRING_ROWS = 256


class Unsupported(Exception):
    """This firing cannot run columnar (ids too many to pack into one key): the tuple path takes it."""


def supports(rule: Rule) -> bool:
    """Whether the columnar path can evaluate this rule: positive relational literals over variables and ground
    terms, and a head of variables and ground terms with at least one argument."""
    if not rule.body or not rule.head.args or not all(type(a) is Var or is_ground(a) for a in rule.head.args):
        return False
    for lit in rule.body:
        if type(lit) is not Lit or not lit.args:
            return False
        if not all(type(a) is Var or is_ground(a) for a in lit.args):
            return False
    return True


def _selection(rule: Rule):
    """(pred, key getter, wanted key, projection, constant positions) for `p(Vars) :- q(Args)`: Args distinct named variables and
    ground terms, every head argument one of those variables; None for any other rule."""
    if len(rule.body) != 1 or type(rule.body[0]) is not Lit or not rule.head.args:
        return None
    args = rule.body[0].args
    named = [a for a in args if type(a) is Var]
    if any(a.anonymous for a in named) or len(set(named)) != len(named) or not all(
            type(a) is Var or is_ground(a) for a in args):
        return None
    position = {a: j for j, a in enumerate(args) if type(a) is Var}
    if not all(type(a) is Var and a in position for a in rule.head.args):
        return None
    constants = [j for j, a in enumerate(args) if type(a) is not Var]
    key = itemgetter(*constants) if constants else None
    wanted = (args[constants[0]] if len(constants) == 1 else tuple(args[j] for j in constants)) if constants else None
    columns = [position[a] for a in rule.head.args]
    project = itemgetter(*columns) if len(columns) > 1 else itemgetter(slice(columns[0], columns[0] + 1))
    return rule.body[0].pred, key, wanted, project, tuple(constants)


class DispatchingRule(CompiledRule):
    """A compiled rule whose `fire` picks per call: tuple-at-a-time below THRESHOLD seeds (or, unseeded, when its
    first literal does not scan a relation of that size), columnar from there when the rule allows it."""

    def __init__(self, rule: Rule, rels: Relations, seed: int | None, budget) -> None:
        super().__init__(rule, rels, seed, budget)
        self.rels = rels
        self.supported = supports(rule)
        self.columnar = None  # its arrays.ColumnarRule, made at the first large delta: small queries never pay for it
        # p(X, Y) :- q(X, Y) (an aggregate's goal, a view): q's tuples themselves, copied in C.
        body = rule.body
        self.copies = body[0].pred if (
            seed is None and len(body) == 1 and type(body[0]) is Lit and body[0].args == rule.head.args
            and all(type(a) is Var and not a.anonymous for a in body[0].args)
            and len(set(body[0].args)) == len(body[0].args)) else None
        # p(Y) :- q(0, Y) (a bound query's answers, a view that selects or projects): one pass over q's tuples.
        self.selects = ... if seed is None and self.copies is None else None  # made at the first firing
        # What the tuple path reads at firing time (an aggregate's goal is read when the rule is compiled).
        self.reads = {rule.head.pred} | {lit.pred for lit in body if type(lit) is Lit} | {
            lit.lit.pred for lit in body if type(lit) is Neg}

    def fire(self, delta=None, known: tuple = (), into: dict | None = None, code: int = 0) -> int:
        rels = self.rels
        if self.copies is not None and into is not None and not rels.count(into) and not any(map(rels.count, known)):
            return self._copy(into, code)
        if self.selects is not None and into is not None and not rels.count(into) and not any(map(rels.count, known)):
            if self.selects is ...:
                self.selects = _selection(self.rule)
            selects = self.selects
            # Not over deferred columns (the columnar path reads them), nor where an index on the constants finds
            # the matches without a pass (a stored relation's is kept warm between calls: built once, as the
            # compiled rule does).
            if selects is not None and not (rels.columnar is not None and rels.columnar.deferred(selects[0])) \
                    and not (selects[4] and (selects[0] in rels.shared or selects[4] in rels.indexes.get(selects[0], ()))):
                return self._select(into, code)
        if self.supported and THRESHOLD is not None:
            if self.seed is not None:
                size = rels.count(delta)
            else:  # an exit rule: worth it when it scans a big relation (not when it looks up a constant)
                size = self._scanned()
            if size and (size >= THRESHOLD or self._columns_read(delta)):
                if self.columnar is None:
                    from .arrays import ColumnarRule

                    self.columnar = ColumnarRule(self.rule, self.rels, self.seed, self.budget)
                try:
                    return self.columnar.fire(delta, known, into, code)
                except Unsupported:
                    pass
        self._settle(delta, into)
        return super().fire(delta, known, into, code)

    def _columns_read(self, delta) -> bool:
        """Whether a small firing should stay columnar: what it reads is deferred columns, and the small firings
        so far have cost less than turning those into tuples."""
        state = self.rels.columnar
        if state is None or state.finished:
            return False
        deferred = state.unsettled(delta) if delta is not None else 0
        for pred in self.reads:
            deferred += state.deferred(pred)
        if not deferred:
            return False
        state.small_firings += 1
        return state.small_firings * SMALL_FIRING_ROWS <= sum(m.deferred_rows() for m in state.mirrors.values())

    def _settle(self, delta, into) -> None:
        """Everything the tuple path is about to read as tuples: the relations, the delta and the round's set."""
        state = self.rels.columnar
        if state is None:
            return
        for pred in self.reads:
            state.settle(pred, self.budget)
        if delta is not None:
            state.settle_into(delta)
        if into is not None:
            state.settle_into(into)

    def _copy(self, into: dict, code: int) -> int:
        """Every tuple of the body's relation, into an empty `into` for a head with no tuples yet: a copy of the
        dict with the hashes it holds, no tuple built or hashed again (one C call, about 20 ns a tuple); of the
        columns, when the relation is deferred columns."""
        rels, budget = self.rels, self.budget
        if rels.size(self.copies) > budget.max_tuples - budget.derived:
            raise budget.exceeded("tuples", f"evaluation derived more than {budget.max_tuples} tuples",
                                  budget.max_tuples + 1)
        state = rels.columnar
        if state is not None and not state.finished and state.deferred(self.copies):
            from .arrays import copy_into

            added = copy_into(rels, self.copies, self.rule.head.pred, into, code)
        else:
            self._settle(None, into)
            into.update(dict.fromkeys(rels.get(self.copies), code))
            added = len(into)
        budget.check()
        return added

    def _select(self, into: dict, code: int) -> int:
        """The head tuples of a one-literal rule, into an empty `into` for a head with no tuples yet: the body's
        tuples filtered on its constants and projected, a slice at a time between budget checks."""
        pred, key, wanted, project, _ = self.selects
        self._settle(None, into)
        source, budget = self.rels.get(pred), self.budget
        tuples = iter(source)
        while chunk := list(islice(tuples, RELEASE_SLICE)):
            matching = chunk if key is None else [u for u in chunk if key(u) == wanted]
            into.update(dict.fromkeys(map(project, matching), code))
            if len(into) > budget.max_tuples - budget.derived:
                raise budget.exceeded("tuples", f"evaluation derived more than {budget.max_tuples} tuples",
                                      budget.max_tuples + 1)
            budget.check()
        return len(into)

    def _scanned(self) -> int:
        """The size of the relation an unseeded firing starts from, 0 when its first literal has a constant."""
        best = None
        for lit in self.rule.body:
            if any(type(a) is not Var for a in lit.args):
                return 0
            size = self.rels.size(lit.pred)
            best = size if best is None else min(best, size)
        return best or 0
