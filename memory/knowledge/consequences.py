"""Which conclusions a change withdrew: the rule-defined predicates that read (directly or through other rules)
what the change touches, evaluated before and after it, compared.

Conclusions have no supports of their own: they hold while a proof exists, so the only sound way to say which
stopped holding is to ask again. Asking costs an evaluation of the affected predicates, under the call's budget;
when the budget does not allow it, the change still happens and the caller is told the list was not computed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from ..datalog.program import literal_dependencies
from ..datalog import solve_all
from ..datalog.relations import StoredRelation
from ..errors import BudgetExceeded
from ..terms import Compound, Term, Var, format_term, indicator, parse_term
from .segments import resolve

if TYPE_CHECKING:
    from .base import KnowledgeBase

MAX_LISTED = 20  # conclusions named in a reply; the total counts them all
# The share of a call's time the before-and-after evaluations get between them (at least MIN_SECONDS): a change
# that removes a runaway rule should not cost the whole budget twice just to list what it withdrew.
SHARE = 0.25
MIN_SECONDS = 2.0


@dataclass
class Withdrawn:
    """What a change withdrew: `listed` (at most MAX_LISTED, in order), `total`; total None: not computed."""

    listed: list[str] = field(default_factory=list)
    total: int | None = 0
    note: str = ""

    def to_dict(self) -> dict:
        out: dict = {"withdrawn": self.listed, "withdrawn_total": self.total}
        if self.note:
            out["withdrawn_note"] = self.note
        return out

    def text(self) -> str:
        """One line for a reply's text: what no longer holds, or why that is not known."""
        if self.total is None:
            return f"% conclusions that stopped holding: not computed ({self.note})"
        if not self.total:
            return "% no conclusion stopped holding"
        more = self.total - len(self.listed)
        return (f"% no longer hold ({self.total}): {', '.join(self.listed)}" + (f" (+{more} more)" if more else ""))


class Consequences:
    """Taken before a change to the given predicates (name, arity) of a segment; `withdrawn()` after it."""

    def __init__(self, kb: KnowledgeBase, memory: str | None, predicates: Iterable[tuple[str, int]]) -> None:
        self.kb = kb
        with kb.repository.read() as tx:
            segment = resolve(tx, memory)
            program = kb.program(tx, segment)
        self.memory = segment.name
        self.heads = _dependents(program, set(predicates))
        self.budget = kb.budget.copy()
        self.budget.timeout_s = min(kb.budget.timeout_s, max(MIN_SECONDS, SHARE * kb.budget.timeout_s))
        self.budget.start()
        self.before = self._holding()

    def withdrawn(self, removed: Iterable[str] = ()) -> Withdrawn:
        """What held before and does not now; `removed`: stored facts the change removed, which the reply
        lists as such and not again as conclusions."""
        after = self._holding() if self.before is not None else None
        if self.before is None or after is None:
            return Withdrawn(total=None, note=self._over())
        gone = sorted(self.before - after - set(removed))
        return Withdrawn(gone[:MAX_LISTED], len(gone))

    def if_gone(self, removed: Iterable[str], limit: int = MAX_LISTED) -> Withdrawn:
        """A dry run of `withdrawn`: what would stop holding if these stored facts (texts, of the predicates
        given at construction) were gone, with nothing changed: the same heads evaluated again with those facts
        hidden from the loader. At most `limit` are listed."""
        hidden = set(removed)
        after = self._holding(self._hiding(hidden)) if self.before is not None else None
        if self.before is None or after is None:
            return Withdrawn(total=None, note=self._over())
        gone = sorted(self.before - after - hidden)
        return Withdrawn(gone[:limit], len(gone))

    def _over(self) -> str:
        return (f"evaluating them before and after takes more than the {self.budget.timeout_s:g} s or the tuples "
                "this list may use; query_logic shows what holds now")

    def _hiding(self, hidden: set[str]):
        """A query over the segment's program whose loader leaves out the stored facts in `hidden`."""
        kb = self.kb
        with kb.repository.read() as tx:
            segment = resolve(tx, self.memory)
            program = kb.program(tx, segment)
        by_pred = {indicator(parse_term(text)) for text in hidden}

        def load(preds: set) -> dict:
            with kb.repository.read() as tx:
                out = kb.loader(tx, segment)(preds)
                seen = kb.visibility(tx)
                for pred in preds:
                    if pred.segment is None and pred.is_stored and pred.indicator in by_pred and pred in out:
                        gone = {row.args for row in tx.facts.rows(segment.id, pred.name, pred.arity, seen)
                                if row.text in hidden}
                        kept = out[pred].tuples if isinstance(out[pred], StoredRelation) else out[pred]
                        out[pred] = [t for t in kept if t not in gone]
            return out

        def ask(goal: Term):
            return solve_all(program, goal, load, budget=self.budget.start()).page()
        return ask

    def _holding(self, ask=None) -> set[str] | None:
        """Every conclusion of the affected heads that holds now (or under `ask`, a query over another view of
        the facts), as text; None when the budget runs out."""
        texts: set[str] = set()
        for name, arity in sorted(self.heads):
            head: Term = name if arity == 0 else Compound(name, tuple(Var(f"A{i}") for i in range(arity)))
            try:
                answers = self.kb.query_terms(format_term(head), self.memory, None, 0, self.budget) if ask is None \
                    else ask(head)
            except BudgetExceeded:
                return None
            if not isinstance(head, Compound):
                texts |= {name} if answers.total else set()
                continue
            for values in answers.rows:
                binding = dict(zip(answers.variables, values))
                texts.add(format_term(Compound(name, tuple(binding[a.name] for a in head.args))))
        return texts


def _dependents(program, changed: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """The user predicates defined by rules whose extension may change when the changed predicates do: those
    changed themselves and every rule head that reads one of them, directly or through other rules (the
    auxiliary predicates of negations and aggregates are followed through, never reported)."""
    readers: dict = {}
    for rule in program.rules:
        for literal in rule.body:
            for pred, _ in literal_dependencies(literal):
                readers.setdefault(pred, set()).add(rule.head.pred)
    reached = {pred for pred in (*readers, *program.idb()) if pred.is_stored and pred.indicator in changed}
    frontier = list(reached)
    while frontier:
        for reader in readers.get(frontier.pop(), ()):
            if reader not in reached:
                reached.add(reader)
                frontier.append(reader)
    defined = program.idb()
    return {pred.indicator for pred in reached if pred.is_stored and pred in defined}
