"""Engine benchmark: our semi-naive engine vs pyDatalog on the same data, in one run.

    python benchmarks/engine.py [--repeat 3] [--pydatalog-limit 60] [--skip-pydatalog]

Prints a table of median seconds per workload, the target from issue 3, and the
ratio to pyDatalog (or "> limit" when pyDatalog did not finish in time). Every
measurement of ours runs with provenance on (it always is). Peak memory of the
1.29 M-tuple closure is measured in a separate process (ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.datalog import Budget, Pred, Program, analyze, evaluate, explain, parse_program, solve  # noqa: E402
from memory.terms import parse_term  # noqa: E402

LEFT = "path(X,Y) :- edge(X,Y). path(X,Z) :- path(X,Y), edge(Y,Z)."
RIGHT = "path(X,Y) :- edge(X,Y). path(X,Z) :- edge(X,Y), path(Y,Z)."
SG = "sg(X,Y) :- par(P,X), par(P,Y). sg(X,Y) :- par(PX,X), sg(PX,PY), par(PY,Y)."
BIG = Budget(timeout_s=600, max_tuples=50_000_000, max_rows=200_000_000)


def program(text: str) -> Program:
    p = parse_program(text)
    analyze(p)
    return p


def chain(n: int) -> list:
    return [(i, i + 1) for i in range(n)]


def random_graph(nodes: int, edges: int, seed: int = 1) -> list:
    rng = random.Random(seed)
    out: set = set()
    while len(out) < edges:
        out.add((rng.randrange(nodes), rng.randrange(nodes)))
    return sorted(out)


def random_tree(nodes: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    return [(rng.randrange(i), i) for i in range(1, nodes)]


def workloads():
    tree = random_tree(4000)
    rnd = random_graph(2000, 3000)
    return [
        # name, rules, facts, kind, goal, target seconds, pyDatalog query
        ("TC, 1,000-edge chain (500,500 tuples)", LEFT, {Pred.stored("edge", 2): chain(1000)}, "full", Pred.stored("path", 2), 0.35, "path(X,Y)"),
        ("TC, 2,000 nodes / 3,000 random edges", LEFT, {Pred.stored("edge", 2): rnd}, "full", Pred.stored("path", 2), 1.5, "path(X,Y)"),
        ("same generation, 4,000-node random tree", SG, {Pred.stored("par", 2): tree}, "full", Pred.stored("sg", 2), 1.2, "sg(X,Y)"),
        ("path(0, X), 100,000-edge chain, left-recursive", LEFT, {Pred.stored("edge", 2): chain(100_000)}, "goal", "path(0, X)", 0.3, "path(0,X)"),
        ("path(0, X), 100,000-edge chain, right-recursive", RIGHT, {Pred.stored("edge", 2): chain(100_000)}, "goal", "path(0, X)", 0.3, "path(0,X)"),
        ("proof of path(0,500), 1,000-edge chain", LEFT, {Pred.stored("edge", 2): chain(1000)}, "proof", "path(0, 500)", 0.05, None),
    ]


def run_ours(rules: str, facts: dict, kind: str, goal) -> tuple[float, int]:
    p = program(rules)
    load = lambda preds: {pred: facts.get(pred, []) for pred in preds}  # noqa: E731
    started = time.perf_counter()
    if kind == "full":
        model = evaluate(p, facts, budget=BIG.copy())
        size = len(model.tuples(goal))
    elif kind == "goal":
        size = solve(p, parse_term(goal), load, budget=BIG.copy()).total
    else:
        node = explain(p, parse_term(goal), load, budget=BIG.copy())
        size = 0
        while node is not None:
            size += 1
            node = next((c for c in node.children if c.kind == "rule"), None)
    return time.perf_counter() - started, size


PYDATALOG_WORKER = r"""
import json, sys, time
from pyDatalog import pyDatalog
job = json.loads(sys.stdin.read())
lines = [f"+ {name}({a},{b})" for name, tuples in job["facts"].items() for a, b in tuples]
rules = job["rules"].replace(":-", "<=").replace("), ", ") & ")
for clause in rules.split(". "):
    clause = clause.strip().rstrip(".")
    if clause:
        lines.append(clause)
pyDatalog.load("\n".join(lines))
started = time.perf_counter()
answer = pyDatalog.ask(job["query"])
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "size": 0 if answer is None else len(answer.answers)}))
"""


def run_pydatalog(rules: str, facts: dict, query: str, limit: float) -> tuple[float | None, int | None]:
    job = json.dumps({"rules": rules, "facts": {pred.name: tuples for pred, tuples in facts.items()}, "query": query})
    try:
        done = subprocess.run([sys.executable, "-c", PYDATALOG_WORKER], input=job, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        return None, None
    if done.returncode != 0:
        return None, None
    result = json.loads(done.stdout)
    return result["seconds"], result["size"]


PEAK_WORKER = r"""
import resource, sys
sys.path.insert(0, sys.argv[1])
sys.argv = [sys.argv[0]]
from benchmarks.engine import BIG, LEFT, Pred, evaluate, program, random_graph
model = evaluate(program(LEFT), {Pred.stored("edge", 2): random_graph(2000, 3000)}, budget=BIG.copy())
print(len(model.tuples(Pred.stored("path", 2))), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pydatalog-limit", type=float, default=60.0)
    parser.add_argument("--skip-pydatalog", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, rules, facts, kind, goal, target, query in workloads():
        times = []
        size = 0
        for _ in range(args.repeat):
            seconds, size = run_ours(rules, facts, kind, goal)
            times.append(seconds)
        ours = statistics.median(times)
        theirs = None
        if query and not args.skip_pydatalog:
            theirs, their_size = run_pydatalog(rules, facts, query, args.pydatalog_limit)
            if theirs is not None and their_size != size:
                print(f"warning: pyDatalog found {their_size} answers, we found {size} ({name})", file=sys.stderr)
        rows.append((name, size, ours, target, theirs))
        print(f"... {name}: {ours:.3f} s", file=sys.stderr)
    peak = subprocess.run([sys.executable, "-c", PEAK_WORKER, str(ROOT)], capture_output=True, text=True, check=True)
    tuples, kb = peak.stdout.split()
    print()
    print(f"{'workload':52} {'answers':>9} {'ours (s)':>9} {'target':>7} {'met':>4} {'pyDatalog (s)':>14} {'speed-up':>9}")
    print("-" * 110)
    for name, size, ours, target, theirs in rows:
        if theirs is None:
            their_text = f"> {args.pydatalog_limit:g}" if not args.skip_pydatalog and name.find("proof") < 0 else "n/a"
            ratio = f"> {args.pydatalog_limit / ours:,.0f}x" if their_text.startswith(">") else "n/a"
        else:
            their_text, ratio = f"{theirs:.3f}", f"{theirs / ours:,.1f}x"
        met = "yes" if ours <= target else "no"
        print(f"{name:52} {size:>9,} {ours:>9.3f} {target:>7.2f} {met:>4} {their_text:>14} {ratio:>9}")
    print()
    print(f"peak memory, TC of 2,000 nodes / 3,000 edges ({int(tuples):,} tuples): {int(kb) / 1024:,.0f} MB (target <= 1,024 MB)")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; medians of {args.repeat} runs")


if __name__ == "__main__":
    main()
