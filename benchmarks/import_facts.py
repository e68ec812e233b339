"""Bulk import benchmark: 100,000 facts from CSV through the real CLI, and through the Python API.

    python benchmarks/import_facts.py [--facts 100000]

Prints seconds for each path, the CLI process's CPU seconds (user + system: on a machine shared with other work
the wall-clock figure mostly measures the wait for a core) and its peak resident memory; the first target was
under 10 s for 100k facts, the performance issue's is 1,000,000 in at most 10 s with at most 400 MB.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory import Memory  # noqa: E402


def run_measured(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident MB of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    args = parser.parse_args()
    n = args.facts
    with tempfile.TemporaryDirectory() as tmp:
        csv_file = Path(tmp) / "edges.csv"
        csv_file.write_text("".join(f"n{i},n{i + 1},{i % 97}\n" for i in range(n)))
        db = str(Path(tmp) / "cli.db")
        env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=tmp, XDG_CACHE_HOME=tmp)
        cli_seconds, cli_cpu, cli_mb = run_measured(
            [sys.executable, "-m", "memory.cli", "--db", db, "import", str(csv_file), "--predicate", "edge"], env, ROOT)

        with Memory(str(Path(tmp) / "api.db")) as m:
            facts = [f"edge(n{i},n{i + 1},{i % 97})" for i in range(n)]
            started = time.perf_counter()
            added, _ = m.add_facts(facts)
            api_seconds = time.perf_counter() - started
            assert added == n
            started = time.perf_counter()
            total = m.query_logic(f"edge(n{n // 2}, X, W)").total  # one fact, wherever n ends
            query_seconds = time.perf_counter() - started
            assert total == 1

    print(f"{'path':44} {'facts':>9} {'seconds':>8} {'facts/s':>10} {'peak MB':>8} {'CPU s':>7}")
    print("-" * 91)
    print(f"{'CLI: datalog-memory import edges.csv':44} {n:>9,} {cli_seconds:>8.2f} {n / cli_seconds:>10,.0f} "
          f"{cli_mb:>8.0f} {cli_cpu:>7.2f}")
    print(f"{'API: Memory.add_facts (parse + one commit)':44} {n:>9,} {api_seconds:>8.2f} {n / api_seconds:>10,.0f}")
    print(f"{'first query after import (loads the relation)':44} {'':>9} {query_seconds:>8.2f}")
    print("targets: 100,000 facts in under 10 s; 1,000,000 in at most 10 s with at most 400 MB")


if __name__ == "__main__":
    main()
