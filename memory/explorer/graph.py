"""The rule dependency graph as an SVG drawn on the server: predicates in layers (what a predicate is
computed from sits to its left), an arrow from each predicate a rule body calls to the rule's head.

A layered (Sugiyama-style) layout: a node's layer is the length of the longest chain of rules below it (a
cycle, from recursion, is cut where it closes); an edge spanning several layers gets a reserved slot in each
layer it crosses, so it runs through that slot and never under a box it does not connect; nodes and slots in a
layer are ordered by the mean position of what they connect to on the left. Every edge is a polyline whose
slanted parts lie in the gaps between columns and whose straight parts run through its own slots.
Negated calls (\\+, not) and calls inside aggregate_all are drawn differently, with a legend.
No script: the picture is text in the page, each node a link to that predicate's facts or answers."""

from __future__ import annotations

from dataclasses import dataclass

from ..datalog.program import BUILTIN_OPS
from ..terms import Compound, Term, parse_term
from .html import Markup, h, url

NODE_W, NODE_H, SLOT_H, GAP_X, GAP_Y, PAD, LOOP = 170, 30, 10, 80, 16, 12, 8
NOT_PREDICATES = set(BUILTIN_OPS) | {"!", "true", "fail", "false", "call"}
KINDS = ("positive", "negated", "aggregate")
CONTROL = {(",", 2), (";", 2), ("->", 2)}
NEGATION = {("\\+", 1), ("not", 1)}
DESCRIBE = {"positive": "uses", "negated": "uses under negation (\\+): holds while it does NOT",
            "aggregate": "counts or sums (aggregate_all)"}


@dataclass(frozen=True)
class Edge:
    source: str  # "name/arity" of a predicate the body calls
    target: str  # "name/arity" of the head
    kind: str = "positive"  # "negated": under \+ or not; "aggregate": inside aggregate_all


def _calls(body: Term) -> list[tuple[str | None, str, int, str]]:
    """(qualifier, name, arity, kind) of every predicate call in a body; a call under a negation is
    'negated' (even inside an aggregate), one inside aggregate_all (and not negated) 'aggregate'."""
    out = []
    stack: list[tuple[Term, str]] = [(body, "positive")]
    while stack:
        goal, kind = stack.pop()
        if type(goal) is Compound and (goal.functor, len(goal.args)) in CONTROL:
            stack.extend((g, kind) for g in reversed(goal.args))
            continue
        if type(goal) is Compound and (goal.functor, len(goal.args)) in NEGATION:
            stack.append((goal.args[0], "negated"))
            continue
        if type(goal) is Compound and goal.functor == "aggregate_all" and len(goal.args) == 3:
            stack.append((goal.args[1], "negated" if kind == "negated" else "aggregate"))
            continue
        qualifier = None
        if type(goal) is Compound and goal.functor == ":" and len(goal.args) == 2 and type(goal.args[0]) is str:
            qualifier, goal = goal.args
        if type(goal) is str:
            out.append((qualifier, goal, 0, kind))
        elif type(goal) is Compound:
            out.append((qualifier, goal.functor, len(goal.args), kind))
    return out


def rule_edges(rule_texts: list[str]) -> tuple[list[str], list[Edge]]:
    """Predicates and dependency edges of stored rules (texts as list_rules gives them)."""
    nodes: dict[str, None] = {}
    edges: dict[Edge, None] = {}
    for text in rule_texts:
        clause = parse_term(text)
        if not (type(clause) is Compound and clause.functor == ":-" and len(clause.args) == 2):
            continue
        head, body = clause.args
        target = f"{head.functor}/{len(head.args)}" if type(head) is Compound else f"{head}/0"
        nodes[target] = None
        for qualifier, name, arity, kind in _calls(body):
            if name in NOT_PREDICATES and qualifier is None:
                continue
            source = f"{qualifier + ':' if qualifier else ''}{name}/{arity}"
            nodes[source] = None
            edges[Edge(source, target, kind)] = None
    return list(nodes), list(edges)


def layers(nodes: list[str], edges: list[Edge]) -> dict[str, int]:
    """Longest-path layering over the graph with the edges that close a cycle removed (found by a DFS)."""
    deps: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        deps[e.target].append(e.source)
    layer: dict[str, int] = {}
    on_path: set[str] = set()
    for start in nodes:
        if start in layer:
            continue
        stack = [(start, iter(deps[start]))]
        on_path.add(start)
        while stack:
            node, pending = stack[-1]
            nxt = next(pending, None)
            if nxt is None:
                stack.pop()
                on_path.discard(node)
                layer[node] = max((layer[d] + 1 for d in deps[node] if d in layer), default=0)
            elif nxt not in layer and nxt not in on_path:
                on_path.add(nxt)
                stack.append((nxt, iter(deps[nxt])))
    return layer


