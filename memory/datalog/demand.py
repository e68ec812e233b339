"""Demand transformation: magic sets, plus factoring of right-linear recursion.

A goal with bound arguments should only compute what it can reach. The magic-set
rewrite (Bancilhon et al. 1986; Beeri & Ramakrishnan 1991) adorns each called
predicate with which arguments are bound ('b') or free ('f') and guards its
rules with a `$magic` predicate holding the demanded bindings. Plain magic sets
are quadratic for right-linear rules such as `path(X,Z) :- edge(X,Y), path(Y,Z)`
queried as `path(0, Z)`; for those the rewrite is factored (Naughton et al.
1989): the answers are the exit rule's answers over the magic set, which is
linear. Predicates reached through negation are computed in full (they sit in
lower strata, so this keeps the program stratified). An aggregate's goal is
demanded like any call when `through_aggregates` is on: `aggregate_all(count,
path(0, Y), N)` then counts the closure from 0, not the whole closure. Demand can
make a stratified program unstratified (the magic set of an aggregate's goal may
depend on the aggregate's own result); the caller checks the rewritten rules and
falls back to computing aggregated goals in full.
"""

from __future__ import annotations

from ..terms import Var, variables
from dataclasses import replace

from .planner import binds, order_body
from .predicates import Pred
from .program import Agg, Lit, Neg, Rule, body_preds, literal_dependencies, literal_vars, rules_by_head


def _ground_under(term, bound: set) -> bool:
    return all(v in bound for v in variables(term))


class _Rewriter:
    def __init__(self, rules: list[Rule], through_aggregates: bool = False) -> None:
        self.through_aggregates = through_aggregates
        self.by_head = rules_by_head(rules)
        self.idb = set(self.by_head)
        self.full: set = set()
        self.seen: set = set()
        self.queue: list = []
        self.rules: list[Rule] = []
        self.magic_from: list = []  # (magic rule, rewritten caller rule, callee key)

    def call(self, lit: Lit, bound: set, aggregated: bool = False) -> Lit:
        """The literal as called with `bound` variables known: adorned when demand can flow into it.
        An aggregate's goal is an auxiliary predicate whose rule holds the goal's constants, so even
        with no argument bound it is rewritten (all free, no magic guard) for its body's sake."""
        if lit.pred not in self.idb:
            return lit
        adornment = "".join("b" if _ground_under(a, bound) else "f" for a in lit.args)
        if "b" not in adornment and not aggregated:
            self.full.add(lit.pred)
            return lit
        key = (lit.pred, adornment)
        if key not in self.seen:
            self.seen.add(key)
            self.queue.append(key)
        return Lit(Pred.adorned(lit.pred, adornment), lit.args)

    def rewrite_rule(self, rule: Rule, head: Lit, prefix: list, bound: set) -> Rule:
        pending_magic = []
        for i in order_body(rule, bound, lambda pred: 0):
            lit = rule.body[i]
            binding = binds(lit, bound)
            called = lit.goal if isinstance(lit, Agg) and self.through_aggregates else lit
            if isinstance(called, Lit):
                new = self.call(called, bound, aggregated=called is not lit)
                if new is not called:
                    pred, adornment = called.pred, new.pred.adornment
                    if "b" in adornment:
                        bound_args = tuple(a for a, c in zip(called.args, adornment) if c == "b")
                        magic = Rule(Lit(Pred.magic(pred, adornment), bound_args), tuple(prefix), rule.source)
                        pending_magic.append((magic, (pred, adornment)))
                prefix.append(new if called is lit else replace(lit, goal=new))
            else:
                if isinstance(lit, Neg):
                    self.full.add(lit.lit.pred)
                elif isinstance(lit, Agg):
                    self.full.add(lit.goal.pred)
                prefix.append(lit)
            if isinstance(lit, (Neg, Agg)) and lit.inline is not None:  # what its rules read, in full
                self.full.update(pred for pred, _ in literal_dependencies(lit) if pred in self.idb)
            bound |= binding
        rewritten = Rule(head, tuple(_drop_implied_guard(head, prefix)), rule.source, origin=rule)
        for magic, callee in pending_magic:
            self.rules.append(magic)
            self.magic_from.append((magic, rewritten, callee))
        self.rules.append(rewritten)
        return rewritten

    def drain(self) -> None:
        """Rewrite the rules of every demanded (predicate, adornment) not rewritten yet."""
        while self.queue:
            pred, adornment = self.queue.pop()
            for rule in self.by_head[pred]:
                head_bound = tuple(a for a, c in zip(rule.head.args, adornment) if c == "b")
                bound = set()
                for a in head_bound:
                    bound.update(variables(a))
                guard = [Lit(Pred.magic(pred, adornment), head_bound)] if head_bound else []  # all free: no demand
                self.rewrite_rule(rule, Lit(Pred.adorned(pred, adornment), rule.head.args), guard, bound)

    def run(self, root: Rule) -> Rule:
        root_rewritten = self.rewrite_rule(root, root.head, [], set())
        self.drain()
        # Everything reached through negation, aggregation or an all-free call is computed in full;
        # with `through_aggregates`, a full rule's aggregates still get demand into their goals.
        computed: set = set()
        while self.queue or self.full - computed:
            self.drain()
            for pred in list(self.full - computed):
                computed.add(pred)
                for rule in self.by_head.get(pred, ()):
                    if self.through_aggregates and any(isinstance(lit, Agg) for lit in rule.body):
                        self.rewrite_rule(rule, rule.head, [], set())
                        continue
                    if rule in self.rules:
                        continue
                    self.rules.append(rule)
                    self.full.update(target for target in body_preds([rule]) if target in self.idb)
        return root_rewritten


