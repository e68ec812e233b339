"""Static checks: safety of every rule, the predicate dependency graph, and strata."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import InvalidProgram
from ..terms import Var
from . import builtin_table
# bound_variables lives with the program (normalization needs it for guards); imported from here as before.
from .program import (Agg, Builtin, Inline, Lit, Neg, Program, Rule, bound_variables, drop_guards, format_literal,
                      literal_dependencies, literal_vars)


def _var_names(vs) -> str:
    names = sorted({v.name for v in vs})
    return ", ".join(names)


def check_safety(rule: Rule, program: Program) -> None:
    text = program.sources[rule.source].text
    bound = bound_variables(rule.body)
    counts: dict[Var, int] = {}
    for part in (rule.head, *rule.body):
        for v in literal_vars(part):
            counts[v] = counts.get(v, 0) + 1
    for position, lit in enumerate(rule.body):
        if isinstance(lit, (Neg, Agg)):
            _check_order(rule, position, counts, bound, text)
        if isinstance(lit, Neg):
            shared = {v for v in literal_vars(lit) if counts.get(v, 0) > 1 and not v.anonymous}
            missing = shared - bound
            if missing:
                raise InvalidProgram(
                    f"unsafe rule: variable {_var_names(missing)} in negated goal {format_literal(lit)} "
                    f"is not bound by a positive body literal (rule: {text})",
                    rule=text, variables=sorted(v.name for v in missing),
                )
        elif isinstance(lit, Builtin):
            missing = builtin_table.unbound_inputs(lit, bound)
            if missing:
                what = builtin_table.BUILTINS[lit.op].inputs
                raise InvalidProgram(
                    f"unsafe rule: {what} {_var_names(missing)} in {format_literal(lit)} "
                    f"is not bound by a positive body literal (rule: {text})",
                    rule=text, variables=sorted(v.name for v in missing),
                )
        elif isinstance(lit, Agg):
            missing = set(lit.group) - bound
            if missing:
                raise InvalidProgram(
                    f"unsafe rule: variable {_var_names(missing)} shared with an aggregate goal "
                    f"is not bound by a positive body literal (rule: {text})",
                    rule=text, variables=sorted(v.name for v in missing),
                )
    # Checked last: an unbound input (say `Y is X + Z`) is the cause, the head the symptom.
    head_unbound = literal_vars(rule.head) - bound
    if head_unbound:
        raise InvalidProgram(
            f"unsafe rule: head variable {_var_names(head_unbound)} is not bound by a positive body literal (rule: {text})",
            rule=text, variables=sorted(v.name for v in head_unbound),
        )


def _check_order(rule: Rule, position: int, counts: dict, bound: set, text: str) -> None:
    """Refuse a negation or aggregate that shares a variable the body binds only after it.

    Prolog runs a body left to right: in `\\+ r(X), p(X, Y)` X is unbound when the negation runs, so it
    is local to it (the negation fails if any r exists), while a set-at-a-time reading would bind X first.
    Rather than pick one meaning silently, such a rule is refused: bind the variable before the negation or
    aggregate, or rename it to make it local."""
    lit = rule.body[position]
    shared = literal_vars(lit) if isinstance(lit, Neg) else set(lit.group)
    shared = {v for v in shared if counts.get(v, 0) > 1 and not v.anonymous}
    late = (shared & bound) - bound_variables(rule.body[:position])
    if late:
        what = "negated goal" if isinstance(lit, Neg) else "aggregate"
        raise InvalidProgram(
            f"order-dependent rule: variable {_var_names(late)} of the {what} {format_literal(lit)} is bound only "
            f"by a literal after it; Prolog reads it as local to the {what} there, a set-based reading as bound: "
            f"move the {what} after the literal that binds {_var_names(late)}, or rename the variable inside it "
            f"(rule: {text})",
            rule=text, variables=sorted(v.name for v in late),
        )


@dataclass
class Strata:
    """Strongly connected components of the dependency graph, dependencies first."""

    components: list[list]  # each a list of predicate keys
    recursive: list[bool]


def dependency_graph(rules: list[Rule]) -> dict:
    """pred -> list of (body pred, negative?, rule)."""
    graph: dict = {}
    for rule in rules:
        edges = graph.setdefault(rule.head.pred, [])
        for lit in rule.body:
            for dependency in literal_dependencies(lit):
                edges.append((*dependency, rule))
    return graph


def _tarjan(nodes: list, graph: dict) -> list[list]:
    """Iterative Tarjan; components come out in reverse topological order (dependencies first)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    out: list[list] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter([e[0] for e in graph.get(root, ())]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for succ in it:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter([e[0] for e in graph.get(succ, ())])))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(component)
    return out




