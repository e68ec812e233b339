"""Pattern detection over all observations: structural and temporal anomalies, each tied to its edges.

Baselines are per peer group (entities of one type) and robust to heavy tails, because real
activity is Zipf-like: a few accounts and hosts do most of the work, and that is not an anomaly.
An entity is an outlier only when it stands out on a log scale (robust z of log(count) against
the median and MAD of its peers) *and* above the power-law tail its peers draw: a least-squares
line through log(count) against log(rank) over the peers just below it, extrapolated to its rank
(the "tail excess" is count / extrapolated count; 1 on clean Zipf data).

Fast pass:
- hub: an entity with far more observations than its peers of the same type
  (log-scale robust z ≥ 5, tail excess ≥ 1.75 and degree ≥ 20);
- burst: an entity (or the whole store) with many observations inside one hour against what
  the same hour holds on the other weekdays (or weekend days) of the record, so a daily peak
  is no burst: count ≥ 15 and z = (count − mean)/√max(mean, variance) ≥ 8 (the flat rate
  when the record has fewer than three such days; a window's scan reads the rhythm from the
  four weeks before it too);
- dense_cluster: ≥ 4 entities whose pairs each co-occur ≥ 3 times, with ≥ 60 % of the
  possible pairs present;
- fan_out: an entity linked to far more distinct other entities than its peers
  (log-scale robust z ≥ 8, tail excess ≥ 2 and ≥ 20 distinct);
- convergence: two or more entities of one type, each in its own observation, meeting a
  rarely observed entity (≤ 10 observations in all, at least half of them in the meeting)
  within ten minutes (drones converging on a quiet sector); the entity must also be quiet for
  its peers (log-scale robust z ≤ −3; with fewer than 5 peers there is no baseline and any
  such entity qualifies), since in heavy-tailed data most entities are rarely observed;
- spectral: entities carrying ≥ 2 % of the co-occurrence graph's principal eigenvector
  and ≥ 4 times the share their degree explains (a dense core beyond degree, EigenSpokes-style).
With full_scan:
- lateral_movement: time-respecting chains of ≥ 3 host-to-host hops (AUTH_EVENT
  observations with two hosts: source, then destination), each hop within one hour of the last;
  or, as real logs record it, one login observation per host: an account logging in to ≥ 4
  hosts in a row, each new to it and within one hour of the last, at a pace its own rate makes
  unlikely (Poisson tail ≤ 1e-6);
- beaconing: an entity pair seen ≥ 8 times at regular intervals: at least 80 % of the
  intervals within 10 % of their median (random arrivals almost never line up so). A pair on
  a daily or weekly schedule (1 to 7 days, within 5 %) since the first quarter of the record is
  a job such as a nightly backup: listed under `scheduled`, not as a finding; a new one is
  beaconing.

Every finding's details carry the thresholds its pattern must cross (`threshold`), and
`summary.thresholds` states them all at the call's sensitivity.

Per call:
- window: only observations inside a time window (recall's phrases: "last 7 days",
  "in May 2026", "between … and …"), relative to `now`; the whole window text must parse;
- sensitivity in [0.25, 4] (default 1): the z thresholds (hub, fan_out, burst, convergence's
  quietness) are divided by
  it, and so are the excess over 1 that hub, fan_out and spectral require; beaconing's tolerance
  is multiplied by it. Above 1 finds more, below 1 fewer. Minimum counts do not change.

risk_score = 1 − Π(1 − w·score) over the findings (noisy-OR), with weights
hub 0.3, burst 0.4, dense_cluster 0.5, fan_out 0.4, convergence 0.6, spectral 0.3,
lateral_movement 0.8, beaconing 0.7."""

from __future__ import annotations

import bisect
import math
import statistics
import time
from collections import defaultdict

from ..errors import InvalidArguments
from ..store.repository import Transaction
from .limits import SENSITIVITY_RANGE
from .observations import hedge_tag
from .recall import check_now
from .timewindow import Window, parse_window

