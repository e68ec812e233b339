"""Every benchmark script still runs: each at a size small enough for the suite, printing its table.

Nothing here times anything (speed is measured by the scripts themselves, not asserted); it catches a script
broken by a change elsewhere (a renamed tool, a moved module, a literal that assumed the default size), which
would otherwise surface only when someone next measures. The reference systems (SWI-Prolog, DuckDB,
pyDatalog) are skipped where a script can skip them; the recall benchmark reads a two-session conversation in
LoCoMo's format written here instead of the downloaded dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "benchmarks"

TINY_CONVERSATION = [{
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "We deployed the fix on Monday."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Great, the outage is over then."}],
        "session_2_date_time": "10:00 am on 9 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "My car broke down on the highway."},
                      {"speaker": "Bo", "dia_id": "D2:2", "text": "Did you call a mechanic?"}],
    },
    "qa": [{"question": "When was the fix deployed?", "answer": "Monday", "evidence": ["D1:1"], "category": 2},
           {"question": "What broke down?", "answer": "car", "evidence": ["D2:1"], "category": 1}],
}]

# script -> (arguments at a tiny size, a line of its table)
RUNS = {
    "cold_start.py": (["--size", "1000", "--rounds", "1"], "first"),
    "evidence.py": (["--observations", "200", "--queries", "5"], "observations"),
    "evidence_quality.py": ([], "verify corpus"),
    "explorer_pages.py": (["--observations", "50", "--rules", "5"], "page"),
    "fairness.py": (["--budget", "1", "--flood", "2", "--queries", "2"], "bob's latency"),
    "faults.py": (["--writes", "5", "--sessions", "1", "--connections", "2"], "acknowledged"),
    "import_facts.py": (["--facts", "2000"], "facts/s"),
    "load_segment.py": (["--facts", "2000", "--repeat", "1"], "load 2,000 facts"),
    "remember_related.py": (["--memories", "50", "--calls", "5"], "remember of"),
    "tool_list.py": ([], "tools"),
    "two_servers.py": (["--clients", "2", "--facts", "100"], "acknowledged"),
    "workers.py": (["--calls", "3", "--size", "1000", "--failures", "1"], "p50"),
    "warm_rss.py": (["--facts", "2000"], "after path"),
    "recall.py": (["--data", "{conversation}", "--no-dense", "--latency-memories", "20", "--latency-calls", "3"],
                  "| ours, memory_search"),
}


def test_every_benchmark_script_is_run_here():
    shown = {p.name for p in SCRIPTS.glob("*.py") if p.name != "__init__.py"}
    # latency.py (a server per store size and transport: over a minute even tiny), engine.py and bulk_cold.py
    # (fixed workloads against the reference systems) are run by hand; http_client.py is latency.py's client.
    by_hand = {"latency.py", "engine.py", "bulk_cold.py", "http_client.py"}
    assert shown - by_hand == set(RUNS)


@pytest.mark.parametrize("script", sorted(RUNS))
def test_the_benchmark_runs_at_a_tiny_size(script, tmp_path):
    arguments, expected = RUNS[script]
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(TINY_CONVERSATION), encoding="utf-8")
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), DATALOG_MEMORY_DB=str(tmp_path / "memory.db"))
    run = subprocess.run([sys.executable, str(SCRIPTS / script),
                          *(a.format(conversation=conversation) for a in arguments)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert expected.lower() in run.stdout.lower(), run.stdout[-2000:]