def _drop_implied_guard(head: Lit, body: list) -> list:
    """`p(X,Z) :- m_p(X), p(X,Y), e(Y,Z)`: every p(X,_) tuple was already guarded by m_p(X),
    so the magic literal adds nothing but a join per round; drop it (left-linear rules)."""
    if not body or not isinstance(body[0], Lit) or not body[0].pred.is_magic or not head.pred.is_adorned:
        return body
    guard = body[0]
    adornment = head.pred.adornment
    for lit in body[1:]:
        if isinstance(lit, Lit) and lit.pred == head.pred:
            if tuple(a for a, c in zip(lit.args, adornment) if c == "b") == guard.args:
                return body[1:]
    return body


def magic_rewrite(rules: list[Rule], root: Rule, factor: bool = True, through_aggregates: bool = False) -> list[Rule]:
    """The rules to evaluate for `root` (a rule whose head collects the answers)."""
    rewriter = _Rewriter(rules, through_aggregates)
    root_rewritten = rewriter.run(root)
    if factor:
        for pred, adornment in list(rewriter.seen):
            _try_factor(rewriter, root_rewritten, pred, adornment)
    return rewriter.rules


def _right_linear(rule: Rule, pred, adornment: str) -> Lit | None:
    """The recursive literal when `rule` is right-linear for this adornment; None otherwise."""
    recursive = [lit for lit in rule.body if isinstance(lit, Lit) and lit.pred == pred]
    if len(recursive) != 1:
        return None
    rec = recursive[0]
    free = [i for i, c in enumerate(adornment) if c == "f"]
    head_free = [rule.head.args[i] for i in free]
    if not all(type(v).__name__ == "Var" and not v.anonymous for v in head_free) or len(set(head_free)) != len(head_free):
        return None
    if any(rec.args[i] != rule.head.args[i] for i in free):
        return None
    elsewhere: set = set()
    for i, a in enumerate(rule.head.args):
        if i not in free:
            elsewhere.update(variables(a))
    for i, a in enumerate(rec.args):
        if i not in free:
            elsewhere.update(variables(a))
    for lit in rule.body:
        if lit is not rec:
            elsewhere |= literal_vars(lit) if not isinstance(lit, Agg) else set(lit.group) | set(variables(lit.result))
    if set(head_free) & elsewhere:
        return None
    return rec


