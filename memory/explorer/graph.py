"""The rule dependency graph as an SVG drawn on the server: predicates in layers (what a predicate is
computed from sits to its left), an arrow from each predicate a rule body calls to the rule's head.

A plain layered layout: a node's layer is the length of the longest chain of rules below it (a cycle, from
recursion, is cut where it closes), nodes in a layer are ordered by the mean row of what they depend on.
No script: the picture is text in the page, each node a link to that predicate's facts."""

from __future__ import annotations

from dataclasses import dataclass

from ..datalog.program import BUILTIN_OPS
from ..knowledge.goals import goals
from ..terms import Compound, parse_term
from .html import Markup, h, url

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 170, 30, 70, 16, 12
NOT_PREDICATES = set(BUILTIN_OPS) | {"!", "true", "fail", "false", "call"}


@dataclass(frozen=True)
class Edge:
    source: str  # "name/arity" of a predicate the body calls
    target: str  # "name/arity" of the head


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
        for ref in goals(body):
            if ref.name in NOT_PREDICATES and ref.qualifier is None:
                continue
            source = f"{ref.qualifier + ':' if ref.qualifier else ''}{ref.name}/{ref.arity}"
            nodes[source] = None
            edges[Edge(source, target)] = None
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


def dependency_svg(rule_texts: list[str], facts_link: str = "/facts") -> Markup:
    nodes, edges = rule_edges(rule_texts)
    if not nodes:
        return Markup("")
    layer = layers(nodes, edges)
    columns: dict[int, list[str]] = {}
    for n in sorted(nodes, key=lambda n: (layer[n], n)):
        columns.setdefault(layer[n], []).append(n)
    row: dict[str, float] = {}
    for col in sorted(columns):
        if col:  # barycentre ordering: near what it depends on, fewer crossings
            def centre(n: str) -> float:
                below = [row[e.source] for e in edges if e.target == n and e.source in row]
                return sum(below) / len(below) if below else 0.0
            columns[col].sort(key=lambda n: (centre(n), n))
        for i, n in enumerate(columns[col]):
            row[n] = i
    pos = {n: (PAD + layer[n] * (NODE_W + GAP_X), PAD + row[n] * (NODE_H + GAP_Y)) for n in nodes}
    width = PAD * 2 + (max(columns) + 1) * (NODE_W + GAP_X) - GAP_X
    height = PAD * 2 + max(len(c) for c in columns.values()) * (NODE_H + GAP_Y) - GAP_Y
    lines = []
    for e in edges:
        (x1, y1), (x2, y2) = pos[e.source], pos[e.target]
        if e.source == e.target or layer[e.source] >= layer[e.target]:  # recursion: a loop drawn above the node
            lines.append(h("path", {"class": "back", "marker-end": "url(#arrow)",
                                    "d": f"M{x1 + NODE_W * 0.7},{y1} C{x1 + NODE_W * 0.7},{y1 - 14} "
                                         f"{x2 + NODE_W * 0.3},{y2 - 14} {x2 + NODE_W * 0.3},{y2}"}))
        else:
            lines.append(h("line", {"x1": x1 + NODE_W, "y1": y1 + NODE_H / 2, "x2": x2 - 4, "y2": y2 + NODE_H / 2,
                                    "marker-end": "url(#arrow)"}, h("title", None, f"{e.target} uses {e.source}")))
    boxes = []
    for n in nodes:
        x, y = pos[n]
        name, _, arity = n.rpartition("/")
        label = n if len(n) <= 24 else n[:22] + "…"
        boxes.append(h("a", {"href": url(facts_link, functor=name, arity=arity)},
                       h("rect", {"x": x, "y": y, "width": NODE_W, "height": NODE_H, "rx": 5}),
                       h("text", {"x": x + NODE_W / 2, "y": y + NODE_H / 2 + 5, "text-anchor": "middle"}, label),
                       h("title", None, n)))
    marker = h("defs", None, h("marker", {"id": "arrow", "viewBox": "0 0 10 10", "refX": 10, "refY": 5,
                                          "markerWidth": 7, "markerHeight": 7, "orient": "auto-start-reverse"},
                               h("path", {"d": "M 0 0 L 10 5 L 0 10 z"})))
    return h("svg", {"class": "graph", "xmlns": "http://www.w3.org/2000/svg", "width": width, "height": height,
                     "viewBox": f"0 0 {width} {height}", "role": "img",
                     "aria-label": "rule dependency graph"},
             marker, h("g", {"class": "edges"}, lines), h("g", {"class": "nodes"}, boxes))
