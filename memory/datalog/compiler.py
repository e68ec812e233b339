"""The closure compiler: a rule body compiled into a pipeline of steps over rows (see `rows`), and fired
in slices within the evaluation budget."""

from __future__ import annotations

from operator import itemgetter
from time import perf_counter
from typing import Callable

from ..terms import Var, is_ground, variables
from .aggregates import EMPTY_AGGREGATE, aggregate_value, compile_aggregate
from .builtin_table import compile_builtin
from .planner import order_body
from .program import Agg, Builtin, Lit, Neg, Rule, literal_vars
from .relations import EMPTY, Relations
from .rows import MISSING, Step, bind_result, head_projection, match_pattern, term_getter

SLICE_S = 0.005  # a join step runs about this long between budget checks
FIRST_SLICE = 64
FEW = 8  # seeds joined without slicing


def _classify(args: tuple, varmap: dict):
    keys = []  # (column, ('reg', i) | ('const', value))
    fresh: dict = {}
    eq_filters = []
    patterns = []
    for j, a in enumerate(args):
        if type(a) is Var:
            if a.anonymous:
                continue
            if a in varmap:
                keys.append((j, ("reg", varmap[a])))
            elif a in fresh:
                eq_filters.append((j, fresh[a]))
            else:
                fresh[a] = j
        elif is_ground(a):
            keys.append((j, ("const", a)))
        else:
            patterns.append((j, a))
    return keys, fresh, eq_filters, patterns


def _row_key(keys: list) -> Callable | None:
    """Key of a row matching an index on the key columns; None when all key parts are constants."""
    parts = [p for _, p in keys]
    if all(kind == "const" for kind, _ in parts):
        return None
    if all(kind == "reg" for kind, _ in parts):
        return itemgetter(*[i for _, i in parts])
    getters = [itemgetter(v) if kind == "reg" else (lambda r, c=v: c) for kind, v in parts]
    if len(getters) == 1:
        return getters[0]
    return lambda r: tuple(g(r) for g in getters)


def _const_key(keys: list):
    values = [v for _, (_, v) in keys]
    return values[0] if len(values) == 1 else tuple(values)


def compile_positive(lit: Lit, varmap: dict, width: int, rels: Relations, needed: set, seed: bool,
                     once: bool = False) -> Step:
    """`once`: the rule fires once (an exit rule), so a literal whose key is all constants scans its relation
    (the evaluation's own) once instead of building an index that nothing reads again."""
    keys, fresh, eq_filters, patterns = _classify(lit.args, varmap)
    if patterns:
        return _compile_pattern_join(lit, varmap, width, rels, keys, fresh, eq_filters, patterns, seed)
    arity = len(lit.args)
    new_varmap = dict(varmap)
    for v, j in fresh.items():
        new_varmap[v] = width + j
    columns = tuple(j for j, _ in keys)
    check = None
    if eq_filters:
        pairs = tuple(eq_filters)
        check = lambda u: all(u[a] == u[b] for a, b in pairs)

    if seed:
        # The seed scans this iteration's delta; constants filter it.
        const_cols = tuple((j, v) for j, (_, v) in keys)

        def seed_run(rows, delta):
            cands = [u for u in delta if all(u[j] == v for j, v in const_cols)] if const_cols else delta
            if check is not None:
                return [u for u in cands if check(u)]
            return cands if type(cands) is list else list(cands)
        step = Step(seed_run, new_varmap, width + arity)
        step.plain_seed = not const_cols and check is None
        return step

    relation = rels.get(lit.pred)
    introduces = any(v in needed for v in fresh)
    if check is None and arity > 1 and columns == tuple(range(arity)):
        # Every argument bound: a row's key is the tuple itself, so the relation answers membership; an index on
        # every column would only copy it (and, for a warm stored relation, be kept).
        row_key = _row_key(keys)
        if row_key is None:
            whole = _const_key(keys)
            return Step(lambda rows, _d=None: rows if whole in relation else [], varmap, width)
        return Step(lambda rows, _d=None: [r for r in rows if row_key(r) in relation], varmap, width)
    if not columns:
        def scan(rows, _delta=None):
            cands = relation if check is None else [u for u in relation if check(u)]
            return [r + u for r in rows for u in cands]
        return Step(scan, new_varmap, width + arity,
                    fuse=(lambda rows, project: {project(r + u) for r in rows for u in relation}) if check is None else None)

    row_key = _row_key(keys)
    if row_key is None:
        ckey = _const_key(keys)
        if once and lit.pred not in rels.shared and columns not in rels.indexes.get(lit.pred, {}):
            # (a stored relation read in place keeps its indexes between calls: built once, it serves them all)
            key = itemgetter(*columns)  # the key as an index on `columns` files it: ckey's shape
            scanned: list = []

            def lookup(_key, _default=None):
                """The matching tuples, scanned at the first firing (the rule fires once: no index is kept)."""
                if not scanned:
                    scanned.append([u for u in rels.settled(lit.pred) if key(u) == ckey])
                return scanned[0]
        else:
            lookup = rels.index(lit.pred, columns).get

        def const_join(rows, _delta=None):
            cands = lookup(ckey, EMPTY)
            if check is not None:
                cands = [u for u in cands if check(u)]
            if not introduces:
                return rows if cands else []
            return [r + u for r in rows for u in cands]
        return Step(const_join, new_varmap if introduces else varmap, (width + arity) if introduces else width)

    index = rels.index(lit.pred, columns)
    if not introduces and check is None:
        # Semi-join: only existence matters, rows keep their width.
        return Step(lambda rows, _d=None: [r for r in rows if row_key(r) in index], varmap, width)
    if check is None:
        get = index.get
        if len(keys) == 1:
            # One bound column, the common case: subscript the row directly instead of calling a key function.
            (_, (_, i)), = keys
            step = Step(
                lambda rows, _d=None: [r + u for r in rows for u in get(r[i], EMPTY)],
                new_varmap, width + arity,
                fuse=lambda rows, project: {project(r + u) for r in rows for u in get(r[i], EMPTY)},
            )
            step.lookup = (get, i)
            return step
        return Step(
            lambda rows, _d=None: [r + u for r in rows for u in get(row_key(r), EMPTY)],
            new_varmap, width + arity,
            fuse=lambda rows, project: {project(r + u) for r in rows for u in get(row_key(r), EMPTY)},
        )
    return Step(
        lambda rows, _d=None: [r + u for r in rows for u in index.get(row_key(r), EMPTY) if check(u)],
        new_varmap, width + arity,
    )