# A hub must stand out on a log scale and above its peers' power-law tail. The tail excess, not the z, is what
# keeps heavy-tailed data quiet (its top entities reach z 7 with excess ≤ 1.4); z 5 and excess 1.75 find a
# host 70 accounts log in to among 400 ordinary observations (z 5.9, excess 1.96), the reference's example.
HUB_Z, HUB_MIN, HUB_EXCESS = 5.0, 20, 1.75
TAIL_EXCESS, TAIL_FIT = 2.0, 0.25  # fit the tail over the next quarter of the peers (at least MIN_PEERS)
BURST_WINDOW, BURST_MIN, BURST_Z = 3_600, 15, 8.0
DAY, SEASON_MIN_DAYS, HISTORY = 86_400, 3, 28 * 86_400
PAIR_MAX_MEMBERS, STRONG_PAIR, CLUSTER_MIN, CLUSTER_DENSITY = 10, 3, 4, 0.6
FAN_Z, FAN_MIN = 8.0, 20
SPECTRAL_MASS, SPECTRAL_RATIO, SPECTRAL_ITERATIONS = 0.02, 4.0, 40
HOP_WINDOW, CHAIN_MIN_HOPS, CHAIN_MAX_HOPS, CHAIN_STEPS_PER_START, MAX_CHAINS = 3_600, 3, 12, 200, 50
BEACON_MIN, BEACON_DISPERSION, BEACON_SHARE = 8, 0.10, 0.8
SCHEDULE_SLACK, SCHEDULE_ESTABLISHED = 0.05, 0.25
LATERAL_P = 1e-6
MIN_PEERS = 5
MAX_TAGS = 25
CONVERGE_WINDOW, CONVERGE_MAX_DEGREE, CONVERGE_SHARE, CONVERGE_QUIET_Z = 600, 10, 0.5, 3.0
WEIGHTS = {"hub": 0.3, "burst": 0.4, "dense_cluster": 0.5, "fan_out": 0.4, "convergence": 0.6, "spectral": 0.3,
           "lateral_movement": 0.8, "beaconing": 0.7}
HOST_TYPES = ("host", "machine")


class Graph:
    """Observations loaded once: edge times and members, entity names and types."""

    def __init__(self, tx: Transaction, window: Window | None = None) -> None:
        self.ts: dict[int, int] = {}
        self.formation: dict[int, str] = {}
        scans = tx.observation_scans
        start, end = (window.start, window.end) if window is not None else (None, None)
        for edge_id, ts, formation in scans.times(start, end):
            self.ts[edge_id] = ts
            self.formation[edge_id] = formation
        self.members: dict[int, list[int]] = defaultdict(list)
        for edge_id, entity in scans.members():
            if edge_id in self.ts:  # retracted observations are left out
                self.members[edge_id].append(entity)
        self.name: dict[int, str] = {}
        self.type: dict[int, str] = {}
        for entity, name, kind in tx.entities.all():
            self.name[entity] = name
            self.type[entity] = kind
        self.edges_of: dict[int, list[int]] = defaultdict(list)
        for edge_id, members in self.members.items():
            for m in members:
                self.edges_of[m].append(edge_id)
        # The weeks before a window, for the daily and weekly rhythm a burst is measured against: a scan of the
        # last two days still knows what an ordinary weekday 10:00 holds.
        self.history_all: list[int] = []
        self.history_of: dict[int, list[int]] = defaultdict(list)
        if window is not None and window.start is not None:
            since = (window.start - HISTORY, window.start)
            self.history_all = scans.event_times(*since)
            for ts, entity in scans.member_times(*since):
                self.history_of[entity].append(ts)

    def tags(self, edge_ids) -> tuple[list[str], int]:
        ids = sorted(set(edge_ids), key=lambda e: (-self.ts[e], e))
        return [hedge_tag(e) for e in ids[:MAX_TAGS]], len(ids)


def robust_z(values: dict[int, float], groups: dict[int, str]) -> dict[int, float]:
    """(x − median) / (1.4826·MAD) within each group of peers; groups with fewer than MIN_PEERS get none."""
    by_group: dict[str, list[int]] = defaultdict(list)
    for key in values:
        by_group[groups[key]].append(key)
    out = {}
    for keys in by_group.values():
        if len(keys) < MIN_PEERS:
            continue
        xs = [values[k] for k in keys]
        median = statistics.median(xs)
        mad = statistics.median(abs(x - median) for x in xs) * 1.4826
        spread = mad if mad > 0 else max(1.0, statistics.pstdev(xs))
        for k in keys:
            out[k] = (values[k] - median) / spread
    return out


