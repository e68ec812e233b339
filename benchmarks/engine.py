"""Engine benchmark: our semi-naive engine vs pyDatalog and SWI-Prolog on the same data, in one run.

    python benchmarks/engine.py [--repeat 3] [--pydatalog-limit 60] [--skip-pydatalog] [--skip-swipl]
                                [--thresholds 0,64,256,1024]

Prints a table of median seconds per workload, the target from issue 3, and the
ratio to pyDatalog (or "> limit" when pyDatalog did not finish in time). Every
measurement of ours runs with provenance on (it always is). Peak memory of the
1.29 M-tuple closure is measured in a separate process (ru_maxrss).

A second table compares CPU seconds (ours: process time, the facts held as stored relations loaded once, as a
warm server holds them; SWI-Prolog 9 with tabling, the facts consulted once:
`statistics(cputime)` around the goal, tables abolished before each run) on the
bulk-evaluation workloads, with the ratio beside its target: ours with the columnar
path for large deltas (the default) and with the tuple-at-a-time path alone, in the
same run. When `swipl` is not installed, the figures measured when the workloads were
set (another machine) are printed as the reference, marked so.
`--thresholds` times the columnar rows at other switch-over delta sizes
(columnar.THRESHOLD), which is how the constant was chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.datalog import Budget, Pred, Program, analyze, evaluate, explain, parse_program, solve  # noqa: E402

try:  # absent from trees older than the columnar path: this script then measures their engine as it is
    from memory.datalog import columnar  # noqa: E402
except ImportError:
    columnar = None
from memory.terms import parse_term  # noqa: E402

try:
    from memory.datalog.relations import StoredRelation  # noqa: E402
except ImportError:
    StoredRelation = None

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


COUNTED = LEFT + " reach(N) :- aggregate_all(count, path(X,Y), N)."


def bulk_workloads():
    """The bulk-evaluation table: name, rules, facts, what to measure, SWI-Prolog goal, reference figures for
    SWI-Prolog (seconds; None: it failed) when it is not installed, target ratio."""
    tree = random_tree(4000)
    rnd = random_graph(2000, 3000)
    return [
        ("TC, 1,000-edge chain, aggregate_all count in a rule", COUNTED, {Pred.stored("edge", 2): chain(1000)},
         ("full", Pred.stored("reach", 1)), "reach(N)", 0.29, 0.5),
        ("TC, 2,000 nodes / 3,000 random edges", LEFT, {Pred.stored("edge", 2): rnd},
         ("full", Pred.stored("path", 2)), "aggregate_all(count, path(_,_), N)", 1.25, 0.5),
        ("same generation, 4,000-node random tree", SG, {Pred.stored("par", 2): tree},
         ("full", Pred.stored("sg", 2)), "aggregate_all(count, sg(_,_), N)", 0.97, 0.5),
        ("path(0, Y), 100,000-edge chain, left-recursive", LEFT, {Pred.stored("edge", 2): chain(100_000)},
         ("goal", "path(0, Y)"), "aggregate_all(count, path(0,_), N)", 0.10, 1.0),
        ("path(0, Y), 100,000-edge chain, right-recursive", RIGHT, {Pred.stored("edge", 2): chain(100_000)},
         ("goal", "path(0, Y)"), "aggregate_all(count, path(0,_), N)", None, 1.0),
    ]


def warm(facts: dict) -> dict:
    """The facts as a warm server holds them between calls: stored relations read in place, keeping the indexes
    evaluations build over them (trees without them measure their engine on plain tuples)."""
    if StoredRelation is None:
        return facts
    return {pred: StoredRelation(tuples) for pred, tuples in facts.items()}


def run_bulk(rules: str, facts: dict, measure: tuple, read: bool = False) -> tuple[float, int]:
    """CPU seconds of one evaluation, and its answer (the count, or the number of tuples or answers). `read`:
    every relation of the model read as Python tuples too (the columnar path builds them only when read)."""
    p = program(rules)
    kind, goal = measure
    started = time.process_time()
    if kind == "full":  # the count, as SWI-Prolog's aggregate_all(count, ...): no tuple need be built to count
        model = evaluate(p, facts, budget=BIG.copy())
        size = next(iter(model.tuples(goal)))[0] if goal.arity == 1 else (
            model.count(goal) if hasattr(model, "count") else len(model.tuples(goal)))
        if read:
            for pred in model.predicates():
                len(model.tuples(pred))
    else:
        load = lambda preds: {pred: facts.get(pred, []) for pred in preds}  # noqa: E731
        size = solve(p, parse_term(goal), load, budget=BIG.copy()).total
    seconds = time.process_time() - started
    if kind == "full":
        model.release()
    return seconds, size


def with_threshold(threshold, run, *args):
    if columnar is None:
        return run(*args)
    saved = columnar.THRESHOLD
    columnar.THRESHOLD = threshold
    try:
        return run(*args)
    finally:
        columnar.THRESHOLD = saved


SWIPL_DRIVER = """
:- initialization(main, main).
main :- current_prolog_flag(argv, [File, GoalText, RepeatText]),
    consult(File), term_to_atom(Goal, GoalText), atom_number(RepeatText, Repeat),
    forall(between(1, Repeat, _),
           ( abolish_all_tables, garbage_collect,
             statistics(cputime, T0),
             catch((call(Goal) -> Result = ok ; Result = failed), E, (print_message(error, E), Result = failed)),
             statistics(cputime, T1), T is T1 - T0,
             ( Result == ok -> format("~w ~q~n", [T, Goal]) ; format("failed ~w~n", [T]) ) )).