def _compile_pattern_join(lit, varmap, width, rels, keys, fresh, eq_filters, patterns, seed) -> Step:
    """Arguments that are compound terms with variables: match each candidate structurally."""
    arity = len(lit.args)
    new_varmap = dict(varmap)
    for v, j in fresh.items():
        new_varmap[v] = width + j
    pattern_vars: list = []
    for _, p in patterns:
        for v in variables(p):
            if not v.anonymous and v not in varmap and v not in fresh and v not in pattern_vars:
                pattern_vars.append(v)
    for k, v in enumerate(pattern_vars):
        new_varmap[v] = width + arity + k
    scope = dict(varmap)
    for v, j in fresh.items():
        scope[v] = width + j  # visible to patterns through the extended row
    columns = tuple(j for j, _ in keys)
    relation = rels.get(lit.pred)
    index = rels.index(lit.pred, columns) if columns and not seed else None
    row_key = _row_key(keys) if columns else None
    const_key = _const_key(keys) if columns and row_key is None else None
    const_cols = tuple((j, v) for j, (_, v) in keys)

    def run(rows, delta=None):
        out = []
        for r in rows:
            if seed:
                cands = [u for u in delta if all(u[j] == v for j, v in const_cols)]
            elif index is None:
                cands = relation
            else:
                cands = index.get(row_key(r) if row_key is not None else const_key, EMPTY)
            for u in cands:
                if any(u[a] != u[b] for a, b in eq_filters):
                    continue
                extended = r + u
                bound: dict = {}
                if all(match_pattern(p, u[j], extended, scope, bound) for j, p in patterns):
                    out.append(extended + tuple(bound.get(v) for v in pattern_vars))
        return out

    return Step(run, new_varmap, width + arity + len(pattern_vars))


def compile_negation(neg: Neg, varmap: dict, width: int, rels: Relations) -> Step:
    keys, fresh, eq_filters, patterns = _classify(neg.lit.args, varmap)
    if patterns or eq_filters:
        relation = rels.get(neg.lit.pred)
        args = neg.lit.args

        def matches_any(r) -> bool:
            for u in relation:
                bound: dict = {}
                if all(match_pattern(a, u[j], r, varmap, bound) for j, a in enumerate(args)):
                    return True
            return False
        return Step(lambda rows, _d=None: [r for r in rows if not matches_any(r)], varmap, width)
    columns = tuple(j for j, _ in keys)
    if not columns:
        relation = rels.get(neg.lit.pred)
        return Step(lambda rows, _d=None: [] if relation else rows, varmap, width)
    index = rels.index(neg.lit.pred, columns)
    row_key = _row_key(keys)
    if row_key is None:
        ckey = _const_key(keys)
        return Step(lambda rows, _d=None: [] if ckey in index else rows, varmap, width)
    return Step(lambda rows, _d=None: [r for r in rows if row_key(r) not in index], varmap, width)