def _fit_line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares (intercept, slope) through (x, y) points."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - slope * mx, slope


def outliers(values: dict[int, float], groups: dict[int, str], z_min: float, excess_min: float,
             minimum: float) -> dict[int, tuple[float, float]]:
    """Entities far above their peers on a heavy-tailed scale: key -> (log-scale robust z, tail excess).

    Log scale, because activity counts are heavy-tailed; tail excess, because on a log scale the top
    of a Zipf group still stands out from the median, but not from the power law its peers follow."""
    logs = {k: math.log(v) for k, v in values.items() if v > 0}
    z = robust_z(logs, groups)
    by_group: dict[str, list[int]] = defaultdict(list)
    for key in z:
        by_group[groups[key]].append(key)
    out = {}
    for keys in by_group.values():
        ranked = sorted(keys, key=lambda k: -values[k])
        candidates = [k for k in ranked if z[k] >= z_min and values[k] >= minimum]
        if not candidates:
            continue
        below = [k for k in ranked if k not in set(candidates)]  # the peers the tail is fitted on
        first = ranked.index(below[0]) + 1 if below else len(ranked) + 1
        span = max(MIN_PEERS, int(len(ranked) * TAIL_FIT))
        points = [(math.log(first + i), logs[k]) for i, k in enumerate(below[:span])]
        if len(points) < 2:
            continue
        intercept, slope = _fit_line(points)
        for k in candidates:
            expected = math.exp(intercept + slope * math.log(ranked.index(k) + 1))
            excess = values[k] / max(expected, 1e-12)
            if excess >= excess_min:
                out[k] = (z[k], excess)
    return out


def _finding(g: Graph, pattern: str, score: float, nodes: list[int], edges, **details) -> dict:
    tags, count = g.tags(edges)
    return {"pattern": pattern, "score": round(min(1.0, max(0.0, score)), 4), "nodes": [g.name[n] for n in nodes],
            "hedge_tags": tags, "edge_count": count, "details": details}


def hubs(g: Graph, sensitivity: float = 1.0) -> list[dict]:
    degree = {e: len(edges) for e, edges in g.edges_of.items()}
    found = outliers(degree, g.type, HUB_Z / sensitivity, 1 + (HUB_EXCESS - 1) / sensitivity, HUB_MIN)
    return [_finding(g, "hub", zz / (zz + HUB_Z), [e], g.edges_of[e], degree=degree[e], z=round(zz, 2),
                     tail_excess=round(excess, 2)) for e, (zz, excess) in found.items()]