@dataclass
class Route:
    """One edge laid out: the chain of items it visits from left to right (a node, its slots, a node)."""

    edge: Edge
    chain: list[object]  # node names at both ends, Slot objects between
    back: bool  # drawn right to left: recursion through another predicate


class Slot:
    """The place an edge reserves in a layer it crosses without a box of its own."""

    __slots__ = ()


@dataclass(frozen=True)
class Layout:
    boxes: dict[str, tuple[float, float]]  # node -> (x, y) of its box's top left corner
    paths: list[tuple[Edge, list[tuple[float, float]], bool]]  # edge, polyline points, drawn backwards
    width: float
    height: float


def layout(nodes: list[str], edges: list[Edge]) -> Layout:
    """Where each box goes and the polyline of each edge (see the module's note)."""
    layer = layers(nodes, edges)
    column: dict[object, int] = {n: k for n, k in layer.items()}
    routes: list[Route] = []
    for e in edges:
        if e.source == e.target:
            routes.append(Route(e, [e.source], False))
            continue
        back = layer[e.source] > layer[e.target]  # a cycle cut here: routed forwards, drawn backwards
        low, high = (e.target, e.source) if back else (e.source, e.target)
        slots = [Slot() for _ in range(layer[low] + 1, layer[high])]
        for i, s in enumerate(slots):
            column[s] = layer[low] + 1 + i
        routes.append(Route(e, [low, *slots, high], back))
    left: dict[object, list[object]] = {}  # item -> what it connects to one layer to its left
    for r in routes:
        for a, b in zip(r.chain, r.chain[1:]):
            left.setdefault(b, []).append(a)
    columns: dict[int, list[object]] = {}
    for item in sorted(column, key=lambda i: (column[i], 0 if isinstance(i, str) else 1, str(i)
                                                   if isinstance(i, str) else "")):
        columns.setdefault(column[item], []).append(item)
    rank: dict[object, float] = {}
    for col in sorted(columns):
        if col:  # barycentre ordering: near what it connects to, fewer crossings
            def centre(item: object) -> float:
                seen = [rank[a] for a in left.get(item, []) if a in rank]
                return sum(seen) / len(seen) if seen else 0.0
            columns[col].sort(key=lambda i: (centre(i), i if isinstance(i, str) else ""))
        for i, item in enumerate(columns[col]):
            rank[item] = i
    pos: dict[object, tuple[float, float]] = {}
    height = 0.0
    for col, items in columns.items():
        y = float(PAD)
        for item in items:
            pos[item] = (PAD + col * (NODE_W + GAP_X), y)
            y += (NODE_H if isinstance(item, str) else SLOT_H) + GAP_Y
        height = max(height, y - GAP_Y + PAD)
    width = PAD * 2 + (max(columns) + 1) * (NODE_W + GAP_X) - GAP_X

    def mid(item: object) -> float:
        return pos[item][1] + (NODE_H if isinstance(item, str) else SLOT_H) / 2

    # Ports: the edges leaving (entering) a box share its right (left) side, spread in the order of the other
    # end's height, so arrows into one box do not land on one point and do not cross at its side.
    outs: dict[str, list[tuple[float, int]]] = {}
    ins: dict[str, list[tuple[float, int]]] = {}
    for i, r in enumerate(routes):
        if len(r.chain) > 1:
            outs.setdefault(r.chain[0], []).append((mid(r.chain[1]), i))  # type: ignore[arg-type]
            ins.setdefault(r.chain[-1], []).append((mid(r.chain[-2]), i))  # type: ignore[arg-type]
    port: dict[tuple[int, str], float] = {}
    for side, table in (("out", outs), ("in", ins)):
        for node, users in table.items():
            users.sort()
            for k, (_, i) in enumerate(users):
                port[(i, side)] = pos[node][1] + NODE_H * (k + 1) / (len(users) + 1)
    paths = []
    for i, r in enumerate(routes):
        if len(r.chain) == 1:  # a rule calling its own head: a loop above its box, in the gap over it
            x, y = pos[r.chain[0]]
            points = [(x + NODE_W - 40, y), (x + NODE_W - 40, y - LOOP), (x + NODE_W - 12, y - LOOP),
                      (x + NODE_W - 12, y)]
            paths.append((r.edge, points, True))
            continue
        first, last = r.chain[0], r.chain[-1]
        points = [(pos[first][0] + NODE_W, port[(i, "out")])]
        for slot in r.chain[1:-1]:
            x, _ = pos[slot]
            points += [(x, mid(slot)), (x + NODE_W, mid(slot))]
        points.append((pos[last][0], port[(i, "in")]))
        if r.back:
            points.reverse()
        paths.append((r.edge, points, r.back))
    boxes = {n: pos[n] for n in nodes}
    return Layout(boxes, paths, width, height)