def compile_filter(lit, varmap: dict, width: int, rels: Relations, budget) -> Step:
    """A negation, builtin or aggregate as a step, its inputs bound in `varmap`."""
    if isinstance(lit, Neg):
        if lit.inline is not None:
            return _inline_negation(lit, varmap, width, rels, budget)
        return compile_negation(lit, varmap, width, rels)
    if isinstance(lit, Builtin):
        return compile_builtin(lit, varmap, width)
    if lit.inline is not None:
        return _inline_aggregate(lit, varmap, width, rels, budget)
    return compile_aggregate(lit, varmap, width, rels, budget)


# --- inline negations and aggregates (see `program.Inline`) --------------------------------------------------

def _subgoal(rule: Rule, params: tuple, rels: Relations, budget) -> Callable[[list], set]:
    """An auxiliary rule run from rows of its parameters' values: the head tuples they give. The relations it
    reads are complete (they are in strata below its caller's)."""
    varmap = {p: i for i, p in enumerate(params)}
    width = len(params)
    needed = set(literal_vars(rule.head)).union(*(literal_vars(lit) for lit in rule.body))
    steps = []
    for i in order_body(rule, set(params), rels.size):
        lit = rule.body[i]
        step = compile_positive(lit, varmap, width, rels, needed, seed=False) if isinstance(lit, Lit) else \
            compile_filter(lit, varmap, width, rels, budget)
        steps.append(step.run)
        varmap, width = step.varmap, step.width
    project = head_projection(rule.head.args, varmap)

    def run(rows: list) -> set:
        for step in steps:
            if not rows:
                return set()
            rows = step(rows)
            if budget is not None:
                budget.check()
        return set(map(project, rows))
    return run


def _params_key(params: tuple, varmap: dict) -> Callable:
    positions = tuple(varmap[p] for p in params)
    return lambda r: tuple(r[i] for i in positions)


def _inline_negation(neg: Neg, varmap: dict, width: int, rels: Relations, budget) -> Step:
    params = neg.inline.params
    key = _params_key(params, varmap)
    goals = [_subgoal(rule, params, rels, budget) for rule in neg.inline.rules]

    def run(rows, _d=None):
        keys = list({key(r) for r in rows})
        holding: set = set()
        for goal in goals:
            holding |= goal(keys)
        return [r for r in rows if key(r) not in holding]
    return Step(run, varmap, width)


def _inline_aggregate(agg: Agg, varmap: dict, width: int, rels: Relations, budget) -> Step:
    params = agg.inline.params
    key = _params_key(params, varmap)
    goals = [_subgoal(rule, params, rels, budget) for rule in agg.inline.rules]
    position = {v: i for i, v in enumerate(agg.goal.args)}
    group = tuple(position[p] for p in params)
    template = term_getter(agg.template, position) if agg.template is not None else None
    default = EMPTY_AGGREGATE.get(agg.kind, MISSING)
    values: dict = {}
    bind = bind_result(agg.result, lambda r: values.get(key(r), default), varmap, width)

    def run(rows, _d=None):
        keys = list({key(r) for r in rows})
        members: dict = {}
        for goal in goals:
            for t in goal(keys):
                members.setdefault(tuple(t[i] for i in group), set()).add(t)
        values.clear()
        values.update((k, aggregate_value(agg.kind, list(m), template)) for k, m in members.items())
        return bind.run(rows)
    return Step(run, bind.varmap, bind.width)