def _try_factor(rw: _Rewriter, root: Rule, pred, adornment: str) -> None:
    key = Pred.adorned(pred, adornment)
    if "f" not in adornment:
        return
    if any(isinstance(lit, Agg) and lit.goal.pred == key for r in rw.rules for lit in r.body):
        return  # an aggregate reads the adorned relation itself: it must stay whole
    calls = [(r, lit) for r in rw.rules for lit in r.body if isinstance(lit, Lit) and lit.pred == key]
    own = [r for r in rw.rules if r.head.pred == key]
    outside = [(r, lit) for r, lit in calls if r not in own]
    if len(outside) != 1 or outside[0][0] is not root:
        return
    call = outside[0][1]
    if not all(_ground_under(a, set()) for a, c in zip(call.args, adornment) if c == "b"):
        return  # several callers' bindings would mix in one answer set
    originals = rw.by_head[pred]
    if any(isinstance(l, Lit) and l.pred != pred and _reaches(rw, l.pred, pred) for r in originals for l in r.body):
        return  # mutual recursion: not a single right-linear predicate
    recursive_lits = {id(r): _right_linear(r, pred, adornment) for r in originals}
    if any(rec is None and any(isinstance(l, Lit) and l.pred == pred for l in r.body)
           for r in originals for rec in (recursive_lits[id(r)],)):
        return
    for rule in own:
        if recursive_lits[id(rule.origin)] is not None and not any(
                isinstance(l, Lit) and l.pred == key for l in rule.body):
            return  # the recursive call is made with another adornment: not the same demand
    magic_key = Pred.magic(pred, adornment)
    answer_key = Pred.answer(pred, adornment)
    free = [i for i, c in enumerate(adornment) if c == "f"]
    # The predicate's stored facts answer too, like an exit rule: answer(Free) :- magic(Bound), pred(All).
    every = tuple(Var(f"A{i}") for i in range(pred.arity))
    stored = Rule(Lit(answer_key, tuple(every[i] for i in free)),
                  (Lit(magic_key, tuple(v for v, c in zip(every, adornment) if c == "b")), Lit(pred, every)),
                  originals[0].source)
    new_rules = [stored]
    for rule in rw.rules:
        if rule.head.pred == key:
            source_rule = rule.origin
            rec = recursive_lits[id(source_rule)]
            if rec is None:  # exit rule: its free head arguments are answers
                answer = Lit(answer_key, tuple(rule.head.args[i] for i in free))
                new_rules.append(Rule(answer, rule.body, rule.source))
            else:  # recursive rule: only demand flows, through every other literal
                adorned_rec = [l for l in rule.body if isinstance(l, Lit) and l.pred == key][0]
                others = tuple(l for l in rule.body if l is not adorned_rec)
                guard = Lit(magic_key, tuple(a for a, c in zip(rule.head.args, adornment) if c == "b"))
                if guard not in others:  # dropped as implied by the recursive call; demand needs it back
                    others = (guard,) + others
                bound_args = tuple(a for a, c in zip(adorned_rec.args, adornment) if c == "b")
                new_rules.append(Rule(Lit(magic_key, bound_args), others, rule.source))
            continue
        if rule.head.pred == magic_key and any(m is rule and caller.head.pred == key for m, caller, _ in rw.magic_from):
            continue  # replaced by the factored magic rule above
        if rule is root:
            body = tuple(Lit(answer_key, tuple(call.args[i] for i in free)) if l is call else l for l in rule.body)
            root_new = Rule(rule.head, body, rule.source, origin=rule.origin)
            new_rules.append(root_new)
            continue
        new_rules.append(rule)
    rw.rules[:] = new_rules


def _reaches(rw: _Rewriter, start, target) -> bool:
    seen, stack = set(), [start]
    while stack:
        pred = stack.pop()
        if pred == target:
            return True
        if pred in seen:
            continue
        seen.add(pred)
        stack.extend(body_preds(rw.by_head.get(pred, ())))
    return False
