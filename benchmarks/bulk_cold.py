"""Bulk closures cold from the database file: a fresh process opens the store and answers (CPU seconds).

    python benchmarks/bulk_cold.py [--repeat 3] [--skip-swipl] [--skip-duckdb] [--only 0,3] [--profile DIR]
                                   [--duckdb-python PYTHON]

For each workload it writes the facts once into a datalog-memory store (and the same facts into a DuckDB file
and a Prolog file) in a temporary folder (HOME, XDG_DATA_HOME and every database there), then, `--repeat`
times, starts a fresh process per system and takes the median of its CPU seconds (user + system) from just
before the system's module is imported to the answer:

- ours: `from memory import Memory`, open the store, `query_logic(goal)` (the whole answer counted);
- SWI-Prolog 9: `swipl` consults the facts file and the tabled rules, runs the goal under `aggregate_all(count)`;
  its `statistics(cputime)` at the answer (startup and consulting included);
- DuckDB: `import duckdb`, open the file, a recursive CTE with UNION (so it terminates on cycles) counting the
  answers.

Both peers are skipped when missing (`pip install duckdb` into the benchmark's environment, or into another
environment named by `--duckdb-python`, e.g. to measure the newest DuckDB beside an older one another package
pins; it is no runtime dependency). The table's last line names each peer's version. The table prints each row's target beside the measurement: at or under DuckDB's CPU time and at
most 0.5x SWI-Prolog's. `--profile DIR` writes a cProfile of our process per workload there. Nothing is
asserted.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LEFT = [("path(X, Y)", "edge(X, Y)"), ("path(X, Z)", "path(X, Y), edge(Y, Z)")]
RIGHT = [("path(X, Y)", "edge(X, Y)"), ("path(X, Z)", "edge(X, Y), path(Y, Z)")]
SG = [("sg(X, Y)", "par(P, X), par(P, Y)"), ("sg(X, Y)", "par(PX, X), sg(PX, PY), par(PY, Y)")]

# DuckDB: the same closures as recursive CTEs; UNION (not UNION ALL) removes duplicates, so cycles end.
SQL_TC = ("WITH RECURSIVE path(x, y) AS (SELECT a, b FROM edge UNION SELECT p.x, e.b FROM path p JOIN edge e "
          "ON p.y = e.a) SELECT count(*) FROM path")
SQL_SG = ("WITH RECURSIVE sg(x, y) AS (SELECT p1.b, p2.b FROM par p1 JOIN par p2 ON p1.a = p2.a UNION "
          "SELECT a1.b, a2.b FROM sg s JOIN par a1 ON a1.a = s.x JOIN par a2 ON a2.a = s.y) SELECT count(*) FROM sg")
SQL_FROM0 = ("WITH RECURSIVE path(y) AS (SELECT b FROM edge WHERE a = 0 UNION SELECT e.b FROM path p JOIN edge e "
             "ON p.y = e.a) SELECT count(*) FROM path")


def chain(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n)]


def random_graph(nodes: int, edges: int, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out: set = set()
    while len(out) < edges:
        out.add((rng.randrange(nodes), rng.randrange(nodes)))
    return sorted(out)


def random_tree(nodes: int, seed: int = 7) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randrange(i), i) for i in range(1, nodes)]


def workloads() -> list[dict]:
    """name, predicate, facts, rules, goal, SWI goal, DuckDB SQL, expected answers."""
    return [
        dict(name="TC, 1,000-edge chain", pred="edge", facts=chain(1000), rules=LEFT, goal="path(X, Y)",
             swi="path(X, Y)", sql=SQL_TC, answers=500_500),
        dict(name="TC, 2,000 nodes x 3,000 random edges", pred="edge", facts=random_graph(2000, 3000), rules=LEFT,
             goal="path(X, Y)", swi="path(X, Y)", sql=SQL_TC, answers=None),
        dict(name="same generation, 4,000-node tree", pred="par", facts=random_tree(4000), rules=SG,
             goal="sg(X, Y)", swi="sg(X, Y)", sql=SQL_SG, answers=None),
        dict(name="path(0, Y) left-recursive, 100k chain", pred="edge", facts=chain(100_000), rules=LEFT,
             goal="path(0, Y)", swi="path(0, Y)", sql=SQL_FROM0, answers=100_000),
        dict(name="path(0, Y) right-recursive, 100k chain", pred="edge", facts=chain(100_000), rules=RIGHT,
             goal="path(0, Y)", swi="path(0, Y)", sql=SQL_FROM0, answers=100_000),
    ]


def environment(home: Path) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode compiled once, as an installed package's is
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
               PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""))
    return env


def build_ours(work: dict, db: Path, env: dict) -> None:
    script = (
        "import sys, json\n"
        "from memory import Memory\n"
        "from memory.terms import Compound\n"
        "w = json.loads(sys.stdin.read())\n"
        "with Memory(sys.argv[1]) as m:\n"
        "    m.add_fact_terms(Compound(w['pred'], (a, b)) for a, b in w['facts'])\n"
        "    for head, body in w['rules']:\n"
        "        m.define_rule(head, body)\n")
    subprocess.run([sys.executable, "-c", script, str(db)], input=json.dumps(work), text=True, env=env, check=True)


OURS = (
    "import resource, sys, time\n"
    "def cpu():\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    return r.ru_utime + r.ru_stime\n"
    "started = cpu()\n"
    "from memory import Memory\n"
    "with Memory(sys.argv[1]) as m:\n"
    "    total = m.query_logic(sys.argv[2], limit=1).total\n"
    "print(cpu() - started, total)\n")


def run_ours(db: Path, goal: str, env: dict, profile: Path | None = None) -> tuple[float, int]:
    if profile is not None:
        script = ("import cProfile, sys\nfrom memory import Memory\n"
                  "with Memory(sys.argv[1]) as m:\n"
                  f"    cProfile.run('m.query_logic(sys.argv[2], limit=1)', {str(profile)!r})\n")
        subprocess.run([sys.executable, "-c", script, str(db), goal], env=env, check=True)
    out = subprocess.run([sys.executable, "-c", OURS, str(db), goal], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), int(out[1])


DUCK_BUILD = (
    "import duckdb, sys\n"
    "table = sys.argv[2]\n"
    "con = duckdb.connect(sys.argv[1])\n"
    "con.execute('CREATE TABLE ' + table + ' (a INTEGER, b INTEGER)')\n"
    "con.execute('INSERT INTO ' + table + ' SELECT * FROM read_csv(?, header=false, '\n"
    "            \"columns={'a': 'INTEGER', 'b': 'INTEGER'})\", [sys.argv[3]])\n"
    "con.close()\n")


def build_duckdb(work: dict, db: Path, python: str, env: dict) -> None:
    """The facts into a DuckDB file, written by the interpreter that runs DuckDB (through a CSV file)."""
    csv = db.with_suffix(".csv")
    csv.write_text("".join(f"{a},{b}\n" for a, b in work["facts"]))
    subprocess.run([python, "-c", DUCK_BUILD, str(db), work["pred"], str(csv)], env=env, check=True)
    csv.unlink()


DUCK = (
    "import resource, sys\n"
    "def cpu():\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    return r.ru_utime + r.ru_stime\n"
    "started = cpu()\n"
    "import duckdb\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    "con.execute('SET enable_progress_bar = false')\n"
    "total = con.execute(sys.argv[2]).fetchone()[0]\n"
    "print(cpu() - started, total)\n")


def run_duckdb(db: Path, sql: str, python: str, env: dict) -> tuple[float, int]:
    out = subprocess.run([python, "-c", DUCK, str(db), sql], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), int(out[1])


def build_swipl(work: dict, path: Path) -> None:
    heads = {head.split("(")[0] for head, _ in work["rules"]}
    text = "".join(f":- table {h}/2.\n" for h in sorted(heads))
    text += "".join(f"{work['pred']}({a}, {b}).\n" for a, b in work["facts"])
    text += "".join(f"{head} :- {body}.\n" for head, body in work["rules"])
    path.write_text(text)


def run_swipl(path: Path, goal: str, env: dict) -> tuple[float | None, int | None]:
    prolog = (f"consult('{path}'), aggregate_all(count, {goal}, N), statistics(cputime, T), "
              "format('~w ~w~n', [T, N])")
    done = subprocess.run(["swipl", "-q", "-g", prolog, "-t", "halt"], env=env, capture_output=True, text=True,
                          timeout=600)
    words = done.stdout.split()
    if done.returncode != 0 or len(words) != 2:
        return None, None
    return float(words[0]), int(words[1])


def median(samples: list) -> float | None:
    kept = [s for s in samples if s is not None]
    return statistics.median(kept) if kept else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-swipl", action="store_true")
    parser.add_argument("--skip-duckdb", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated workload numbers (0-based)")
    parser.add_argument("--profile", help="a folder for one cProfile of our process per workload")
    parser.add_argument("--duckdb-python", default=sys.executable,
                        help="the Python interpreter with the duckdb package to measure (default: this one)")
    args = parser.parse_args()
    swipl = not args.skip_swipl and shutil.which("swipl") is not None
    duck_version = None if args.skip_duckdb else peer_version(
        [args.duckdb_python, "-c", "import duckdb; print(duckdb.__version__)"])
    duck = duck_version is not None
    swi_version = peer_version(["swipl", "--version"]) if swipl else None
    chosen = {int(i) for i in args.only.split(",") if i}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        home = tmp / "home"
        home.mkdir()
        env = environment(home)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "memory")], env=env, check=True)
        for number, work in enumerate(workloads()):
            if chosen and number not in chosen:
                continue
            db = tmp / f"w{number}.db"
            build_ours(work, db, env)
            ours, answers = [], None
            profile = Path(args.profile) / f"w{number}.prof" if args.profile else None
            if profile is not None:
                profile.parent.mkdir(parents=True, exist_ok=True)
            for k in range(args.repeat):
                seconds, answers = run_ours(db, work["goal"], env, profile if k == 0 else None)
                ours.append(seconds)
            swi = duckdb_s = None
            swi_answers = duck_answers = None
            if swipl:
                pl = tmp / f"w{number}.pl"
                build_swipl(work, pl)
                runs = [run_swipl(pl, work["swi"], env) for _ in range(args.repeat)]
                swi, swi_answers = median([r[0] for r in runs]), runs[0][1]
            if duck:
                ddb = tmp / f"w{number}.duckdb"
                build_duckdb(work, ddb, args.duckdb_python, env)
                runs2 = [run_duckdb(ddb, work["sql"], args.duckdb_python, env) for _ in range(args.repeat)]
                duckdb_s, duck_answers = median([r[0] for r in runs2]), runs2[0][1]
            rows.append((work["name"], answers, median(ours), swi, swi_answers, duckdb_s, duck_answers))
            print(f"  measured: {rows[-1]}", file=sys.stderr)
    print(f"{'workload':40} {'answers':>9} {'ours s':>7} {'SWI s':>7} {'DuckDB s':>8} {'x SWI':>6} {'target':>22}")
    print("-" * 105)
    for name, answers, ours_s, swi, swi_n, duck_s, duck_n in rows:
        ratio = f"{ours_s / swi:.2f}" if swi else "-"
        verdict = []
        if duck_s is not None:
            verdict.append("<=DuckDB " + ("met" if ours_s <= duck_s else "not met"))
        if swi is not None:
            verdict.append("<=0.5xSWI " + ("met" if ours_s <= 0.5 * swi else "not met"))
        swi_text = f"{swi:7.3f}" if swi is not None else ("  fails" if swipl else "      -")
        duck_text = f"{duck_s:8.3f}" if duck_s is not None else "       -"
        print(f"{name:40} {answers:>9,} {ours_s:7.3f} {swi_text} {duck_text} {ratio:>6} {', '.join(verdict):>22}")
        for peer, count in (("SWI-Prolog", swi_n), ("DuckDB", duck_n)):
            if count is not None and count != answers:
                print(f"  ! {peer} counted {count:,} answers, ours {answers:,}")
    print("CPU seconds (user + system) of a fresh process, from importing the system to its answer; median of "
          f"{args.repeat}. Targets: <= DuckDB and <= 0.5x SWI-Prolog.")
    print(f"Peers: {swi_version or 'SWI-Prolog not run'}; DuckDB {duck_version or 'not run'}.")


def peer_version(command: list) -> str | None:
    """What a peer prints of its version, or None when it cannot run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


if __name__ == "__main__":
    main()