def _markers(prefix: str = "arrow") -> Markup:
    return h("defs", None, [h("marker", {"id": f"{prefix}-{kind}", "class": f"tip {kind}", "viewBox": "0 0 10 10",
                                         "refX": 10, "refY": 5, "markerWidth": 7, "markerHeight": 7,
                                         "orient": "auto-start-reverse"},
                              h("path", {"d": "M 0 0 L 10 5 L 0 10 z"})) for kind in KINDS])


def _number(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def dependency_svg(rule_texts: list[str], facts_link: str = "/facts", memory: str | None = None) -> Markup:
    nodes, edges = rule_edges(rule_texts)
    if not nodes:
        return Markup("")
    drawn = layout(nodes, edges)
    heads = {e.target for e in edges} | {n for n in nodes if not any(e.source == n for e in edges)}
    lines = []
    for e, points, back in drawn.paths:
        d = "M" + " L".join(f"{_number(x)},{_number(y)}" for x, y in points)
        what = f"{e.target} {DESCRIBE[e.kind]} {e.source}" + (" (recursion)" if back else "")
        lines.append(h("path", {"class": f"edge {e.kind}" + (" back" if back else ""), "d": d,
                                "marker-end": f"url(#arrow-{e.kind})", "data-source": e.source,
                                "data-target": e.target}, h("title", None, what)))
    boxes = []
    for n in nodes:
        x, y = drawn.boxes[n]
        name, _, arity = n.rpartition("/")
        label = n if len(n) <= 24 else n[:22] + "…"
        kind = "derived" if n in heads else "stored"
        boxes.append(h("a", {"href": url(facts_link, memory=memory, functor=name, arity=arity)},
                       h("rect", {"x": x, "y": y, "width": NODE_W, "height": NODE_H, "rx": 5, "class": kind,
                                  "data-node": n}),
                       h("text", {"x": x + NODE_W / 2, "y": y + NODE_H / 2 + 5, "text-anchor": "middle"}, label),
                       h("title", None, n, " (defined by rules)" if kind == "derived" else " (stored facts)")))
    return h("svg", {"class": "graph", "xmlns": "http://www.w3.org/2000/svg", "width": drawn.width,
                     "height": drawn.height, "viewBox": f"0 0 {drawn.width} {drawn.height}", "role": "img",
                     "aria-label": "rule dependency graph"},
             _markers(), h("g", {"class": "edges"}, lines), h("g", {"class": "nodes"}, boxes))


def legend() -> Markup:
    """What the graph's lines and boxes mean, drawn with the same classes as the graph."""
    def sample(kind: str) -> Markup:
        return h("svg", {"class": "sample", "width": 46, "height": 12, "viewBox": "0 0 46 12",
                         "xmlns": "http://www.w3.org/2000/svg", "aria-hidden": "true"},
                 _markers(f"legend-{kind}"),
                 h("path", {"class": f"edge {kind}", "d": "M2,6 L40,6", "marker-end": f"url(#legend-{kind}-{kind})"}))

    def box(kind: str) -> Markup:
        return h("svg", {"class": "sample", "width": 30, "height": 14, "viewBox": "0 0 30 14",
                         "aria-hidden": "true"}, h("rect", {"x": 1, "y": 1, "width": 28, "height": 12, "rx": 3,
                                                            "class": kind}))
    items = [(sample("positive"), "the rule's body calls it"),
             (sample("negated"), "called under negation (\\+ or not): the head holds while it does not"),
             (sample("aggregate"), "counted or summed by aggregate_all"),
             (box("derived"), "defined by rules: click for its derived answers"),
             (box("stored"), "stored facts only")]
    return h("ul", {"class": "legend"}, [h("li", None, s, " ", text) for s, text in items])
