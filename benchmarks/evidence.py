"""Evidence memory benchmark: remembering 100,000 observations, recall latency, detect.

    python benchmarks/evidence.py [--observations 100000] [--queries 200]

Uses the seeded scenario of the tests (a background with planted patterns) in a real
database file (WAL, synchronous=FULL). Prints a table with the issue's targets:
100k remembered in ≤ 20 s, recall p50 ≤ 50 ms, detect fast pass ≤ 10 s. No public
implementation of the reference exists to measure against (see the research notes).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from evidence_scenario import CONVERGE_RULE, NOW, START, TARGET_SECTOR, THREAT_RULE, with_patterns  # noqa: E402
from memory import Memory  # noqa: E402


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    runs, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs), result


def queries(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            out.append(f"what did account:a{rng.randrange(2000)} do")
        elif kind == 1:
            out.append(f"a{rng.randrange(2000)} on h{rng.randrange(400)} in the last 3 days")
        elif kind == 2:
            out.append(f"drones near sector:s{rng.randrange(60)} last week")
        elif kind == 3:
            day = time.strftime("%Y-%m-%d", time.gmtime(START + rng.randrange(25) * 86_400))
            out.append(f"host:h{rng.randrange(400)} since {day}")
        else:
            out.append(f"ip:10.0.{rng.randrange(5)}.{rng.randrange(250)} yesterday")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--observations", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    data = with_patterns(args.observations)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        jsonl = Path(tmp) / "observations.jsonl"
        jsonl.write_text("".join(json.dumps(o) + "\n" for o in data))
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memory.cli", "--db", str(Path(tmp) / "cli.db"), "import-observations",
                        str(jsonl)], cwd=ROOT, check=True, capture_output=True)
        rows.append(("remember 100k: CLI import-observations", time.perf_counter() - started, "≤ 20 s", ""))

        with Memory(str(Path(tmp) / "api.db")) as m:
            seconds, _ = timed(lambda: m.remember_observations(data))
            rows.append((f"remember {len(data):,}: Memory.remember_observations", seconds, "≤ 20 s",
                         f"{len(data) / seconds:,.0f}/s"))
            singles = [{"members": ["bench:x", f"host:h{i}"], "event_ts": NOW - i} for i in range(300)]
            started = time.perf_counter()
            for o in singles:
                m.remember(**o)
            per_call = (time.perf_counter() - started) / len(singles)
            rows.append(("remember, one call = one durable transaction", per_call, "", f"{1 / per_call:,.0f}/s"))
            m.define_rule(*CONVERGE_RULE, name="converge", confidence=0.9)
            m.define_rule(*THREAT_RULE, name="coordinated_threat")

            latencies = []
            for q in queries(args.queries):
                started = time.perf_counter()
                m.recall(q, now=NOW)
                latencies.append(time.perf_counter() - started)
            latencies.sort()
            rows.append((f"recall p50 over {len(latencies)} queries", statistics.median(latencies), "≤ 50 ms",
                         f"p95 {latencies[int(0.95 * len(latencies)) - 1] * 1000:.1f} ms"))
            seconds, fast = timed(lambda: m.detect(), 3)
            rows.append(("detect fast pass (median of 3)", seconds, "≤ 10 s",
                         f"{fast['summary']['findings']} finding(s)"))
            seconds, full = timed(lambda: m.detect(full_scan=True), 3)
            rows.append(("detect full scan (median of 3)", seconds, "", f"{full['summary']['findings']} finding(s)"))
            seconds, proofs = timed(lambda: m.prove(TARGET_SECTOR, goal_pred="coordinated_threat", now=NOW), 5)
            rows.append(("prove coordinated_threat (median of 5)", seconds, "", f"{proofs['count']} proof(s)"))
            step = proofs["proofs"][0]["nodes"][-1]["step_tag"]
            answer = (f"drone:x1 and drone:x2 converged on {TARGET_SECTOR} [{step}]. It is a coordinated threat "
                      f"[{step}]. drone:x9 destroyed it [{step}].")
            seconds, gated = timed(lambda: m.verify(answer, query=TARGET_SECTOR, now=NOW), 5)
            rows.append(("verify one answer (median of 5)", seconds, "",
                         f"{gated['supported_count']} kept, {gated['stripped_count']} stripped"))

    print(f"{'workload':52} {'seconds':>9} {'target':>8}  note")
    print("-" * 90)
    for name, seconds, target, note in rows:
        print(f"{name:52} {seconds:>9.4f} {target:>8}  {note}")


if __name__ == "__main__":
    main()
