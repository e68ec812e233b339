"""What memory_remember's report of restated and contradicted memories costs, at a store of many memories.

    python benchmarks/remember_related.py [--memories 10000] [--calls 200] [--seed 7]

Builds a store in a temporary folder (HOME, XDG_DATA_HOME and the database all there) holding `--memories`
project memories: texts of 8-40 words drawn from a 3,000-word vocabulary with a Zipf-like skew (so common
words occur in most memories), every third with a projection `deploy_target(service_N, env)` over 50
services (one environment each) and every fifth with `topic(T)` over 40 topics (one predicate of arity 1:
its key range covers all of them, and holding many values it is a relation, not reported). Then times `--calls` remembers in-process, each of one of three kinds in turn: a near-duplicate of
a stored text, a text with a projection contradicting a stored one, and an unrelated text; once with the
report (this branch) and once with the report replaced by an empty one (the remember as it was before),
alternating call by call so both see the same store. Prints p50/p99 per kind and the report's own cost
(find_related alone, in a read transaction). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="remember-related-"))
    os.environ["HOME"] = str(folder)  # never the user's data
    os.environ["XDG_DATA_HOME"] = str(folder / "data")
    os.environ.pop("DATALOG_MEMORY_DB", None)

    from memory import Memory
    import memory.sources.memories as memories
    from memory.access import CallerContext
    from memory.sources.related import RESTATES_AT, RelatedReport, find_related, jaccard
    from memory.sources.words import folded_words
    from memory.store import utc_now

    rng = random.Random(args.seed)
    vocabulary = [f"word{i}" for i in range(3000)]
    weights = [1 / (i + 1) for i in range(len(vocabulary))]

    def text(n: int) -> str:
        return " ".join(rng.choices(vocabulary, weights, k=n)) + "."

    def projections(i: int) -> list[dict]:
        out = []
        if i % 3 == 0:
            # One environment per service (a functional key), so a new one contradicts what is stored.
            service, env = f"service_{i % 50}", ("staging", "production", "canary")[i % 50 % 3]
            out.append({"predicate": "deploy_target", "arguments": [service, env],
                        "statement": f"{service} deploys to {env}"})
        if i % 5 == 0:
            out.append({"predicate": "topic", "arguments": [f"topic_{i % 40}"], "statement": "its topic"})
        return out

    context = CallerContext(principal="bench", session_id="s1", project_remote="https://example.org/bench")
    memory = Memory(str(folder / "memory.db"), context=context)
    stored: list[tuple[str, list[dict]]] = []
    start = time.perf_counter()
    for i in range(args.memories):
        body, specs = text(rng.randint(8, 40)), projections(i)
        memory.memory_remember(body, projections=specs or None)
        stored.append((body, specs))
    built = time.perf_counter() - start

    word_sets = [set(folded_words(body)) for body, _ in stored]
    expected: list[bool] = []
    original = memories.find_related
    empty = RelatedReport([], False)

    def call(kind: str, with_report: bool) -> tuple[float, int]:
        if kind == "near-duplicate":
            body, _ = rng.choice(stored)
            words = body.rstrip(".").split()
            words[rng.randrange(len(words))] = "changed"
            payload: dict = {"memory": " ".join(words) + "."}
            if with_report:  # whether some stored text is a restatement by the measure: the recall's denominator
                mine = set(folded_words(payload["memory"]))
                expected.append(any(jaccard(mine, w) >= RESTATES_AT for w in word_sets))
        elif kind == "contradiction":
            body, specs = rng.choice([s for s in stored[-3000:] if s[1] and s[1][0]["predicate"] == "deploy_target"])
            service = specs[0]["arguments"][0]
            payload = {"memory": text(20), "projections": [
                {"predicate": "deploy_target", "arguments": [service, "nowhere"], "statement": "moved"},
                {"predicate": "topic", "arguments": ["topic_new"], "statement": "its topic"}]}
        else:
            payload = {"memory": " ".join(f"fresh{rng.randrange(10**6)}" for _ in range(20))}
        memories.find_related = original if with_report else (lambda *a, **k: empty)  # type: ignore[assignment]
        began = time.perf_counter()
        receipt = memory.memory_remember(payload["memory"], projections=payload.get("projections"))
        elapsed = (time.perf_counter() - began) * 1000
        word_sets.append(set(folded_words(payload["memory"])))
        memories.find_related = original  # type: ignore[assignment]
        return elapsed, len(receipt["related"])

    kinds = ("near-duplicate", "contradiction", "unrelated")
    times: dict[tuple[str, bool], list[float]] = {(k, w): [] for k in kinds for w in (True, False)}
    reported: dict[str, list[int]] = {k: [] for k in kinds}
    for n in range(args.calls):
        kind = kinds[n % 3]
        for with_report in ((True, False) if n % 2 else (False, True)):
            elapsed, count = call(kind, with_report)
            times[(kind, with_report)].append(elapsed)
            if with_report:
                reported[kind].append(count)

    # The report alone, in a read transaction, for a near-duplicate of a stored text.
    alone = []
    for _ in range(args.calls):
        body, specs = rng.choice(stored)
        parsed = memories.parse_projections(specs or None)
        with memory.store.read() as conn:
            began = time.perf_counter()
            find_related(conn, context, body, parsed, utc_now(conn.clock), set())
            alone.append((time.perf_counter() - began) * 1000)
    memory.close()

    print(f"store: {args.memories} memories built in {built:.1f} s; {args.calls} timed remembers per column")
    print()
    print("| remember of            | before p50 | before p99 | after p50 | after p99 | reported (mean) |")
    print("| ---------------------- | ---------: | ---------: | --------: | --------: | --------------: |")
    for kind in kinds:
        before, after = times[(kind, False)], times[(kind, True)]
        print(f"| {kind:<22} | {statistics.median(before):8.2f} ms | {percentile(before, .99):8.2f} ms "
              f"| {statistics.median(after):7.2f} ms | {percentile(after, .99):7.2f} ms "
              f"| {statistics.mean(reported[kind]):15.2f} |")
    found = sum(1 for e, n in zip(expected, reported["near-duplicate"]) if e and n)
    print(f"\nnear-duplicates with a stored restatement (Jaccard >= {RESTATES_AT}): {sum(expected)} of "
          f"{len(expected)}; reported: {found}")
    print(f"find_related alone (near-duplicate of a stored text): p50 {statistics.median(alone):.2f} ms, "
          f"p99 {percentile(alone, .99):.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
