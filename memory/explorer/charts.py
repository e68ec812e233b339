"""The Observations page's pictures, drawn on the server as SVG: activity over time (observations per hour or
per day) with detect's findings marked where they happened, and the entity graph (who was observed with what,
each line as thick as the number of observations the two shared).

Every label and title goes through the escaping builder (html.h), so an entity name holding markup stays
text; coordinates are numbers this module computes. No script."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone

from .html import Markup, h, join, url

HOUR, DAY = 3_600, 86_400
CHART_W, CHART_H, MARGIN_L, MARGIN_B, MARGIN_T = 920, 200, 44, 30, 34
MAX_BUCKETS = 1_500  # hourly bars over a longer record become daily ones
GRAPH_W, GRAPH_H, MAX_ENTITIES = 820, 560, 30


@dataclass(frozen=True)
class Mark:
    """A finding placed on the time axis: the span of its observations (start == end for one instant)."""

    pattern: str
    start: int
    end: int
    label: str
    uncertain: bool


def bucket_size(first: int, last: int, per: str | None) -> int:
    """Seconds per bar: as asked ('hour' or 'day'), else by the record's span (hours for up to three days)."""
    if per == "hour" and (last - first) // HOUR < MAX_BUCKETS:
        return HOUR
    if per in ("hour", "day"):
        return DAY
    return HOUR if last - first <= 3 * DAY else DAY


def _when(ts: int, size: int) -> str:
    moment = datetime.fromtimestamp(ts, timezone.utc)
    return moment.strftime("%Y-%m-%d %H:00") if size == HOUR else moment.strftime("%Y-%m-%d")


def finding_marks(findings: list[dict], time_of: dict[str, int]) -> list[Mark]:
    """Where each finding sits in time: its details' start and end (burst, convergence), else the span of the
    observations it cites (as far as they are known here)."""
    marks = []
    for f in findings:
        details = f.get("details", {})
        start, end = details.get("start"), details.get("end")
        if not (isinstance(start, int) and isinstance(end, int)):
            times = [time_of[t] for t in f.get("hedge_tags", []) if t in time_of]
            if not times:
                continue
            start, end = min(times), max(times)
        who = ", ".join(f.get("nodes", [])[:2])
        marks.append(Mark(f["pattern"], start, end, f"{f['pattern']}" + (f" ({who})" if who else ""),
                          bool(details.get("small_store"))))
    return marks