def _day_kind(ts: int) -> int:
    """1 on a weekend (Saturday, Sunday, UTC), 0 on a weekday: activity follows the week as well as the day."""
    return 1 if (ts // DAY + 3) % 7 >= 5 else 0  # 1970-01-01 was a Thursday


def _seasonal(times: list[int], start: int, first: int, last: int) -> list[int]:
    """The counts in [start, start + BURST_WINDOW) moved by whole days onto every other day of the same kind
    (weekday or weekend) inside [first, last]: what this hour of the day usually holds."""
    counts = []
    for k in range((first - start) // DAY, (last - start) // DAY + 1):
        moved = start + k * DAY
        if k == 0 or moved < first - DAY or moved > last or _day_kind(moved) != _day_kind(start):
            continue
        counts.append(bisect.bisect_left(times, moved + BURST_WINDOW) - bisect.bisect_left(times, moved))
    return counts


def _burst_z(count: int, usual: list[int], flat: float) -> tuple[float, float]:
    """(z, expected) of a window's count against the same hour on comparable days (mean and spread, since
    real days differ), or against the flat rate when there are too few such days to know the rhythm."""
    if len(usual) < SEASON_MIN_DAYS:
        return (count - flat) / math.sqrt(max(flat, 1.0)), flat
    mean = sum(usual) / len(usual)
    variance = sum((c - mean) ** 2 for c in usual) / len(usual)
    return (count - mean) / math.sqrt(max(mean, variance, 1.0)), mean


def bursts(g: Graph, sensitivity: float = 1.0) -> list[dict]:
    """Hours with far more observations than the same hour usually holds (the store's and the entity's own
    daily and weekly rhythm: a busy 10:00 on a weekday is no burst), or than the flat rate on a short record."""
    if not g.ts:
        return []
    first, last = min(g.ts.values()), max(g.ts.values())
    span = max(BURST_WINDOW, last - first + 1)
    out = []
    series = {e: edges for e, edges in g.edges_of.items() if len(edges) >= BURST_MIN}
    series[-1] = list(g.ts)  # the store as a whole
    threshold = BURST_Z / sensitivity
    for entity, edges in series.items():
        ordered = sorted(edges, key=lambda e: g.ts[e])
        times = [g.ts[e] for e in ordered]
        flat = len(times) * BURST_WINDOW / span
        past = g.history_all if entity < 0 else g.history_of.get(entity, [])
        rhythm = past + times  # the weeks before a window come first: still in time order
        since = rhythm[0]
        best = None
        hi = 0
        for lo, t in enumerate(times):
            hi = max(hi, lo)
            while hi < len(times) and times[hi] - t < BURST_WINDOW:
                hi += 1
            count = hi - lo
            if count < BURST_MIN or (count - flat) / math.sqrt(max(flat, 1.0)) < threshold:
                continue  # not even above the flat rate: the rhythm cannot make it a burst
            z, expected = _burst_z(count, _seasonal(rhythm, t, min(first, since), last), flat)
            if best is None or z > best[0]:
                best = (z, expected, count, lo, hi)
        if best is None or best[0] < threshold:
            continue
        z, expected, count, lo, hi = best
        nodes = [entity] if entity >= 0 else []
        finding = _finding(g, "burst", z / (z + BURST_Z), nodes, ordered[lo:hi], count=count,
                           expected=round(expected, 3), z=round(z, 2), start=times[lo], end=times[hi - 1])
        if entity < 0:
            finding["details"]["scope"] = "all observations"
        out.append(finding)
    return out


def pair_counts(g: Graph) -> dict[tuple[int, int], list[int]]:
    pairs: dict[tuple[int, int], list[int]] = defaultdict(list)
    for edge_id, members in g.members.items():
        if len(members) > PAIR_MAX_MEMBERS:
            continue
        ms = sorted(set(members))
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                pairs[(a, b)].append(edge_id)
    return pairs


def dense_clusters(g: Graph, pairs: dict) -> list[dict]:
    strong: dict[int, set[int]] = defaultdict(set)
    for (a, b), edges in pairs.items():
        if len(edges) >= STRONG_PAIR:
            strong[a].add(b)
            strong[b].add(a)
    seen: set[int] = set()
    out = []
    for start in strong:
        if start in seen:
            continue
        component, stack = [], [start]
        seen.add(start)
        while stack:
            node = stack.pop()
            component.append(node)
            for other in strong[node]:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        n = len(component)
        if n < CLUSTER_MIN:
            continue
        links = sum(len(strong[v]) for v in component) // 2
        density = links / (n * (n - 1) / 2)
        if density >= CLUSTER_DENSITY:
            ordered = sorted(component)
            edges = [e for i, a in enumerate(ordered) for b in ordered[i + 1:] for e in pairs.get((a, b), ())]
            out.append(_finding(g, "dense_cluster", density * min(1.0, n / 6), sorted(component), edges,
                                size=n, density=round(density, 3), strong_pairs=links))
    return out


def fan_out(g: Graph, sensitivity: float = 1.0) -> list[dict]:
    neighbours: dict[int, set[int]] = defaultdict(set)
    for members in g.members.values():
        if len(members) > PAIR_MAX_MEMBERS:
            continue
        for a in members:
            for b in members:
                if a != b and g.type[a] != g.type[b]:
                    neighbours[a].add(b)
    distinct = {e: len(n) for e, n in neighbours.items()}
    found = outliers(distinct, g.type, FAN_Z / sensitivity, 1 + (TAIL_EXCESS - 1) / sensitivity, FAN_MIN)
    return [_finding(g, "fan_out", zz / (zz + FAN_Z), [e], g.edges_of[e], distinct_targets=distinct[e],
                     z=round(zz, 2), tail_excess=round(excess, 2)) for e, (zz, excess) in found.items()]


def convergence(g: Graph, sensitivity: float = 1.0) -> list[dict]:
    out = []
    degree = {e: len(edges) for e, edges in g.edges_of.items()}
    quietness = robust_z({e: math.log(d) for e, d in degree.items()}, g.type)
    for target, edges in g.edges_of.items():
        if len(edges) > CONVERGE_MAX_DEGREE or quietness.get(target, -math.inf) > -CONVERGE_QUIET_Z / sensitivity:
            continue  # not quiet, or no quieter than its peers usually are (heavy-tailed data has many such)
        by_type: dict[str, list] = defaultdict(list)
        for e in edges:  # one agent per observation: several of a type in one observation are not a meeting
            per_type: dict[str, list] = defaultdict(list)
            for m in g.members[e]:
                if m != target:
                    per_type[g.type[m]].append(m)
            for kind, agents in per_type.items():
                if len(agents) == 1:
                    by_type[kind].append((g.ts[e], agents[0], e))
        for seq in by_type.values():
            seq.sort()
        for kind, seq in sorted(by_type.items()):
            if kind == g.type[target]:
                continue
            best: list = []
            lo = 0
            for hi in range(len(seq)):
                while seq[hi][0] - seq[lo][0] > CONVERGE_WINDOW:
                    lo += 1
                if len({v[1] for v in seq[lo:hi + 1]}) > len({v[1] for v in best}):
                    best = seq[lo:hi + 1]
            agents = sorted({v[1] for v in best}, key=lambda a: g.name[a])
            if len(agents) >= 2 and len({v[2] for v in best}) >= CONVERGE_SHARE * len(edges):
                out.append(_finding(g, "convergence", 1 - 0.5 ** (len(agents) - 1), [target, *agents],
                                    [v[2] for v in best], type=kind, start=best[0][0], end=best[-1][0]))
    return out


def spectral(g: Graph, pairs: dict, sensitivity: float = 1.0) -> list[dict]:
    if not pairs:
        return []
    index: dict[int, int] = {}
    for a, b in pairs:
        index.setdefault(a, len(index))
        index.setdefault(b, len(index))
    n = len(index)
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for (a, b), edges in pairs.items():
        i, j, w = index[a], index[b], len(edges)
        adjacency[i].append((j, w))
        adjacency[j].append((i, w))
    degree = [sum(w for _, w in row) for row in adjacency]
    shift = sum(degree) / n  # A + cI: same eigenvectors, no oscillation on bipartite graphs
    vector = [1.0 / math.sqrt(n)] * n
    for _ in range(SPECTRAL_ITERATIONS):
        new = [shift * vector[i] + sum(w * vector[j] for j, w in row) for i, row in enumerate(adjacency)]
        norm = math.sqrt(sum(x * x for x in new)) or 1.0
        vector = [x / norm for x in new]
    degree_norm = math.sqrt(sum(d * d for d in degree)) or 1.0
    entity = {i: e for e, i in index.items()}
    out = []
    for i, x in enumerate(vector):
        mass = x * x
        if mass < SPECTRAL_MASS:
            continue
        ratio = abs(x) / max(degree[i] / degree_norm, 1e-12)
        if ratio >= 1 + (SPECTRAL_RATIO - 1) / sensitivity:
            e = entity[i]
            out.append(_finding(g, "spectral", 1 - math.exp(-(ratio - 1) / SPECTRAL_RATIO), [e], g.edges_of[e],
                                eigenvector_mass=round(mass, 4), ratio_to_degree=round(ratio, 2)))
    return out


def lateral_movement(g: Graph) -> list[dict]:
    hops_from: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # source host -> (ts, dest, edge)
    for edge_id, members in g.members.items():
        if g.formation[edge_id] != "AUTH_EVENT":
            continue
        hosts = [m for m in members if g.type[m] in HOST_TYPES]
        if len(hosts) >= 2 and hosts[0] != hosts[1]:
            hops_from[hosts[0]].append((g.ts[edge_id], hosts[1], edge_id))
    for hops in hops_from.values():
        hops.sort()
    chains: list[list[tuple[int, int, int, int]]] = []  # per start, its longest chain: (ts, source, dest, edge)
    for source, hops in hops_from.items():
        for ts, dest, edge in hops:
            longest = _longest_chain(hops_from, [(ts, source, dest, edge)])
            if len(longest) >= CHAIN_MIN_HOPS:
                chains.append(longest)
    # keep maximal chains: drop a chain whose hops all lie inside a longer one already kept
    chains.sort(key=lambda c: (-len(c), c[0][0], c[0][3]))
    kept: list[tuple[list, set]] = []
    for chain in chains:
        edges = {h[3] for h in chain}
        if not any(edges <= other for _, other in kept):
            kept.append((chain, edges))
            if len(kept) >= MAX_CHAINS:
                break
    return [_finding(g, "lateral_movement", 1 - 0.5 ** (len(c) - 1), [c[0][1]] + [h[2] for h in c],
                     [h[3] for h in c], hops=len(c), start=c[0][0], end=c[-1][0]) for c, _ in kept]


def _longest_chain(hops_from: dict, start: list) -> list:
    """The longest time-respecting simple chain from one hop, searching at most CHAIN_STEPS_PER_START
    extensions (simple paths can explode combinatorially in dense hop graphs)."""
    best, steps = start, 0
    stack = [(start, {start[0][1], start[0][2]})]
    while stack and steps < CHAIN_STEPS_PER_START:
        chain, visited = stack.pop()
        steps += 1
        if len(chain) > len(best):
            best = chain
        if len(chain) >= CHAIN_MAX_HOPS:
            continue
        ts, _, dest, _ = chain[-1]
        hops = hops_from.get(dest, ())
        lo = bisect.bisect_right(hops, (ts, float("inf")))  # hops sorted by time: only those in the window
        hi = bisect.bisect_right(hops, (ts + HOP_WINDOW, float("inf")))
        for t2, nxt, edge in reversed(hops[lo:hi]):
            if nxt not in visited:
                stack.append((chain + [(t2, dest, nxt, edge)], visited | {nxt}))
    return best


def beaconing(g: Graph, pairs: dict, sensitivity: float = 1.0) -> tuple[list[dict], list[dict]]:
    """(beaconing findings, scheduled activity): pairs seen at regular intervals. A pair that has kept a daily
    or weekly schedule (an interval within 5 % of 1 to 7 days) since the first quarter of the record is a job
    such as a nightly backup: reported as scheduled activity, not as a finding. A new one is beaconing."""
    out, scheduled = [], []
    if not g.ts:
        return out, scheduled
    first, last = min(g.ts.values()), max(g.ts.values())
    tolerance = BEACON_DISPERSION * sensitivity
    for (a, b), edges in pairs.items():
        if len(edges) < BEACON_MIN:
            continue
        times = sorted(g.ts[e] for e in edges)
        gaps = [t2 - t1 for t1, t2 in zip(times, times[1:])]
        median = statistics.median(gaps)
        if median <= 0:
            continue
        deviations = sorted(abs(x - median) / median for x in gaps)
        dispersion = deviations[math.ceil(BEACON_SHARE * len(deviations)) - 1]  # 80 % of intervals lie this close
        if dispersion > tolerance:
            continue
        days = round(median / DAY)
        established = times[0] - first <= SCHEDULE_ESTABLISHED * (last - first)
        if 1 <= days <= 7 and abs(median - days * DAY) <= SCHEDULE_SLACK * DAY * days and established:
            scheduled.append({"nodes": [g.name[a], g.name[b]], "interval_s": median, "events": len(times),
                              "first": times[0], "last": times[-1], "hedge_tags": g.tags(edges)[0]})
            continue
        out.append(_finding(g, "beaconing", 1 - dispersion / tolerance * 0.5, [a, b], edges,
                            events=len(times), interval_s=median, dispersion=round(dispersion, 4)))
    return out, scheduled


def per_host_movement(g: Graph) -> list[dict]:
    """Lateral movement as real logs record it, one login observation per host: an account logging in to at
    least CHAIN_MIN_HOPS + 1 hosts in a row, each new to it, each within HOP_WINDOW of the last, far faster than
    the account's own rate makes likely (Poisson tail of that many logins in the chain's span ≤ LATERAL_P).
    A busy account that works across many hosts all day is its own baseline, so its days are not a chain."""
    logins: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # account -> (ts, host, edge)
    for edge_id, members in g.members.items():
        if g.formation[edge_id] != "AUTH_EVENT":
            continue
        hosts = [m for m in members if g.type[m] in HOST_TYPES]
        actors = [m for m in members if g.type[m] not in HOST_TYPES]
        if len(hosts) == 1 and len(actors) == 1:
            logins[actors[0]].append((g.ts[edge_id], hosts[0], edge_id))
    if not g.ts:
        return []
    span = max(HOP_WINDOW, max(g.ts.values()) - min(g.ts.values()))
    out = []
    for account, seen in logins.items():
        if len(seen) <= CHAIN_MIN_HOPS:
            continue
        seen.sort()
        rate = len(seen) / span
        known: set[int] = set()
        chain: list[tuple[int, int, int]] = []
        for login in seen + [(math.inf, -1, -1)]:  # a sentinel closes the last chain
            ts, host, _ = login
            fresh = host not in known and all(host != h for _, h, _ in chain)
            if chain and fresh and ts - chain[-1][0] <= HOP_WINDOW:
                chain.append(login)
            else:
                if len(chain) > CHAIN_MIN_HOPS:
                    elapsed = max(60, chain[-1][0] - chain[0][0])
                    p = _poisson_tail(len(chain) - 1, rate * elapsed)
                    if p <= LATERAL_P:
                        out.append(_finding(g, "lateral_movement", 1 - 0.5 ** (len(chain) - 2),
                                            [account] + [h for _, h, _ in chain], [e for _, _, e in chain],
                                            hops=len(chain) - 1, start=chain[0][0], end=chain[-1][0],
                                            form="per-host logins", p_value=float(f"{p:.3g}")))
                known.update(h for _, h, _ in chain)
                chain = [login] if host >= 0 else []
        known.clear()
    return out


def _poisson_tail(k: int, mean: float) -> float:
    """P(X ≥ k) for X ~ Poisson(mean)."""
    term = math.exp(-mean)
    below = 0.0
    for i in range(k):
        below += term
        term *= mean / (i + 1)
    return max(0.0, 1.0 - below) if mean > 1 else _small_tail(k, mean)


def _small_tail(k: int, mean: float) -> float:
    """P(X ≥ k) summed from k up, exact for the small means where 1 − P(X < k) loses every digit."""
    term = math.exp(-mean) * mean ** k / math.factorial(k)
    total, i = 0.0, k
    while term > 1e-300 and i < k + 200:
        total += term
        i += 1
        term *= mean / i
    return total


def thresholds(sensitivity: float = 1.0) -> dict[str, dict]:
    """What each pattern must cross at this sensitivity: stated in every result and in each finding."""
    excess = round(1 + (TAIL_EXCESS - 1) / sensitivity, 4)
    return {
        "hub": {"log_z": round(HUB_Z / sensitivity, 4), "tail_excess": round(1 + (HUB_EXCESS - 1) / sensitivity, 4),
                "min_observations": HUB_MIN},
        "burst": {"window_s": BURST_WINDOW, "min_count": BURST_MIN, "z": round(BURST_Z / sensitivity, 4),
                  "baseline": "the same hour on other weekdays (or weekend days)"},
        "dense_cluster": {"min_size": CLUSTER_MIN, "min_pair_count": STRONG_PAIR, "density": CLUSTER_DENSITY},
        "fan_out": {"log_z": round(FAN_Z / sensitivity, 4), "tail_excess": excess, "min_distinct": FAN_MIN},
        "convergence": {"window_s": CONVERGE_WINDOW, "max_observations": CONVERGE_MAX_DEGREE,
                        "quiet_z": round(-CONVERGE_QUIET_Z / sensitivity, 4)},
        "spectral": {"eigenvector_mass": SPECTRAL_MASS,
                     "ratio_to_degree": round(1 + (SPECTRAL_RATIO - 1) / sensitivity, 4)},
        "lateral_movement": {"min_hops": CHAIN_MIN_HOPS, "hop_window_s": HOP_WINDOW, "per_host_p": LATERAL_P},
        "beaconing": {"min_events": BEACON_MIN, "dispersion": round(BEACON_DISPERSION * sensitivity, 4),
                      "share": BEACON_SHARE, "scheduled_if_daily_since": SCHEDULE_ESTABLISHED},
    }


# Below these sizes a detector's baseline is too thin to trust: its findings say so (details.small_store),
# so a finding in a toy store does not read as certain.
TRUSTED_OBSERVATIONS, TRUSTED_PEERS, TRUSTED_GRAPH = 100, 2 * MIN_PEERS, 50
PEER_BASED = {"hub", "fan_out", "convergence"}


def too_small(g: Graph, finding: dict) -> str | None:
    """Why the store is too small for this finding's detector to be sure, or None."""
    pattern, reasons = finding["pattern"], []
    if len(g.ts) < TRUSTED_OBSERVATIONS:
        reasons.append(f"only {len(g.ts)} observations scanned (a baseline needs {TRUSTED_OBSERVATIONS})")
    if pattern in PEER_BASED and finding["nodes"]:
        ids = {name: key for key, name in g.name.items()}
        kind = g.type.get(ids.get(finding["nodes"][0], -1))
        peers = sum(1 for e in g.edges_of if g.type[e] == kind)
        if peers < TRUSTED_PEERS:
            reasons.append(f"only {peers} entities of type {kind} to compare with (a baseline needs {TRUSTED_PEERS})")
    if pattern == "burst" and g.ts:
        days = (max(g.ts.values()) - min([*g.ts.values(), *g.history_all])) // DAY + 1
        if days < SEASON_MIN_DAYS:
            reasons.append(f"{days} day(s) recorded: measured against the flat rate, not the daily rhythm "
                           f"(that needs {SEASON_MIN_DAYS})")
    if pattern == "spectral" and len(g.edges_of) < TRUSTED_GRAPH:
        reasons.append(f"a graph of {len(g.edges_of)} entities (a core stands out only among {TRUSTED_GRAPH})")
    return "; ".join(reasons) or None


def check_sensitivity(sensitivity: object) -> float:
    low, high = SENSITIVITY_RANGE
    if sensitivity is None:
        return 1.0
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float)) or not math.isfinite(sensitivity) \
            or not low <= sensitivity <= high:
        raise InvalidArguments(f"'sensitivity' must be a number from {low:g} to {high:g}", argument="sensitivity")
    return float(sensitivity)