def stratify(program: Program, rules: list[Rule] | None = None, repair: bool = False) -> Strata:
    """The evaluation order of `rules` (the program's by default). With `repair` (when `analyze` checks a
    program), an auxiliary's guard that closes a cycle through negation is dropped or the auxiliary made
    inline, changing the program's rules; other callers pass rules derived from an analyzed program, which
    share its rule objects, and get the error."""
    rules = program.rules if rules is None else rules
    graph = dependency_graph(rules)
    nodes = list(graph)
    for edges in list(graph.values()):
        for target, _, _ in edges:
            if target not in graph:
                nodes.append(target)
    components = _tarjan(nodes, graph)
    where = {pred: i for i, comp in enumerate(components) for pred in comp}
    recursive = []
    for i, comp in enumerate(components):
        is_recursive = len(comp) > 1
        for pred in comp:
            for target, negative, rule in graph.get(pred, ()):
                if where[target] != i:
                    continue
                is_recursive = True
                if negative:
                    if repair and (_unguard(target, graph, set(comp))
                                   or _inline(target, graph, set(comp), program, rules)):
                        return stratify(program, rules, repair)  # a guard closed the cycle; it can do without
                    cycle = " -> ".join(str(p) for p in _cycle(pred, target, graph, set(comp)))
                    text = program.sources[rule.source].text
                    raise InvalidProgram(
                        f"program is not stratified: {str(pred)} depends on itself through negation "
                        f"or aggregation (cycle {cycle}; rule: {text})",
                        rule=text, cycle=cycle,
                    )
        recursive.append(is_recursive)
    return Strata(components, recursive)


def _unguard(target, graph: dict, members: set) -> bool:
    """Drop the guard literals of `target`'s auxiliary rules that are recursive with the cycle, where the other
    guards bind what they were for; whether any was dropped."""
    dropped = False
    for _, _, inner in graph.get(target, ()):
        if inner.guards:
            dropped |= drop_guards(inner, lambda g: isinstance(g, Lit) and g.pred in members)
    return dropped


def _inline(target, graph: dict, members: set, program: Program, rules: list) -> bool:
    """Evaluate `target`, an auxiliary predicate whose guards are recursive with the cycle, per caller row
    instead (see `program.Inline`): its rules lose their guards and leave the program, and the caller's
    negation or aggregate runs them with the variables it shares bound. Whether it did."""
    aux_rules = [r for r in rules if r.head.pred is target]
    if not aux_rules or not any(isinstance(g, Lit) and g.pred in members for r in aux_rules for g in r.guards):
        return False
    for r in aux_rules:
        r.body = r.body[len(r.guards):]
        r.guards, r.guarded = (), frozenset()
    for caller in _with_inline_rules(rules):
        body = list(caller.body)
        for i, lit in enumerate(body):
            if isinstance(lit, Neg) and lit.lit.pred is target:
                body[i] = replace(lit, inline=Inline(tuple(lit.lit.args), tuple(aux_rules)))
            elif isinstance(lit, Agg) and lit.goal.pred is target:
                body[i] = replace(lit, inline=Inline(tuple(lit.group), tuple(aux_rules)))
        caller.body = tuple(body)
    for group in {id(rules): rules, id(program.rules): program.rules}.values():
        group[:] = [r for r in group if r.head.pred is not target]
    return True


def _with_inline_rules(rules: list) -> list:
    """The rules and the rules of every inline negation or aggregate in them, nested ones included."""
    out, stack = [], list(rules)
    while stack:
        rule = stack.pop()
        out.append(rule)
        for lit in rule.body:
            if isinstance(lit, (Neg, Agg)) and lit.inline is not None:
                stack.extend(lit.inline.rules)
    return out


def _cycle(start, through, graph: dict, members: set) -> list:
    """A path start -> through -> ... -> start inside one component, for the error message."""
    paths = {through: [start, through]}
    queue = [through]
    while queue:
        node = queue.pop(0)
        if node == start:
            return paths[node]
        for target, _, _ in graph.get(node, ()):
            if target in members and target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    return [start, through, start]


def analyze(program: Program) -> Strata:
    """Reject unsafe or unstratifiable programs; return the evaluation order."""
    for rule in program.rules:
        check_safety(rule, program)
    return stratify(program, repair=True)
