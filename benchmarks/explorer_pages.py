"""Explorer page times: the Observations page (activity chart, entity graph, detect) and the Knowledge page
(the routed rule graph) over stores of growing size, through the in-process app.

    python benchmarks/explorer_pages.py [--observations 1000 10000 50000] [--rules 200]

Everything lives in a temporary folder (HOME and XDG_DATA_HOME point into it). Prints a table: the first
Observations page (detect and the listing read), a second one (both kept while the store is unchanged), an
entity-filtered one, and the Knowledge page over a layered chain of rules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def timed(fn, repeat: int = 1) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--observations", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--rules", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from starlette.testclient import TestClient

        from evidence_scenario import with_patterns
        from memory import Memory
        from memory.explorer import build_app, read_only
        from memory.tools import call_tool

        token = "benchmark-token-0123456789"
        print(f"{'observations':>12} {'first page s':>13} {'again s':>8} {'entity s':>9} {'page KiB':>9}")
        for n in args.observations:
            db = str(Path(tmp) / f"obs{n}.db")
            writer = Memory(db)
            writer.remember_observations(with_patterns(n))
            writer.close()
            memory = Memory(db, context=read_only(Memory(db).context))
            client = TestClient(build_app(memory, token), base_url=f"http://127.0.0.1/{token}")
            size = [0]

            def page(path: str, client=client, size=size) -> None:
                answer = client.get(path)
                assert answer.status_code == 200, answer.text[-300:]
                size[0] = len(answer.content)
            first = timed(lambda: page("/observations"))
            kib = size[0] / 1024
            again = timed(lambda: page("/observations"), 3)
            entity = timed(lambda: page("/observations?entity=host:c2"), 3)
            print(f"{n:>12} {first:>13.2f} {again:>8.2f} {entity:>9.2f} {kib:>9.0f}")
            memory.close()
        db = str(Path(tmp) / "rules.db")
        writer = Memory(db)
        call_tool(writer, "remember_fact", {"fact": "p0(a)"})
        for i in range(1, args.rules):  # a layered chain with long edges and negations: each reads two earlier
            body = f"p{i - 1}(X), \\+ p{i // 2}(X)" if i % 3 == 0 and i // 2 < i - 1 else f"p{i - 1}(X), p{i // 2}(X)"
            call_tool(writer, "define_rule", {"head": f"p{i}(X)", "body": body})
        writer.close()
        memory = Memory(db, context=read_only(Memory(db).context))
        client = TestClient(build_app(memory, token), base_url=f"http://127.0.0.1/{token}")
        knowledge = timed(lambda: client.get("/"), 3)
        print(f"Knowledge page with {args.rules} rules (layered, long edges): {knowledge:.2f} s")
        memory.close()


if __name__ == "__main__":
    main()
