"""Loading a large segment through `Memory.query_logic`: the storage read path of an evaluation.

    python benchmarks/load_segment.py [--facts 100000] [--repeat 5]

Builds a database with `--facts` edge/3 facts once, then for each repeat opens it afresh (no cached
relations) and times one query whose evaluation loads the whole relation. Prints the best and the
median time of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory import Memory  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = args.facts
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "load.db")
        with Memory(db) as m:
            m.add_facts([f"edge(n{i},n{i + 1},{i % 97})" for i in range(n)])
        times, cpu = [], []
        for _ in range(args.repeat):
            with Memory(db) as m:
                started, started_cpu = time.perf_counter(), time.process_time()
                total = m.query_logic("edge(X, Y, 5)", limit=1).total
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
            assert total == len(range(5, n, 97)), total
    print(f"load {n:,} facts through query_logic: best {min(times):.3f} s, "
          f"median {statistics.median(times):.3f} s, best CPU {min(cpu):.3f} s over {len(times)} runs")


if __name__ == "__main__":
    main()
