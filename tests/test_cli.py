"""The command line as a user runs it: subcommands per tool, exit codes, output, errors, import/export.

Most runs go through `main` in this process (tests/surfaces.py `cli`); a few start the real command
(`cli_process`) to check what only a process shows: the console script, piped output, a terminal,
the default database of the working directory."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from memory.cli import main as cli_main
from memory.cli.render import render
from memory.tools import REGISTRY
from memory.tools.docs import capability_table, render_markdown
from memory.tools.registry import GROUPS
from memory import Memory
from surfaces import ROOT, cli, cli_json, cli_on_terminal, cli_process, env, run_in_process


def test_help_lists_every_tool_under_its_family_with_its_summary(db_path):
    shown = cli(db_path, "--help", check=True).stdout
    assert cli(db_path, "-h", check=True).stdout == shown
    panels = [f"─ {group[:1].upper() + group[1:]} " for group in GROUPS]
    positions = [shown.index(p) for p in panels]
    assert positions == sorted(positions), "families are listed in the registry's order"
    for name, spec in REGISTRY.items():
        command = name.replace("_", "-")
        at = re.search(rf"│ {re.escape(command)} +(\S+)", shown)
        assert at, command
        panel = max(p for p in positions if p < at.start())
        assert positions.index(panel) == GROUPS.index(spec.group), command
        assert at.group(1) == spec.summary.split()[0], command  # the one-line description starts there
    for command in ("serve", "init", "version", "import", "export"):
        assert f"│ {command} " in shown
    assert "-h" in cli(db_path, "query-logic", "-h", check=True).stdout


def test_version_flag_and_command(db_path):
    from memory import __version__
    assert cli(db_path, "--version", check=True).stdout == f"datalog-memory {__version__}\n"
    assert cli(db_path, "version", check=True).stdout == f"datalog-memory {__version__}\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion(db_path, shell):
    """What the completion script of each shell asks the command (--show-completion prints the script for
    the shell it runs in, --install-completion installs it: both detect the shell from the process tree)."""
    words = {"bash": {"COMP_WORDS": "datalog-memory query-l", "COMP_CWORD": "1"},
             "zsh": {"_TYPER_COMPLETE_ARGS": "datalog-memory query-l"},
             "fish": {"_TYPER_COMPLETE_ARGS": "datalog-memory query-l", "_TYPER_COMPLETE_FISH_ACTION": "get-args"}}
    done = cli(db_path, extra_env={"_DATALOG_MEMORY_COMPLETE": f"complete_{shell}", **words[shell]})
    assert done.returncode == 0 and re.findall(r"query-[a-z-]+", done.stdout) == ["query-logic"], done
    flags = cli(db_path, extra_env={"_DATALOG_MEMORY_COMPLETE": f"complete_{shell}",
                                    **{k: v.replace("query-l", "query-logic --go") for k, v in words[shell].items()},
                                    **({"COMP_CWORD": "2"} if shell == "bash" else {})})
    assert "--goal" in flags.stdout, flags
    shown = cli(db_path, "--help", check=True).stdout
    assert "--install-completion" in shown and "--show-completion" in shown


def test_flags_accept_kebab_and_snake_case(store_file):
    cli(store_file, "remember-fact", "--fact", "edge(a,b)", check=True)
    cli(store_file, "define-rule", "--head", "p(X,Y)", "--body", "edge(X,Y)", check=True)
    a = cli_json(store_file, "explain-why", "--fact", "p(a,b)", "--max-depth", "1")
    b = cli_json(store_file, "explain-why", "--fact", "p(a,b)", "--max_depth", "1")
    assert a == b and a["proof_nodes"][0]["truncated"] is True


def _one_line(text: str) -> bool:
    return text.endswith("\n") and text.count("\n") == 1 and "Traceback" not in text


def test_exit_codes_and_one_line_errors(store_file):
    assert cli(store_file, "remember-fact", "--fact", "ok(1)").returncode == 0
    failed = cli(store_file, "remember-fact", "--fact", "broken(")
    assert failed.returncode == 1 and failed.stderr.startswith("SyntaxError: ") and _one_line(failed.stderr)
    for args in (["remember-fact"], ["query-logic", "--goal", "ok(X)", "--limit", "-3"],
                 ["query-logic", "--goal", "ok(X)", "--limit", "many"], ["no-such-command"], ["--no-such-flag"]):
        usage = cli(store_file, *args)
        assert usage.returncode == 2, args
        assert re.match(r"(UsageError|InvalidArguments): ", usage.stderr) and _one_line(usage.stderr), usage.stderr
    assert "'--limit'" in cli(store_file, "query-logic", "--goal", "ok(X)", "--limit", "many").stderr
    as_json = cli(store_file, "remember-fact", "--fact", "broken(", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["error"]["code"] == "syntax_error"


def test_a_file_that_is_not_a_database_is_one_line_naming_it(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for args in (["list-facts"], ["remember-fact", "--fact", "p(a)"], ["init"]):
        done = cli(str(text), *args)
        assert done.returncode == 1 and _one_line(done.stderr), done.stderr
        assert done.stderr == f"StorageError: {text} is not a datalog-memory database (not an SQLite file)\n"
    under_a_file = cli(str(text / "memory.db"), "remember-fact", "--fact", "p(a)")
    assert under_a_file.returncode == 1 and _one_line(under_a_file.stderr) and str(text) in under_a_file.stderr
    assert text.read_text() == "hello\n"


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(store_file, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(cli_main, "call_tool", broken)
    done = cli(store_file, "list-facts")
    assert done.returncode == 1 and _one_line(done.stderr)
    assert done.stderr == "InternalError: RuntimeError: boom (run with --debug for the traceback)\n"
    with pytest.raises(RuntimeError, match="boom"):
        cli(store_file, "--debug", "list-facts")


def _terminal(structured: dict, text: str = "", width: int = 120) -> str:
    console = Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
    render(console, text, structured)
    return console.file.getvalue()


def test_values_are_printed_literally_never_as_markup(store_file):
    cli(store_file, "remember-fact", "--fact", "tags(x, [red, green])", check=True)
    cli(store_file, "remember-fact", "--fact", "s(y, 'a[/red]b')", check=True)
    cli(store_file, "remember-fact", "--fact", "s(z, '[bold]')", check=True)
    listed = cli(store_file, "list-facts", check=True)
    assert "tags(x, [red, green])" in listed.stdout and "s(y, 'a[/red]b')" in listed.stdout
    assert "s(z, '[bold]')" in listed.stdout
    assert cli(store_file, "query-logic", "--goal", "tags(X, L)", check=True).stdout == "X\tL\nx\t[red, green]\n"
    assert cli(store_file, "query-logic", "--goal", "s(_, V)", check=True).stdout == "'[bold]'\n'a[/red]b'\n"
    overview = cli(store_file, "get-kb-overview", check=True)
    assert "s(y, 'a[/red]b')" in overview.stdout and overview.returncode == 0
    # on a terminal: a table, the same values; a timestamp whole, or left out (and said) when it does not fit
    page = cli_json(store_file, "list-facts")
    narrow = _terminal(page, width=50)
    assert "not shown at this width: created_at" in narrow
    assert all(item["created_at"] in _terminal(page, width=120) for item in page["items"])
    assert "…" not in narrow
    table = _terminal(page, width=120)
    assert "[red, green]" in table and "'a[/red]b'" in table and "'[bold]'" in table
    assert "3 row(s)" in table
    rows = cli_json(store_file, "query-logic", "--goal", "tags(X, L)")
    assert "[red, green]" in _terminal(rows)


def test_piped_rows_are_tab_separated_and_the_count_goes_to_stderr(store_file):
    for fruit in ("apple", "'banana split'"):
        cli(store_file, "remember-fact", "--fact", f"fruit({fruit}, 1)", check=True)
    one = cli(store_file, "query-logic", "--goal", "fruit(X, _)", check=True)
    assert one.stdout == "apple\n'banana split'\n" and one.stderr == "2 row(s)\n"
    two = cli(store_file, "query-logic", "--goal", "fruit(X, N)", check=True)
    assert two.stdout == "X\tN\napple\t1\n'banana split'\t1\n"
    page = cli(store_file, "query-logic", "--goal", "fruit(X, N)", "--limit", "1", check=True)
    assert page.stdout == "X\tN\napple\t1\n" and page.stderr == "1 of 2 shown (use --limit/--offset)\n"


def test_real_process_output_piped_and_on_a_terminal(store_file):
    cli(store_file, "remember-fact", "--fact", "tags(x, [red, green])", check=True)
    piped = cli_process(store_file, "query-logic", "--goal", "tags(X, L)", check=True)
    assert piped.stdout == "X\tL\nx\t[red, green]\n" and piped.stderr == "1 row(s)\n"
    status, text = cli_on_terminal(store_file, 60, "query-logic", "--goal", "tags(X, L)", stderr_too=False)
    assert status == 0 and "┃ X" in text and "│ x │ [red, green] │" in text and "1 row(s)" in text


def test_cli_and_mcp_give_the_same_structured_result(store_file):
    cli(store_file, "remember-fact", "--fact", "edge(1,2)", check=True)
    cli(store_file, "remember-fact", "--fact", "edge(2,3)", check=True)
    cli(store_file, "define-rule", "--head", "path(X,Y)", "--body", "edge(X,Y)", check=True)
    cli(store_file, "define-rule", "--head", "path(X,Z)", "--body", "path(X,Y), edge(Y,Z)", check=True)
    calls = [
        ("query_logic", {"goal": "path(X, Y)", "limit": 2}),
        ("query_logic", {"goal": "pth(X, Y)"}),
        ("explain_why", {"fact": "path(1,3)"}),
        ("list_facts", {}),
        ("list_rules", {}),
        ("echo", {"message": "same"}),
    ]

    async def over_mcp(client):
        return [(await client.call_tool(name, args)).structured_content for name, args in calls]
    from_mcp = run_in_process(store_file, "legacy", over_mcp)
    for (name, args), expected in zip(calls, from_mcp):
        flags = []
        for key, value in args.items():
            flags += ["--" + key.replace("_", "-"), str(value)]
        assert cli_json(store_file, name.replace("_", "-"), *flags) == expected, name
    assert from_mcp[1]["warnings"] == ["unknown procedure pth/2; did you mean path/2"]


def test_init_prints_the_database(tmp_path):
    db = tmp_path / "nested" / "dir" / "memory.db"
    done = cli(str(db), "init", check=True)
    assert done.stdout == f"Database ready: {db}\n" and db.exists()


def test_default_database_is_the_working_directory_s_project_folder(tmp_path):
    """A real process started in a folder, with no --db and no DATALOG_MEMORY_DB."""
    project = tmp_path / "project"
    project.mkdir()
    cli_process(None, "remember-fact", "--fact", "here(1)", cwd=str(project), extra_env={"DATALOG_MEMORY_DB": ""},
                check=True)
    with Memory(str(project / ".datalog-memory" / "memory.db")) as m:
        assert m.query_logic("here(X)").bindings == [{"X": "1"}]
    cli(None, "remember-fact", "--fact", "here(3)", extra_env={"DATALOG_MEMORY_DB": str(tmp_path / "from-env.db")},
        check=True)
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


def test_import_is_all_or_nothing_and_errors_name_the_file(tmp_path):
    db = str(tmp_path / "m.db")
    bad = tmp_path / "bad.pl"
    bad.write_text("good(1).\np(X) :- q(Y).\n")
    failed = cli(db, "import", str(bad))
    assert failed.returncode == 1 and "unsafe" in failed.stderr and str(bad) in failed.stderr
    assert cli_json(db, "list-facts")["total"] == 0
    syntax = tmp_path / "syntax.pl"
    syntax.write_text("good(1).\ngood(2\n")
    failed = cli(db, "import", str(syntax))
    assert failed.returncode == 1 and "line 3" in failed.stderr and str(syntax) in failed.stderr
    assert _one_line(failed.stderr)
    as_json = json.loads(cli(db, "import", str(syntax), "--json").stdout)
    assert as_json["error"]["file"] == str(syntax)


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
    assert failed.returncode == 1 and f"{broken}:2" in failed.stderr


@pytest.mark.parametrize("name, content, where, reason", [
    ("big.csv", "1\n1.0e309\n", ":2", "1.0e309 is not a finite number"),
    ("small.csv", "-1.0e309\n", ":1", "-1.0e309 is not a finite number"),
    ("ragged.csv", "a,b\nc\nd,e,f\n", ":2", "1 cell(s) where the first row has 2"),
    ("nan.jsonl", "[1]\n[NaN]\n", ":2", "NaN is not a finite number"),
    ("huge.jsonl", "[1e999]\n", ":1", "1e999 is not a finite number"),
    ("minus.jsonl", '{"args": [-Infinity]}\n', ":1", "-Infinity is not a finite number"),
    ("latin1.csv", "a\ncaf\xe9\n", ":2", "not UTF-8 text"),
    ("latin1.jsonl", '["caf\xe9"]\n', ":1", "not UTF-8 text"),
    ("latin1.pl", "p('caf\xe9').\n", ":1", "not UTF-8 text"),
])
def test_import_refuses_what_remember_fact_refuses_naming_file_and_line(tmp_path, name, content, where, reason):
    db = str(tmp_path / "m.db")
    cli(db, "remember-fact", "--fact", "before(1)", check=True)
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1"))
    done = cli(db, "import", str(path), "--predicate", "p")
    assert done.returncode == 1 and _one_line(done.stderr), done.stderr
    assert f"{path}{where}: " in done.stderr and reason in done.stderr
    assert [i["fact"] for i in cli_json(db, "list-facts")["items"]] == ["before(1)"]  # nothing changed


def test_import_refuses_fifos_devices_and_folders_without_blocking(tmp_path):
    db = str(tmp_path / "m.db")
    fifo = tmp_path / "pipe.pl"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "not a regular file"), (folder, "a folder")):
        for command in (["import", str(path), "--format", "pl"], ["import", str(path), "--format", "csv"],
                        ["import-observations", str(path)], ["snapshot-import", str(path), "--name", "s"]):
            done = cli(db, *command)
            assert done.returncode == 1 and _one_line(done.stderr), (command, done.stderr)
            assert f"{path}: {kind}; only regular files can be imported" in done.stderr
    missing = cli(db, "import", str(tmp_path / "missing.pl"))
    assert missing.returncode == 1 and f"{tmp_path / 'missing.pl'}: cannot read" in missing.stderr


def test_export_failures_name_the_file(store_file, tmp_path, monkeypatch):
    cli(store_file, "remember-fact", "--fact", "p(a)", check=True)
    full = cli(store_file, "export", "/dev/full")
    assert full.returncode == 1 and full.stderr == "Error: cannot write /dev/full: No space left on device\n"
    folder = cli(store_file, "export", str(tmp_path))
    assert folder.returncode == 1 and folder.stderr == f"Error: cannot write {tmp_path}: Is a directory\n"
    with os.fdopen(os.open("/dev/full", os.O_WRONLY), "w") as device:
        monkeypatch.setattr(sys, "stdout", device)
        from memory.cli.main import main
        with pytest.raises(SystemExit) as exit_status:
            main(["--db", store_file, "export"])
    assert exit_status.value.code == 1


def test_console_script_is_installed():
    script = shutil.which("datalog-memory") or str(Path(sys.executable).parent / "datalog-memory")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, check=True, env=env())
    assert done.stdout.startswith("datalog-memory ")


def test_tool_docs_are_current():
    assert (ROOT / "docs" / "tools.md").read_text() == render_markdown(), \
        "docs/tools.md is stale: run python -m memory.tools.docs --write"


def test_the_docs_command_checks_and_rewrites_the_tool_reference(tmp_path, monkeypatch, capsys):
    from memory.tools import docs

    target = tmp_path / "docs" / "tools.md"
    target.parent.mkdir()
    target.write_text("# an old reference\n")
    authority = target.parent / "authority.md"
    authority.write_text("# Authority\n\nThe table:\n\n| tool | needs |\n| --- | --- |\n| `gone` | none |\n\nAfter it.\n")
    monkeypatch.setattr(docs, "TOOLS_MD", target)
    assert docs.main(["--check"]) == 1
    assert capsys.readouterr().err.count("stale: run python -m memory.tools.docs --write") == 2
    assert docs.main(["--write"]) == 0 and target.read_text() == render_markdown()
    assert authority.read_text() == "# Authority\n\nThe table:\n\n" + capability_table() + "\nAfter it.\n"
    assert docs.main(["--check"]) == 0
    capsys.readouterr()
    target.write_text("# an old reference\n")  # tools.md alone stale: the table is left as it is
    assert docs.main(["--check"]) == 1 and "authority.md" not in capsys.readouterr().err
    authority.write_text("# Authority without its table\n")
    before = target.read_text()
    assert docs.main(["--write"]) == 2 and "| tool | needs |" in capsys.readouterr().err
    assert target.read_text() == before  # refused whole: nothing written
    monkeypatch.setattr(docs, "TOOLS_MD", tmp_path / "nowhere" / "tools.md")  # an installed wheel: no docs folder
    assert docs.main(["--write"]) == 2 and not (tmp_path / "nowhere").exists()


def test_ci_runs_the_readme_test_command_verbatim_and_says_how_long_it_took():
    readme = (ROOT / "README.md").read_text()
    development = readme[readme.index("\n## Development\n"):]
    test_command = development.split("```sh\n")[1].split("\n```")[0].strip()
    assert test_command == "python -m pip install '.[test]' && python -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()
    assert "duration" in ci.lower()


def test_human_output_draws_proof_trees(store_file):
    cli(store_file, "remember-fact", "--fact", "edge(a,b)", check=True)
    cli(store_file, "assume-fact", "--fact", "edge(b,c)", "--assumption", "hyp", check=True)
    cli(store_file, "define-rule", "--head", "path(X,Y)", "--body", "edge(X,Y)", check=True)
    cli(store_file, "define-rule", "--head", "path(X,Z)", "--body", "path(X,Y), edge(Y,Z)", check=True)
    shown = cli(store_file, "explain-why", "--fact", "path(a,c)", check=True).stdout
    assert shown.splitlines() == [
        "path(a, c)  ⟸  path(X, Z) :- path(X, Y), edge(Y, Z)",
        "  path(a, b)  ⟸  path(X, Y) :- edge(X, Y)",
        "    edge(a, b)  fact  (asserted)",
        "  edge(b, c)  fact  (assumption:hyp)",
    ]
    tree = _terminal(cli_json(store_file, "explain-why", "--fact", "path(a,c)"))
    assert "edge(a, b)  fact  (asserted)" in tree and "└── " in tree
    assert "not provable" in cli(store_file, "explain-why", "--fact", "path(c,a)", check=True).stdout


def test_warnings_for_undefined_predicates_are_printed_and_do_not_fail(store_file):
    cli(store_file, "remember-fact", "--fact", "edge(a,b)", check=True)
    typo = cli(store_file, "query-logic", "--goal", "edg(X,Y)")
    assert typo.returncode == 0 and typo.stdout == "X\tY\n"  # piped: the header alone, and it says so
    assert typo.stderr == "Warning: unknown procedure edg/2; did you mean edge/2\nno solutions\n"
    rule = cli(store_file, "define-rule", "--head", "path(X,Y)", "--body", "edge(X,Y), linked(X)")
    assert rule.returncode == 0 and rule.stderr == "Warning: unknown procedure linked/1 (no facts or rules define it)\n"
    # empty because the rule it reaches calls linked/1, which nothing defines: said, naming the rule
    assert cli_json(store_file, "query-logic", "--goal", "path(X,Y)")["warnings"] == [
        "unknown procedure linked/1 (no facts or rules define it) (called by the rule path(X, Y) :- edge(X, Y), "
        "linked(X))"]
    assert "warnings" not in cli_json(store_file, "query-logic", "--goal", "edge(X,Y)")  # none: left out


def test_a_newer_database_is_refused_by_every_entry_point(tmp_path):
    import apsw
    db = str(tmp_path / "future.db")
    cli(db, "init", check=True)
    conn = apsw.Connection(db)
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 'x', 'now')")
    conn.close()
    for args in (["list-facts"], ["remember-fact", "--fact", "p(a)"], ["init"]):
        done = cli(db, *args)
        assert done.returncode == 1, args
        assert "schema version 99 is newer" in done.stderr and "upgrade datalog-memory" in done.stderr
        assert _one_line(done.stderr)
    served = cli(db, "serve")  # refused before it reads anything
    assert served.returncode == 1 and "schema version 99 is newer" in served.stderr


def test_values_print_as_their_canonical_prolog_text_once_piped_and_on_a_terminal(store_file):
    """A control character inside a quoted atom is already `\\t` in the canonical text: printed as it is
    (never `\\\\t`), it reads back as the same term, and the TSV row stays one line of whole fields."""
    from memory.knowledge.parsing import parse_fact
    from memory.terms import format_term
    cli(store_file, "remember-fact", "--fact", "p('a\\tb', 'x\\\\y')", check=True)  # the Prolog text p('a\tb', 'x\\y')
    cli(store_file, "remember-fact", "--fact", "p('line\\nbreak', \"s\\tq\")", check=True)
    bindings = cli_json(store_file, "query-logic", "--goal", "p(X, Y)")["bindings"]
    piped = cli(store_file, "query-logic", "--goal", "p(X, Y)", check=True).stdout
    assert piped == "X\tY\n" + "".join(f"{row['X']}\t{row['Y']}\n" for row in bindings)
    assert "'a\\tb'\t'x\\\\y'\n" in piped and "'line\\nbreak'\t\"s\\tq\"\n" in piped  # one backslash each
    for line in piped.splitlines()[1:]:
        x, y = line.split("\t")  # still exactly two fields
        assert format_term(parse_fact(f"p({x}, {y})", "test")) == f"p({x}, {y})"  # valid Prolog, same term
    listed = cli(store_file, "list-facts", check=True).stdout
    facts = [item["fact"] for item in cli_json(store_file, "list-facts")["items"]]
    assert "p('a\\tb', 'x\\\\y')" in facts
    assert [line.split("\t")[1] for line in listed.splitlines()[1:]] == facts
    single = cli(store_file, "query-logic", "--goal", "p(X, 'x\\\\y')", check=True).stdout
    assert single == "'a\\tb'\n"
    table = _terminal(cli_json(store_file, "query-logic", "--goal", "p(X, Y)"))
    assert "'a\\tb'" in table and "'x\\\\y'" in table and "'a\\\\tb'" not in table
    assert "p('a\\tb', 'x\\\\y')" in _terminal(cli_json(store_file, "list-facts"), width=200)


def test_piped_text_that_is_not_a_term_keeps_one_line_per_row():
    """Text that is not a term (a memory's own words) may hold raw tabs and line breaks: piped, only those
    are written `\\t` / `\\n`, so each row stays one line of whole fields; backslashes are left alone."""
    console = Console(file=io.StringIO(), force_terminal=False)
    render(console, "", {"memories": [{"id": "mem_1", "memory": "a\tb\nc \\d"}], "total": 1})
    assert console.file.getvalue() == "id\tmemory\nmem_1\ta\\tb\\nc \\d\n"


@pytest.mark.parametrize("command, operation, content", [
    (["import", "{file}.csv", "--predicate", "p"], "add_fact_terms", "a,b\nc\n"),
    (["import", "{file}.jsonl", "--predicate", "p"], "add_fact_terms", "[1]\nNaN\n"),
    (["import", "{file}.pl"], "import_program", "p(a.\n"),
    (["import-observations", "{file}.jsonl"], "remember_observations", "{not json\n"),
    (["snapshot-import", "{file}.pl", "--name", "s"], "import_snapshot", "p(a.\n"),
])
def test_admin_writes_check_the_capability_before_reading_the_file(store_file, tmp_path, command, operation, content):
    """Without the capability the operation declares (memory/api.py BULK_OPERATIONS), the refusal comes first:
    the file's own errors (it is malformed on purpose) are not even looked at, and nothing is written."""
    from memory.api import BULK_OPERATIONS
    from memory.access.context import KNOWN_CAPABILITIES
    needed = BULK_OPERATIONS[operation][0]
    args = [a.format(file=tmp_path / "bad") for a in command]
    Path(args[1]).write_text(content)
    for capabilities in ("", ",".join(sorted(KNOWN_CAPABILITIES - {needed}))):
        done = cli(store_file, *args, extra_env={"DATALOG_MEMORY_CAPABILITIES": capabilities})
        assert done.returncode == 1 and _one_line(done.stderr), done.stderr
        assert f"needs the capability {needed}" in done.stderr
        assert "line" not in done.stderr and "JSON" not in done.stderr and "cell" not in done.stderr
    allowed = cli(store_file, *args)  # with the capability, the file's own error is what is reported
    assert allowed.returncode == 1 and "needs the capability" not in allowed.stderr and str(tmp_path) in allowed.stderr


def _tool_flags(spec):
    """(flag, value) for every argument a tool requires, with a value of its type."""
    values = {"integer": "1", "number": "1", "string": "x", "array": '["x"]', "object": "{}"}
    out = []
    for name in spec.input_schema.get("required", []):
        kind = spec.input_schema["properties"][name].get("type", "string")
        out += ["--" + name.replace("_", "-"), values[kind[0] if isinstance(kind, list) else kind]]
    return out


def test_every_text_argument_of_every_tool_reads_standard_input_given_as_dash(store_file, monkeypatch):
    """One rule for the whole registry: a text (or JSON) argument given as `-` is standard input, exactly."""
    seen = {}

    def capture(memory, name, arguments):
        seen[name] = arguments
        raise cli_main.ArgumentsRejected("captured")
    monkeypatch.setattr(cli_main, "call_tool", capture)
    checked = 0
    for tool_name, spec in REGISTRY.items():
        for name, prop in spec.input_schema.get("properties", {}).items():
            kind = prop.get("type", "string")
            kind = kind[0] if isinstance(kind, list) else kind
            if kind not in ("string", "array", "object"):
                continue
            flags = _tool_flags(spec)
            flag = "--" + name.replace("_", "-")
            if flag in flags:
                flags[flags.index(flag) + 1] = "-"
            else:
                flags += [flag, "-"]
            given = '["from stdin"]\n' if kind == "array" else '{"k": "from stdin"}' if kind == "object" else "a\tb\n"
            seen.clear()
            done = cli(store_file, tool_name.replace("_", "-"), *flags, input=given)
            assert "captured" in done.stderr, (tool_name, name, done.stderr)
            assert seen[tool_name][name] == (json.loads(given) if kind != "string" else given), (tool_name, name)
            checked += 1
    assert checked > 20


def test_dash_reads_standard_input_and_a_quoted_dash_is_the_atom(store_file):
    cli(store_file, "remember-fact", "--fact", "-", input="p(from_stdin)\n", check=True)
    cli(store_file, "remember-fact", "--fact", "p('-')", check=True)
    assert cli(store_file, "query-logic", "--goal", "-", input="p(X)", check=True).stdout == "-\nfrom_stdin\n"
    both = cli(store_file, "define-rule", "--head", "-", "--body", "-", input="q(X)")
    assert both.returncode == 2 and _one_line(both.stderr) and "--body, --head" in both.stderr
    shown = " ".join(cli(store_file, "remember-fact", "-h", check=True).stdout.replace("│", " ").split())
    assert "'-' reads standard input" in shown  # however the help is wrapped


def test_a_read_where_no_database_can_ever_be_created_fails_but_a_creatable_path_reads_empty(tmp_path):
    """The rule: a database not created yet reads as empty where a first write could create it; a path that
    can never hold one is a one-line error (exit 1), for reads as for writes, and nothing is created."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello\n")
    for impossible in (f"{a_file}/sub/y.db", "/proc/datalog-memory-nowhere/y.db"):
        for command in (["list-facts"], ["query-logic", "--goal", "p(X)"], ["list-snapshots"]):
            done = cli(impossible, *command)
            assert done.returncode == 1 and _one_line(done.stderr), (impossible, command, done)
            assert done.stderr.startswith(f"StorageError: no database at {impossible}, and none can be created there")
            assert done.stdout == ""
        # the health reports answer instead (as the reference's get_kb_overview does): degraded, saying why
        assert cli_json(impossible, "get-persistence-status")["status"] == "degraded"
        assert cli_json(impossible, "get-kb-overview")["persistence"]["healthy"] is False
    assert a_file.read_text() == "hello\n"
    creatable = tmp_path / "later" / "sub" / "y.db"
    done = cli(str(creatable), "list-facts")
    assert done.returncode == 0 and done.stderr == "" and not (tmp_path / "later").exists()


def test_cli_error_lines_are_the_mcp_error_text(store_file):
    """One wording on both surfaces: the CLI's line is the text of the MCP error result (`Name: reason`, the
    name being the stable code in CamelCase), or a reference tool's exact message; and every typed error
    code has its name."""
    from memory import errors
    from memory.tools.registry import error_name
    cli(store_file, "remember-fact", "--fact", "n(0)", check=True)
    calls = [("query_logic", {"goal": "n(X), Y is 1 / X"}), ("memory_get", {"id": "mem_nope"}),
             ("restore_snapshot", {"name": "never"}), ("remember_fact", {"fact": "broken("}),
             ("query_logic", {"goal": "p(X)", "limit": -3})]

    async def over_mcp(client):
        return [await client.call_tool(name, args) for name, args in calls]
    from_mcp = run_in_process(store_file, "legacy", over_mcp)
    names = []
    for (name, args), result in zip(calls, from_mcp):
        assert result.is_error
        flags = [x for k, v in args.items() for x in ("--" + k.replace("_", "-"), str(v))]
        done = cli(store_file, name.replace("_", "-"), *flags)
        assert done.returncode in (1, 2) and done.stderr == result.content[0].text + "\n", (name, done.stderr)
        names.append(done.stderr.split(":")[0])
    assert names == ["EvaluationError", "NotFound", "Snapshot not found", "SyntaxError", "InvalidArguments"]
    assert from_mcp[0].content[0].text == "EvaluationError: division by zero"
    codes = {cls.code for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.DatalogMemoryError)}
    for code in codes:
        assert re.fullmatch(r"(?:[A-Z][a-z]+)+", error_name(code)) and error_name(code).lower() == code.replace("_", "")
    assert error_name("invalid_arguments") == "InvalidArguments" and error_name("syntax_error") == "SyntaxError"
