"""Evidence quality: how often verify keeps a fabrication or strips an honest answer, how recall reads time
phrases, and what detect finds on clean and planted data.

    python benchmarks/evidence_quality.py

Uses the corpora and scenarios of the tests (tests/verify_corpus.py, tests/incident_corpus.py,
tests/evidence_scenario.py), so the numbers are the suite's. Targets (issue 32): fabrications kept
≤ 1 %, honest answers rejected ≤ 3 %; recall: 0 phrasings misread; detect: 0 findings on clean
data, every planted pattern found.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import evidence_scenario as scenario  # noqa: E402
import incident_corpus  # noqa: E402
import verify_corpus  # noqa: E402
from memory import Memory  # noqa: E402
from memory.errors import InvalidArguments  # noqa: E402


def _kept(memory: Memory, text: str, **kw) -> bool:
    return all(s["kept"] for s in memory.verify(text, **kw)["sentences"])


def verify_rates() -> list[tuple[str, int, int, int, int]]:
    """(corpus, honest, honest stripped, adversarial, adversarial kept) per corpus."""
    rows = []
    memory, tags = verify_corpus.build()
    try:
        keeps = [k.format(**tags) for k in verify_corpus.KEEPS] + verify_corpus.NON_FACTUAL
        attacks = [a.format(**tags) for a in verify_corpus.ATTACKS]
        kw = {"query": verify_corpus.QUERY, "now": verify_corpus.NOW}
        rows.append(("drones and logins (verify_corpus)", len(keeps), sum(not _kept(memory, k, **kw) for k in keeps),
                     len(attacks), sum(_kept(memory, a, **kw) for a in attacks)))
    finally:
        memory.close()
    memory, tags = incident_corpus.build()
    try:
        honest = [h.format(**tags) for h in incident_corpus.HONEST + incident_corpus.DRONES_HONEST]
        adversarial = [a.format(**tags) for a in incident_corpus.ADVERSARIAL + incident_corpus.DRONES_ADVERSARIAL]
        kw = {"query": "", "top_k": 100, "now": incident_corpus.NOW}
        rows.append(("incident (incident_corpus)", len(honest), sum(not _kept(memory, h, **kw) for h in honest),
                     len(adversarial), sum(_kept(memory, a, **kw) for a in adversarial)))
    finally:
        memory.close()
    return rows


def recall_rates() -> tuple[int, int, int, int]:
    """(phrasings, right, reported as not understood, misread)."""
    memory, _ = incident_corpus.build()
    right = reported = misread = 0
    try:
        for query, expected in incident_corpus.RECALL_PHRASES:
            try:
                out = memory.recall(query, now=incident_corpus.RECALL_NOW)
            except InvalidArguments:
                reported += expected == incident_corpus.REFUSED
                misread += expected != incident_corpus.REFUSED
                continue
            window = out["parsed"]["window"]
            if out["parsed"]["time_not_understood"]:
                reported += expected == incident_corpus.REFUSED
                misread += expected != incident_corpus.REFUSED
            elif expected is None:
                right += window is None
                misread += window is not None
            else:
                ok = expected != incident_corpus.REFUSED and window is not None and \
                    (window["start"], window["end"]) == tuple(expected)
                right += ok
                misread += not ok
    finally:
        memory.close()
    return len(incident_corpus.RECALL_PHRASES), right, reported, misread


def detect_rows() -> list[tuple[str, int, str]]:
    """(data set, findings, planted patterns found)."""
    rows = []
    for seed in (3, 4, 5):
        with Memory(":memory:") as m:
            m.remember_observations(scenario.rhythmic_background(8_000, seed))
            out = m.detect(full_scan=True, now=scenario.NOW)
        rows.append((f"clean, daily and weekly cycles, seed {seed}", len(out["findings"]),
                     f"scheduled: {len(out['scheduled'])}"))
    for seed in (3, 4, 5):
        with Memory(":memory:") as m:
            m.remember_observations(scenario.rhythmic_background(8_000, seed) + scenario.rhythmic_planted())
            out = m.detect(full_scan=True, now=scenario.NOW)
        patterns = {f["pattern"] for f in out["findings"]}
        wanted = {"lateral_movement", "beaconing", "convergence"}
        rows.append((f"planted into cycles, seed {seed}", len(out["findings"]),
                     f"{len(wanted & patterns)}/{len(wanted)} ({', '.join(sorted(wanted - patterns)) or 'all'})"))
    with Memory(":memory:") as m:
        m.remember_observations(scenario.background(400) + [
            {"members": [f"account:visitor{i}", "host:hub"], "event_ts": scenario.START + 3_600 * i}
            for i in range(70)])
        out = m.detect(now=scenario.NOW)
    rows.append(("reference hub: 70 accounts onto one host, 400 background", len(out["findings"]),
                 "hub found" if any(f["pattern"] == "hub" for f in out["findings"]) else "hub missed"))
    return rows


def main() -> None:
    print(f"{'verify corpus':40} {'honest':>7} {'rejected':>9} {'adversarial':>12} {'kept':>6}")
    print("-" * 80)
    for name, honest, rejected, adversarial, kept in verify_rates():
        print(f"{name:40} {honest:>7} {rejected:>4} {rejected / honest:>4.1%} {adversarial:>12} {kept:>2} "
              f"{kept / adversarial:>4.1%}")
    total, right, reported, misread = recall_rates()
    print(f"\nrecall phrasings: {total}; right {right}, reported as not understood {reported}, misread {misread}")
    print(f"\n{'detect data set':58} {'findings':>8}  planted")
    print("-" * 80)
    for name, findings, note in detect_rows():
        print(f"{name:58} {findings:>8}  {note}")


if __name__ == "__main__":
    main()