class CompiledRule:
    """A rule ready to fire: optionally seeded from a delta at one body position."""

    def __init__(self, rule: Rule, rels: Relations, seed: int | None, budget) -> None:
        self.rule = rule
        self.seed = seed
        self.budget = budget
        size = rels.size
        bound: set = set() if seed is None else literal_vars(rule.body[seed])
        steps: list[Step] = []
        varmap: dict = {}
        width = 0
        order = order_body(rule, bound, size, skip=seed)
        if seed is not None:
            order = [seed] + order
        needed_after = []
        for k in range(len(order)):
            later = set(literal_vars(rule.head))
            for i in order[k + 1:]:
                later |= literal_vars(rule.body[i]) if not isinstance(rule.body[i], Agg) else (
                    set(rule.body[i].group) | set(variables(rule.body[i].result)))
            needed_after.append(later)
        for k, i in enumerate(order):
            lit = rule.body[i]
            if isinstance(lit, Lit):
                step = compile_positive(lit, varmap, width, rels, needed_after[k], seed=(k == 0 and seed is not None),
                                        once=seed is None)
            else:
                step = compile_filter(lit, varmap, width, rels, budget)
            steps.append(step)
            varmap, width = step.varmap, step.width
        self.project = head_projection(rule.head.args, varmap)
        self.seeded = seed is not None
        self.fused = None
        self.lookup = None  # (index get, row position) of a fused last step on one bound column
        if len(steps) > 1 and steps[-1].fuse is not None:
            self.fused = steps[-1].fuse
            self.lookup = steps[-1].lookup
            steps = steps[:-1]
        self.steps = [s.run for s in steps]
        # Seed straight into the fused join: the common shape of linear recursion.
        self.direct = self.seeded and self.fused is not None and len(steps) == 1 and steps[0].plain_seed
        self.sizes = [FIRST_SLICE] * (len(self.steps) + 1)  # rows per slice, per step (adapted as it runs)
        self.fanout = [-1.0] * (len(self.steps) + 1)  # output rows per input row in a step's last slice
        self.produced = 0

    def fire(self, delta=None, known: tuple = (), into: dict | None = None, code: int = 0) -> int:
        """Derive this rule's new head tuples (from `delta` at the seed position, when seeded) into
        `into` with provenance `code`, and say how many: new means in none of the `known` relations
        and not in `into` yet.

        Each step runs over its input in slices sized to take about SLICE_S, checking the budget
        after each, and every slice's output flows on to the next step, and its head tuples into
        `into`, before the following slice starts: no join builds more than a slice of rows at once,
        no set operation spans more than a slice (each one holds the interpreter lock, so the
        server's other threads wait for it), and a runaway join stops within a slice of a limit."""
        into = {} if into is None else into
        if self.direct and len(delta) <= FEW:
            # A few seeds (long chains run many such rounds): one fused join, none of the slicing.
            found = self.fused(delta, self.project)
            if len(found) == 1:
                t = found.pop()
                if t in into:
                    return 0
                for relation in known:
                    if t in relation:
                        return 0
                into[t] = code
                return 1
            for relation in known:
                if found:
                    found = found.difference(relation)
            if found and into:
                found = found.difference(into)
            if len(found) > FEW * 64:  # seeds that fan out widely: do it in slices after all
                delta = list(delta)
            else:
                into.update(dict.fromkeys(found, code))
                return len(found)
        self.produced = 0
        self.added = 0
        self.known = known
        self.into = into
        self.code = code
        self.room = self.budget.max_tuples - self.budget.derived
        try:
            if self.direct:
                self._push(1, delta)
            elif self.seeded:
                rows = self.steps[0]([()], delta)  # the delta's matches: tuples, not join rows
                if rows:
                    self._push(1, rows)
            else:
                self._push(0, [()])
        finally:
            self.known = self.into = ()  # type: ignore[assignment]
        return self.added

    def _count(self, rows: int) -> None:
        self.produced += rows
        self.budget.rows(self.produced)

    def _sink(self, found: set) -> None:
        """One slice's head tuples: keep the new ones."""
        for relation in self.known:
            if found:
                found = found.difference(relation)
        if found:
            into = self.into
            if into:
                found = found.difference(into)
            if len(found) > self.room - self.added:
                # The tuple budget ends inside this slice: stop at the first tuple over it.
                budget = self.budget
                raise budget.exceeded("tuples", f"evaluation derived more than {budget.max_tuples} tuples",
                                      budget.derived + self.room + 1)
            into.update(dict.fromkeys(found, self.code))
            self.added += len(found)
            self.budget.found = self.added
        self.budget.check()

    def _push(self, k: int, rows) -> None:
        last = k == len(self.steps)
        if last and self.fused is None:
            self._sink(set(map(self.project, rows)))
            return
        n = len(rows)
        size = self.sizes[k]
        run = self.fused if last else self.steps[k]
        i = 0
        while i < n:
            # Near a limit, slices shrink to what half the room left would take at the step's last
            # fan-out, so the limit is overshot by little more than one input row's output.
            left = (self.room - self.added) if last else (self.budget.max_rows - self.produced)
            fanout = self.fanout[k]
            if fanout < 0:  # not measured yet: a one-row slice measures it
                size = 1
            elif fanout * size > left / 2:
                size = max(1, int(left / 2 / fanout))
            if i == 0 and n <= size:
                part = rows
            else:
                if type(rows) is not list:  # a delta (dict) given whole when it seemed one slice
                    rows = list(rows)
                part = rows[i:i + size]
            i += size
            started = perf_counter()
            produced = run(part, self.project) if last else run(part)  # type: ignore[misc]
            elapsed = perf_counter() - started
            self.fanout[k] = len(produced) / len(part)
            if elapsed > SLICE_S:
                size = max(1, int(size * SLICE_S / elapsed))
            elif elapsed < SLICE_S / 4 and len(part) == size:
                size *= 2
            self.sizes[k] = size
            if last:
                self._sink(produced)
            else:
                if k:  # the first literal's matches are stored or derived tuples, not join rows
                    self._count(len(produced))
                else:
                    self.budget.check()
                if produced:
                    self._push(k + 1, produced)