"""


def swipl_program(rules: str, facts: dict) -> str:
    tabled = sorted({clause.split("(")[0].strip() for clause in rules.split(".") if ":-" in clause})
    lines = [f":- table {name}/2." for name in tabled if name != "reach"]
    lines += [clause.strip() + "." for clause in rules.replace("aggregate_all(count, path(X,Y), N)",
                                                               "aggregate_all(count, path(_,_), N)").split(".")
              if clause.strip()]
    for pred, tuples in facts.items():
        lines += [f"{pred.name}({a},{b})." for a, b in tuples]
    return "\n".join(lines) + "\n"


def run_swipl(rules: str, facts: dict, goal: str, repeat: int, limit: float) -> tuple[float | None, str]:
    """Median CPU seconds of SWI-Prolog on the goal (tabled), or None and why not."""
    with tempfile.TemporaryDirectory() as tmp:
        source, driver = Path(tmp, "program.pl"), Path(tmp, "driver.pl")
        source.write_text(swipl_program(rules, facts))
        driver.write_text(SWIPL_DRIVER)
        try:
            done = subprocess.run(["swipl", str(driver), "--", str(source), goal, str(repeat)], capture_output=True,
                                  text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return None, f"> {limit:g} s"
    lines = done.stdout.split("\n")
    failed = [line for line in lines if line.startswith("failed")]
    times = [float(line.split()[0]) for line in lines if line and not line.startswith("failed")]
    if failed or not times:
        reason = "table space" if "table" in done.stderr.lower() or "resource" in done.stderr.lower() else "error"
        return None, f"fails ({reason})"
    return statistics.median(times), ""


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


# The peak is the worker's own high-water mark (VmHWM): ru_maxrss would also count the pages of this big
# benchmark process that the worker shared between fork and exec, and once reported 450 MB for a 226 MB peak.
PEAK_WORKER = r"""
import resource, sys
sys.path.insert(0, sys.argv[1])
sys.argv = [sys.argv[0]]
from benchmarks.engine import BIG, LEFT, Pred, evaluate, program, random_graph
model = evaluate(program(LEFT), {Pred.stored("edge", 2): random_graph(2000, 3000)}, budget=BIG.copy())
size = len(model.tuples(Pred.stored("path", 2)))  # every tuple built (a columnar model builds them when read)
try:
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except OSError:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(size, kb)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pydatalog-limit", type=float, default=60.0)
    parser.add_argument("--skip-pydatalog", action="store_true")
    parser.add_argument("--skip-swipl", action="store_true")
    parser.add_argument("--skip-issue3", action="store_true", help="only the bulk table")
    parser.add_argument("--thresholds", default="", help="comma-separated columnar thresholds to time as well")
    parser.add_argument("--swipl-limit", type=float, default=120.0)
    args = parser.parse_args()
    bulk_table(args)
    if args.skip_issue3:
        return
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
    tuples, kb = peak_memory()
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
    print(f"peak memory, TC of 2,000 nodes / 3,000 edges ({tuples:,} tuples): {kb / 1024:,.0f} MB (target <= 1,024 MB)")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; medians of {args.repeat} runs")



