"""Resident memory of one evaluation process holding a warm relation of `--facts` cluster edges.

    python benchmarks/warm_rss.py [--facts 1000000] [--db PATH]

Builds (or, with `--db` naming an existing file, reuses) a store of `edge/2` facts shaped as `latency.py`'s,
then starts a fresh process as the server starts a worker (PYTHONMALLOC=malloc), which imports what a worker
imports, runs `query_logic edge(a, X)` and `path(a, X)` as a worker runs calls (so the edges are read, held warm
and indexed on both columns), and prints its resident MB before the first call, after it, after the others and
the time each took. Quicker than the whole latency benchmark for watching what the warm relation costs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import COMMAND, RULES, cluster_edges, environment  # noqa: E402

PROBE = r"""
import os, sys, time
def mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
from memory.api import Memory
from memory.evidence import detect, reasoning, recall, verify  # noqa: F401
from memory.tools import REGISTRY
from memory.workers.calls import run_call
for spec in REGISTRY.values():
    if spec.evaluates:
        _ = spec.validator
memory = Memory(sys.argv[1])
print(f"imported: {mb():.0f} MB")
for goal in sys.argv[2:]:
    started = time.perf_counter()
    outcome = run_call(memory, "query_logic", {"goal": goal})
    print(f"after {goal}: {mb():.0f} MB, {time.perf_counter() - started:.3f} s")
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="warm-rss-"))
    db = args.db or tmp / "store.db"
    home = tmp / "home"
    home.mkdir()
    env = environment(home, db)
    edges = cluster_edges(args.facts)
    if not db.exists():
        csv = tmp / "edges.csv"
        csv.write_text("".join(f"n{a},n{b}\n" for a, b in edges))
        subprocess.run([*COMMAND, "import", str(csv), "--predicate", "edge"], env=env, cwd=home, check=True,
                       stdout=subprocess.DEVNULL)
        program = tmp / "rest.pl"
        program.write_text("".join(f"colour(n{i}, c{i % 7}).\n" for i in range(300))
                           + "".join(f"{head} :- {body}.\n" for head, body in RULES))
        subprocess.run([*COMMAND, "import", str(program)], env=env, cwd=home, check=True, stdout=subprocess.DEVNULL)
    a, b = edges[0]
    goals = [f"edge(n{a}, X)", f"edge(X, n{b})", f"edge(n{a}, n{b})", f"path(n{a}, X)"]
    env["PYTHONMALLOC"] = "malloc"
    try:
        subprocess.run([sys.executable, "-c", PROBE, str(db), *goals], env=env, cwd=home, check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # (a store given with --db is kept)
    return 0


if __name__ == "__main__":
    sys.exit(main())
