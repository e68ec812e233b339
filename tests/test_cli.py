"""The command line as a user runs it: subcommands per tool, exit codes, JSON output, import/export."""

import json
import shutil
from pathlib import Path

import anyio
from mcp import Client

from memory.tools import REGISTRY
from memory.tools.docs import render_markdown
from surfaces import ROOT, cli, cli_json, server_params


def test_every_tool_is_a_subcommand(db_path):
    help_text = cli(db_path, "--help", check=True).stdout
    for name in REGISTRY:
        assert name.replace("_", "-") in help_text
    for command in ("serve", "init", "version", "import", "export"):
        assert command in help_text


def test_flags_accept_kebab_and_snake_case(db_path):
    cli(db_path, "remember-fact", "--fact", "edge(a,b)", check=True)
    cli(db_path, "define-rule", "--head", "p(X,Y)", "--body", "edge(X,Y)", check=True)
    a = cli_json(db_path, "explain-why", "--fact", "p(a,b)", "--max-depth", "1")
    b = cli_json(db_path, "explain-why", "--fact", "p(a,b)", "--max_depth", "1")
    assert a == b and a["proof_nodes"][0]["truncated"] is True


def test_exit_codes(db_path):
    assert cli(db_path, "remember-fact", "--fact", "ok(1)").returncode == 0
    failed = cli(db_path, "remember-fact", "--fact", "broken(")
    assert failed.returncode == 1 and failed.stderr.startswith("SyntaxError: ")
    assert cli(db_path, "remember-fact").returncode == 2  # missing flag
    assert cli(db_path, "query-logic", "--goal", "ok(X)", "--limit", "-3").returncode == 2  # fails the schema
    assert cli(db_path, "query-logic", "--goal", "ok(X)", "--limit", "many").returncode == 2
    assert cli(db_path, "no-such-command").returncode == 2
    as_json = cli(db_path, "remember-fact", "--fact", "broken(", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["error"]["code"] == "syntax_error"


def test_human_output_is_a_table_for_rows(db_path):
    for fruit in ("apple", "banana"):
        cli(db_path, "remember-fact", "--fact", f"fruit({fruit})", check=True)
    shown = cli(db_path, "query-logic", "--goal", "fruit(X)", check=True).stdout
    assert "apple" in shown and "banana" in shown and "2 row(s)" in shown


def test_cli_and_mcp_give_the_same_structured_result(db_path):
    cli(db_path, "remember-fact", "--fact", "edge(1,2)", check=True)
    cli(db_path, "remember-fact", "--fact", "edge(2,3)", check=True)
    cli(db_path, "define-rule", "--head", "path(X,Y)", "--body", "edge(X,Y)", check=True)
    cli(db_path, "define-rule", "--head", "path(X,Z)", "--body", "path(X,Y), edge(Y,Z)", check=True)
    calls = [
        ("query_logic", {"goal": "path(X, Y)", "limit": 2}),
        ("explain_why", {"fact": "path(1,3)"}),
        ("list_facts", {}),
        ("list_rules", {}),
        ("echo", {"message": "same"}),
    ]

    async def over_mcp():
        async with Client(server_params(db_path), mode="legacy") as client:
            return [(await client.call_tool(name, args)).structured_content for name, args in calls]
    from_mcp = anyio.run(over_mcp)
    for (name, args), expected in zip(calls, from_mcp):
        flags = []
        for key, value in args.items():
            flags += ["--" + key.replace("_", "-"), str(value)]
        assert cli_json(db_path, name.replace("_", "-"), *flags) == expected, name


def test_init_and_version(tmp_path):
    db = tmp_path / "nested" / "dir" / "memory.db"
    done = cli(str(db), "init", check=True)
    assert str(db) in done.stdout and db.exists()
    assert cli(str(db), "version", check=True).stdout.startswith("datalog-memory ")


def test_default_database_location_is_the_project_folder(tmp_path):
    import subprocess
    from surfaces import COMMAND, env
    e = env()
    e.pop("DATALOG_MEMORY_DB", None)
    subprocess.run([*COMMAND, "remember-fact", "--fact", "here(1)"], cwd=ROOT, env=e, check=True, capture_output=True)
    # run from another folder with the package on the path: the database lands there
    e["PYTHONPATH"] = str(ROOT)
    subprocess.run([*COMMAND, "remember-fact", "--fact", "here(2)"], cwd=tmp_path, env=e, check=True, capture_output=True)
    assert (tmp_path / ".datalog-memory" / "memory.db").exists()
    e["DATALOG_MEMORY_DB"] = str(tmp_path / "from-env.db")
    subprocess.run([*COMMAND, "remember-fact", "--fact", "here(3)"], cwd=tmp_path, env=e, check=True, capture_output=True)
    assert (tmp_path / "from-env.db").exists()


PROGRAM = """% a family
parent(tom, bob).
parent(bob, ann).
parent('Mary Jane', "string value").
age(tom, 61).
weight(tom, 80.5).
ancestor(X, Y) :- parent(X, Y).
ancestor(X, Z) :- parent(X, Y), ancestor(Y, Z).
old(X) :- age(X, A), A > 60, \\+ parent(_, X).
"""


def test_prolog_import_export_round_trip(tmp_path):
    db1, db2 = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    source = tmp_path / "family.pl"
    source.write_text(PROGRAM)
    assert cli_json(db1, "import", str(source)) == {"file": str(source), "facts_added": 5, "rules_added": 3,
                                                    "assumptions": 0}
    exported = tmp_path / "out.pl"
    cli(db1, "export", str(exported), check=True)
    cli(db2, "import", str(exported), check=True)
    again = cli(db2, "export", check=True).stdout
    assert again == exported.read_text()
    assert cli_json(db2, "query-logic", "--goal", "ancestor(tom, X)")["bindings"] == [{"X": "ann"}, {"X": "bob"}]
    assert cli_json(db2, "query-logic", "--goal", "old(X)")["bindings"] == [{"X": "tom"}]
    # importing the same file twice adds nothing
    assert cli_json(db2, "import", str(exported))["facts_added"] == 0


def test_import_is_all_or_nothing(tmp_path):
    db = str(tmp_path / "m.db")
    bad = tmp_path / "bad.pl"
    bad.write_text("good(1).\np(X) :- q(Y).\n")
    failed = cli(db, "import", str(bad))
    assert failed.returncode == 1 and "unsafe" in failed.stderr
    assert cli_json(db, "list-facts")["total"] == 0
    syntax = tmp_path / "syntax.pl"
    syntax.write_text("good(1).\ngood(2\n")
    failed = cli(db, "import", str(syntax))
    assert failed.returncode == 1 and "line 3" in failed.stderr


def test_bulk_csv_and_jsonl(tmp_path):
    db = str(tmp_path / "m.db")
    csv_file = tmp_path / "edges.csv"
    csv_file.write_text("src,dst,weight\na,b,1\nb,c,2.5\n'x y',z,-3\n")
    result = cli_json(db, "import", str(csv_file), "--predicate", "edge", "--header")
    assert result["facts_read"] == 3 and result["facts_added"] == 3
    facts = [i["fact"] for i in cli_json(db, "list-facts")["items"]]
    assert facts == ["edge('\\'x y\\'', z, -3)", "edge(a, b, 1)", "edge(b, c, 2.5)"]
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text('["p", 1]\n{"predicate": "q", "args": ["a", {"string": "s"}]}\n{"fact": "r(x)"}\n')
    result = cli_json(db, "import", str(jsonl), "--predicate", "pair")
    assert result["facts_added"] == 3
    assert cli_json(db, "query-logic", "--goal", "q(a, S)")["bindings"] == [{"S": '"s"'}]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('["ok"]\n{not json}\n')
    failed = cli(db, "import", str(broken), "--predicate", "t")
    assert failed.returncode == 1 and "broken.jsonl:2" in failed.stderr


def test_console_script_is_installed():
    import subprocess
    import sys
    script = shutil.which("datalog-memory") or str(Path(sys.executable).parent / "datalog-memory")
    done = subprocess.run([script, "version"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("datalog-memory ")


def test_tool_docs_are_current():
    assert (ROOT / "docs" / "tools.md").read_text() == render_markdown(), \
        "docs/tools.md is stale: run python -m memory.tools.docs > docs/tools.md"


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text()
    blocks = readme.split("```sh\n")
    quick_start = [b.split("\n```")[0].strip() for b in blocks[1:3]]
    assert quick_start[0] == "python -m pip install . && datalog-memory serve"
    assert quick_start[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_human_output_draws_proof_trees(db_path):
    cli(db_path, "remember-fact", "--fact", "edge(a,b)", check=True)
    cli(db_path, "assume-fact", "--fact", "edge(b,c)", "--assumption", "hyp", check=True)
    cli(db_path, "define-rule", "--head", "path(X,Y)", "--body", "edge(X,Y)", check=True)
    cli(db_path, "define-rule", "--head", "path(X,Z)", "--body", "path(X,Y), edge(Y,Z)", check=True)
    shown = cli(db_path, "explain-why", "--fact", "path(a,c)", check=True).stdout
    assert "path(a, c)" in shown and "edge(a, b)  fact  (asserted)" in shown
    assert "edge(b, c)  fact  (assumption:hyp)" in shown
    assert "not provable" in cli(db_path, "explain-why", "--fact", "path(c,a)", check=True).stdout


def test_a_newer_database_is_refused_by_every_entry_point(tmp_path):
    import apsw
    db = str(tmp_path / "future.db")
    cli(db, "init", check=True)
    conn = apsw.Connection(db)
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'x', 'now')")
    conn.close()
    for args in (["list-facts"], ["serve"], ["remember-fact", "--fact", "p(a)"]):
        done = cli(db, *args, input="")
        assert done.returncode == 1, args
        assert "schema version 99 is newer" in done.stderr and "upgrade datalog-memory" in done.stderr