def activity_svg(times: list[int], flagged: set[int], marks: list[Mark], per: str | None) -> Markup:
    """Bars of observations per bucket (the ones holding a flagged observation coloured), findings drawn as
    shaded spans with their pattern named above."""
    if not times:
        return Markup("")
    first, last = min(times), max(times)
    size = bucket_size(first, last, per)
    start = first - first % size
    buckets = (last - start) // size + 1
    counts = Counter((t - start) // size for t in times)
    hot = {(t - start) // size for t in flagged}
    top = max(counts.values())
    plot_w, plot_h = CHART_W - MARGIN_L - 8, CHART_H - MARGIN_B - MARGIN_T
    bar = plot_w / buckets

    def x_of(ts: float) -> float:
        return MARGIN_L + (ts - start) / size * bar

    def y_of(count: float) -> float:
        return MARGIN_T + plot_h - count / top * plot_h

    bars = [h("rect", {"class": "bar flagged" if i in hot else "bar", "x": round(x_of(start + i * size), 2),
                       "y": round(y_of(c), 2), "width": round(max(bar - 0.5, 0.6), 2),
                       "height": round(plot_h - (y_of(c) - MARGIN_T), 2)},
                h("title", None, f"{_when(start + i * size, size)}: {c} observation(s)"
                                 + (" — includes flagged ones" if i in hot else "")))
            for i, c in sorted(counts.items())]
    spans = []
    for k, m in enumerate(marks):
        x1, x2 = x_of(m.start - m.start % size), x_of(m.end - m.end % size + size)
        spans.append(h("g", {"class": "mark"},
                       h("rect", {"class": "span", "x": round(x1, 2), "y": MARGIN_T, "width": round(x2 - x1, 2),
                                  "height": plot_h}),
                       h("line", {"class": "finding", "x1": round(x1, 2), "x2": round(x1, 2), "y1": MARGIN_T - 4,
                                  "y2": MARGIN_T + plot_h}),
                       h("text", {"class": "finding", "x": round(min(x1, CHART_W - 120), 2),
                                  "y": MARGIN_T - 4 - (k % 3) * 8}, m.pattern + ("?" if m.uncertain else "")),
                       h("title", None, f"{m.label}: {_when(m.start, size)} to {_when(m.end, size)}"
                                        + (" (store too small for this detector to be sure)" if m.uncertain
                                           else ""))))
    ticks = []
    step = max(1, buckets // 8)
    for i in range(0, buckets, step):
        x = x_of(start + i * size)
        if x > CHART_W - 60:  # no room for its label
            break
        ticks += [h("line", {"class": "tick", "x1": round(x, 2), "x2": round(x, 2), "y1": MARGIN_T + plot_h,
                             "y2": MARGIN_T + plot_h + 4}),
                  h("text", {"x": round(x, 2), "y": CHART_H - 10, "text-anchor": "middle"},
                    _when(start + i * size, size))]
    axes = [h("line", {"class": "axis", "x1": MARGIN_L, "x2": CHART_W - 8, "y1": MARGIN_T + plot_h,
                       "y2": MARGIN_T + plot_h}),
            h("line", {"class": "axis", "x1": MARGIN_L, "x2": MARGIN_L, "y1": MARGIN_T, "y2": MARGIN_T + plot_h}),
            h("text", {"x": 4, "y": MARGIN_T + 4}, top), h("text", {"x": 4, "y": MARGIN_T + plot_h}, 0)]
    unit = "hour" if size == HOUR else "day"
    return h("svg", {"class": "chart activity", "xmlns": "http://www.w3.org/2000/svg", "width": CHART_W,
                     "height": CHART_H, "viewBox": f"0 0 {CHART_W} {CHART_H}", "role": "img", "data-bucket": unit,
                     "aria-label": f"observations per {unit}"},
             h("g", {"class": "bars"}, bars), h("g", {"class": "marks"}, spans), h("g", {"class": "axes"}, axes, ticks))


def entity_edges(items: list[dict]) -> tuple[Counter, Counter]:
    """Observations per entity, and per pair of entities observed together (a pair as a sorted tuple)."""
    seen: Counter = Counter()
    pairs: Counter = Counter()
    for o in items:
        members = sorted(set(o["members"]))
        seen.update(members)
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                pairs[(a, b)] += 1
    return seen, pairs


def entity_svg(items: list[dict], flagged: set[str], focus: str | None = None) -> tuple[Markup, int]:
    """The entities most observed (at most MAX_ENTITIES; with `focus`, it and those observed with it) on a
    circle, a line between two observed together, as thick as how often. Returns the picture and how many
    entities were left out."""
    seen, pairs = entity_edges(items)
    if focus is not None:
        near = {a for pair in pairs for a in pair if focus in pair} | {focus}
        seen = Counter({e: c for e, c in seen.items() if e in near})
    shown = [e for e, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_ENTITIES]]
    if not shown:
        return Markup(""), 0
    if focus in shown:  # the focus in the middle, the others around it
        shown.remove(focus)
    centre, middle = GRAPH_W / 2, GRAPH_H / 2
    radius = GRAPH_H / 2 - 40
    place = {e: (centre + radius * math.cos(2 * math.pi * i / len(shown) - math.pi / 2),
                 middle + radius * math.sin(2 * math.pi * i / len(shown) - math.pi / 2))
             for i, e in enumerate(shown)}
    if focus is not None and focus in seen:
        place[focus] = (centre, middle)
    heaviest = max([c for (a, b), c in pairs.items() if a in place and b in place] or [1])
    lines = [h("line", {"x1": round(place[a][0], 1), "y1": round(place[a][1], 1), "x2": round(place[b][0], 1),
                        "y2": round(place[b][1], 1), "data-weight": c,
                        "stroke-width": round(0.8 + 5.2 * math.log1p(c) / math.log1p(heaviest), 2)},
                h("title", None, f"{a} with {b}: {c} observation(s)"))
             for (a, b), c in sorted(pairs.items()) if a in place and b in place]
    nodes = []
    for e, (x, y) in place.items():
        r = 4 + 10 * math.sqrt(seen[e] / max(seen.values()))
        anchor = "middle" if abs(x - centre) < 20 else ("start" if x > centre else "end")
        dx = 0 if anchor == "middle" else (r + 3 if x > centre else -r - 3)
        label = e if len(e) <= 28 else e[:26] + "…"
        nodes.append(h("a", {"href": url("/observations", entity=e)},
                       h("circle", {"cx": round(x, 1), "cy": round(y, 1), "r": round(r, 1),
                                    "class": "flagged" if e in flagged else None, "data-entity": e}),
                       h("text", {"x": round(x + dx, 1), "y": round(y + (r + 12 if anchor == "middle" else 4), 1),
                                  "text-anchor": anchor}, label),
                       h("title", None, f"{e}: {seen[e]} observation(s)" + (" — in a finding" if e in flagged else ""))))
    picture = h("svg", {"class": "entities", "xmlns": "http://www.w3.org/2000/svg", "width": GRAPH_W,
                        "height": GRAPH_H, "viewBox": f"0 0 {GRAPH_W} {GRAPH_H}", "role": "img",
                        "aria-label": "entities observed together"},
                h("g", {"class": "links"}, lines), h("g", {"class": "members"}, nodes))
    return picture, max(0, len(seen) - len(place))


def thresholds_table(thresholds: dict[str, dict]) -> Markup:
    """detect's thresholds, as its summary states them at the call's sensitivity."""
    rows = [h("tr", None, h("td", None, h("code", None, pattern)),
              h("td", None, join([h("code", None, f"{k}={v}"), " "] for k, v in sorted(values.items()))))
            for pattern, values in sorted(thresholds.items())]
    return h("table", {"class": "thresholds"},
             h("thead", None, h("tr", None, h("th", None, "pattern"), h("th", None, "must cross"))),
             h("tbody", None, rows))