def check_window(window: object, now: int) -> Window | None:
    """A detect window: recall's time phrases, all of the text understood."""
    if window is None:
        return None
    if not isinstance(window, str) or not window.strip() or len(window) > 256:
        raise InvalidArguments("'window' must be a time phrase of at most 256 characters", argument="window")
    try:
        found, rest = parse_window(window, now)
    except InvalidArguments as exc:
        raise InvalidArguments(exc.message, argument="window") from None
    left = rest.replace(",", " ").replace(";", " ").split()
    if found is None or left:
        raise InvalidArguments(f"'window' must be a time phrase such as 'last 7 days' or 'in May 2026'; not "
                               f"understood: {' '.join(left) or window!r}", argument="window", unparsed=left)
    return found


def detect(tx: Transaction, full_scan: bool = False, window: str | None = None, sensitivity: float | None = None,
           now: object = None) -> dict:
    started = time.perf_counter()
    moment = check_now(now, tx.clock)
    scope = check_window(window, moment)
    level = check_sensitivity(sensitivity)
    g = Graph(tx, scope)
    pairs = pair_counts(g)
    findings = (hubs(g, level) + bursts(g, level) + dense_clusters(g, pairs) + fan_out(g, level) + convergence(g, level)
                + spectral(g, pairs, level))
    scheduled: list[dict] = []
    if full_scan:
        beacons, scheduled = beaconing(g, pairs, level)
        findings += lateral_movement(g) + per_host_movement(g) + beacons
    crossed = thresholds(level)
    for f in findings:
        f["details"]["threshold"] = crossed[f["pattern"]]
        thin = too_small(g, f)
        if thin:
            f["details"]["small_store"] = thin
    findings.sort(key=lambda f: (-f["score"], f["pattern"], f["nodes"]))
    remaining = 1.0
    for f in findings:
        remaining *= 1 - WEIGHTS[f["pattern"]] * f["score"]
    counts: dict[str, int] = defaultdict(int)
    for f in findings:
        counts[f["pattern"]] += 1
    return {"findings": findings, "scheduled": scheduled, "summary": {
        "risk_score": round(1 - remaining, 4), "findings": len(findings), "by_pattern": dict(sorted(counts.items())),
        "edges_scanned": len(g.ts), "entities": len(g.name), "full_scan": full_scan,
        "sensitivity": level, "seconds": round(time.perf_counter() - started, 3),
        "formula": "1 - prod(1 - weight[pattern] * score)", "weights": WEIGHTS, "thresholds": thresholds(level),
        "scheduled": len(scheduled),
        **({"window": scope.to_dict()} if scope else {})}}