def bulk_table(args) -> None:
    swipl = None if args.skip_swipl else shutil.which("swipl")
    thresholds = [int(t) for t in args.thresholds.split(",") if t.strip()]
    rows = []
    for name, rules, facts, measure, goal, reference, target in bulk_workloads():
        stored = warm(facts)  # loaded once, as the server keeps them; SWI-Prolog consults its facts once too
        ours, size = [], None
        tuple_path, sizes, read = [], set(), []
        per_threshold: dict = {t: [] for t in thresholds}
        for _ in range(args.repeat):  # interleaved, so a noisy minute hits every column alike
            seconds, size = run_bulk(rules, stored, measure)
            ours.append(seconds)
            read.append(run_bulk(rules, stored, measure, read=True)[0] if measure[0] == "full" else seconds)
            seconds, other = with_threshold(None, run_bulk, rules, stored, measure)
            tuple_path.append(seconds)
            sizes.add(other)
            for t in thresholds:
                per_threshold[t].append(with_threshold(t, run_bulk, rules, stored, measure)[0])
        if sizes != {size}:
            print(f"warning: the tuple path found {sizes}, the columnar path {size} ({name})", file=sys.stderr)
        if swipl:
            theirs, note = run_swipl(rules, facts, goal, args.repeat, args.swipl_limit)
        else:
            theirs, note = reference, "reference" if reference is not None else "fails (ref)"
        rows.append((name, size, statistics.median(ours), statistics.median(read), statistics.median(tuple_path),
                     theirs, note, target, {t: statistics.median(v) for t, v in per_threshold.items()}))
        print(f"... {name}: {statistics.median(ours):.3f} s CPU", file=sys.stderr)
    print()
    where = "measured in this run" if swipl else "NOT installed here: the figures of issue 20 (another machine)"
    print(f"Bulk evaluation, CPU seconds (medians of {args.repeat}); SWI-Prolog {where}")
    print(f"{'workload':52} {'answer':>9} {'columnar':>9} {'+ tuples':>9} {'tuple path':>11} {'SWI-Prolog':>16} "
          f"{'ratio':>6} {'target':>7} {'met':>4}")
    print("-" * 130)
    for name, size, ours, read, tuple_path, theirs, note, target, per_threshold in rows:
        if theirs is None:
            their_text, ratio, met = note, "—", "—"
        else:
            their_text = f"{theirs:.3f}" + (" (ref)" if note == "reference" else "")
            ratio = f"{ours / theirs:.2f}x"
            met = "yes" if ours <= target * theirs else "no"
        print(f"{name:52} {size:>9,} {ours:>9.3f} {read:>9.3f} {tuple_path:>11.3f} {their_text:>16} {ratio:>6} "
              f"{'<= ' + format(target, '.1f') + 'x':>7} {met:>4}")
        for t, seconds in per_threshold.items():
            print(f"{'  threshold ' + str(t):52} {'':>9} {seconds:>9.3f}")
    print("columnar: the evaluation and the count; + tuples: and every relation of the model read as Python tuples")
    tuples, kb = peak_memory()
    print(f"peak memory, TC of 2,000 nodes / 3,000 edges ({tuples:,} tuples, read as tuples): {kb / 1024:,.0f} MB "
          f"(target <= 400 MB)")
    print()


def peak_memory() -> tuple[int, int]:
    """The 1.29 M closure's tuples and the peak resident kB of a process that evaluates it (see PEAK_WORKER)."""
    peak = subprocess.run([sys.executable, "-c", PEAK_WORKER, str(ROOT)], capture_output=True, text=True, check=True)
    tuples, kb = peak.stdout.split()
    return int(tuples), int(kb)


if __name__ == "__main__":
    main()
