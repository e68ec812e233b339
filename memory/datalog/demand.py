"""Demand transformation: magic sets, plus factoring of right-linear recursion.

A goal with bound arguments should only compute what it can reach. The magic-set
rewrite (Bancilhon et al. 1986; Beeri & Ramakrishnan 1991) adorns each called
predicate with which arguments are bound ('b') or free ('f') and guards its
rules with a `$magic` predicate holding the demanded bindings. Plain magic sets
are quadratic for right-linear rules such as `path(X,Z) :- edge(X,Y), path(Y,Z)`
queried as `path(0, Z)`; for those the rewrite is factored (Naughton et al.
1989): the answers are the exit rule's answers over the magic set, which is
linear. Predicates reached through negation or aggregation are computed in full
(they sit in lower strata, so this keeps the program stratified).
"""

from __future__ import annotations

from ..terms import variables
from .planner import binds, order_body
from .predicates import Pred
from .program import Agg, Lit, Neg, Rule, body_preds, literal_vars, rules_by_head


def _ground_under(term, bound: set) -> bool:
    return all(v in bound for v in variables(term))


class _Rewriter:
    def __init__(self, rules: list[Rule]) -> None:
        self.by_head = rules_by_head(rules)
        self.idb = set(self.by_head)
        self.full: set = set()
        self.seen: set = set()
        self.queue: list = []
        self.rules: list[Rule] = []
        self.magic_from: list = []  # (magic rule, rewritten caller rule, callee key)

    def call(self, lit: Lit, bound: set) -> Lit:
        if lit.pred not in self.idb:
            return lit
        adornment = "".join("b" if _ground_under(a, bound) else "f" for a in lit.args)
        if "b" not in adornment:
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
            if isinstance(lit, Lit):
                new = self.call(lit, bound)
                if new is not lit:
                    pred, adornment = lit.pred, new.pred.adornment
                    bound_args = tuple(a for a, c in zip(lit.args, adornment) if c == "b")
                    magic = Rule(Lit(Pred.magic(pred, adornment), bound_args), tuple(prefix), rule.source)
                    pending_magic.append((magic, (pred, adornment)))
                prefix.append(new)
            else:
                if isinstance(lit, Neg):
                    self.full.add(lit.lit.pred)
                elif isinstance(lit, Agg):
                    self.full.add(lit.goal.pred)
                prefix.append(lit)
            bound |= binding
        rewritten = Rule(head, tuple(_drop_implied_guard(head, prefix)), rule.source, origin=rule)
        for magic, callee in pending_magic:
            self.rules.append(magic)
            self.magic_from.append((magic, rewritten, callee))
        self.rules.append(rewritten)
        return rewritten

    def run(self, root: Rule) -> Rule:
        root_rewritten = self.rewrite_rule(root, root.head, [], set())
        while self.queue:
            pred, adornment = self.queue.pop()
            for rule in self.by_head[pred]:
                head_bound = tuple(a for a, c in zip(rule.head.args, adornment) if c == "b")
                bound = set()
                for a in head_bound:
                    bound.update(variables(a))
                magic = Lit(Pred.magic(pred, adornment), head_bound)
                self.rewrite_rule(rule, Lit(Pred.adorned(pred, adornment), rule.head.args), [magic], bound)
        # Everything reached through negation, aggregation or an all-free call is computed in full.
        pending = list(self.full)
        while pending:
            pred = pending.pop()
            for rule in self.by_head.get(pred, ()):
                if rule in self.rules:
                    continue
                self.rules.append(rule)
                for target in body_preds([rule]):
                    if target in self.idb and target not in self.full:
                        self.full.add(target)
                        pending.append(target)
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


def magic_rewrite(rules: list[Rule], root: Rule, factor: bool = True) -> list[Rule]:
    """The rules to evaluate for `root` (a rule whose head collects the answers)."""
    rewriter = _Rewriter(rules)
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
    new_rules = []
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
