"""The command line's papercuts, each as a user meets it: boolean flags, tables on narrow terminals, times,
every part of a result, the reference CLI's forms, empty answers, a short help. A few runs start the real
command (cli_process); the rest run the same `main` in this process (surfaces.cli)."""

import io
import json
import re

import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

from memory.cli.render import AS_FORM, NOT_PRINTED, render
from memory.tools import REGISTRY
from surfaces import cli, cli_json, cli_on_terminal, cli_process

NOW = 1_780_000_000
SOURCE_ID = "mem_c5e4a9d2-5b1e-4f8c-9d68-4a1887d684a1"


def _terminal(structured: dict, width: int, text: str = "", inputs: frozenset = frozenset()) -> str:
    console = Console(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
    render(console, text, structured, inputs)
    return console.file.getvalue()


def _on_a_terminal(db: str, columns: int, *args: str) -> str:
    """The real command on a pseudo-terminal COLUMNS wide: what a person sees (styles aside)."""
    return cli_on_terminal(db, columns, *args)[1]


# --- boolean flags ----------------------------------------------------------------------------------------

def test_json_takes_no_value_or_true_false_and_help_shows_no_type(db_path):
    cli(db_path, "remember-fact", "--fact", "path(a, b)", check=True)
    ran = cli_process(db_path, "query-logic", "--goal", "path(a,X)", "--json", "true", check=True)  # the report
    assert json.loads(ran.stdout)["bindings"] == [{"X": "b"}]
    assert cli_json(db_path, "query-logic", "--goal", "path(a,X)") == json.loads(ran.stdout)
    assert cli(db_path, "query-logic", "--goal", "path(a,X)", "--json=false", check=True).stdout == "b\n"
    assert cli(db_path, "query-logic", "--goal", "path(a,X)", "--json", "false", check=True).stdout == "b\n"
    bad = cli(db_path, "query-logic", "--goal", "path(a,X)", "--json", "maybe")
    assert bad.returncode == 2 and bad.stderr.startswith("UsageError: ")  # not a value: an extra argument
    shown = cli(db_path, "query-logic", "--help", check=True, extra_env={"COLUMNS": "80"}).stdout
    for flag in ("--json", "--help"):
        line = next(line for line in shown.splitlines() if f"{flag} " in line)
        assert "<bool>" not in line, line
    assert "<str>" in shown  # a flag that takes a value still says which
    assert "<bool>" not in cli(db_path, "--help", check=True).stdout


def test_a_tool_flag_takes_true_and_false_as_its_reference_spelling(db_path):
    cli(db_path, "remember-fact", "--fact", "task_status(t1, open)", check=True)
    dry = cli_json(db_path, "rename-predicate", "--old_functor", "task_status", "--new_functor", "status",
                   "--dry_run", "true")
    assert dry["dry_run"] is True and cli_json(db_path, "list-facts")["items"][0]["fact"] == "task_status(t1, open)"


# --- tables never cut a value ----------------------------------------------------------------------------

def _facts_page() -> dict:
    items = [{"id": 1, "fact": "in_production(deploy_v2)", "created_at": "2026-12-02T02:50:59.578170Z",
              "supports": [f"source:{SOURCE_ID}"]},
             {"id": 2, "fact": "depends_on(payment_service, postgres_primary_cluster, replica_set_b)",
              "created_at": "2026-12-02T02:51:00.000001Z", "supports": ["asserted"]}]
    return {"items": items, "total": 2, "truncated": False}


def _pieces(value: str) -> list[str]:
    """What a table may never split: the runs between a comma, an opening parenthesis or a space."""
    return [p for p in re.split(r"[,( ]", value) if p]


@pytest.mark.parametrize("width", [80, 40])
def test_list_facts_never_cuts_an_id_or_a_term_at_80_and_40_columns(width):
    page = _facts_page()
    shown = _terminal(page, width)
    for item in page["items"]:
        for value in (item["fact"], *item["supports"]):
            for piece in _pieces(value):
                assert piece in shown, (width, piece, shown)
    assert "…" not in shown
    if "┃" in shown:  # a table: as wide as the terminal at most
        assert max(len(line) for line in shown.splitlines()) <= width


def test_the_real_command_at_80_columns_keeps_ids_whole(db_path):
    cli(db_path, "memory-remember", "deploy v2 is live", "--projections",
        json.dumps([{"predicate": "in_production", "arguments": ["deploy_v2"], "statement": "deploy v2 is live"}]),
        check=True)
    listed = cli_json(db_path, "list-facts")["items"][0]
    shown = _on_a_terminal(db_path, 80, "list-facts")
    assert "in_production(" in shown and "deploy_v2)" in shown  # whole, or wrapped after its parenthesis
    assert all(support in shown for support in listed["supports"]), shown  # source:mem_… whole
    assert max(len(line) for line in shown.splitlines()) <= 80


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.lists(st.text(st.sampled_from("ab_(), :-"), max_size=60), min_size=3, max_size=3),
                       min_size=1, max_size=4),
       width=st.integers(min_value=20, max_value=120))
def test_no_table_cuts_a_piece_of_a_value(values, width):
    """The law: at any width, every piece of every value (see _pieces) is printed whole."""
    rows = [{"id": str(i), "fact": a, "created_at": b, "supports": c} for i, (a, b, c) in enumerate(values)]
    shown = _terminal({"items": rows}, width)
    hidden = "not shown at this width: created_at" in shown  # a low-value column may go, and says so
    for row in rows:
        for column, value in row.items():
            if hidden and column == "created_at":
                continue
            for piece in _pieces(value):
                assert piece in shown, (piece, width)


# --- times, every part of a result ------------------------------------------------------------------------

def test_remember_and_recall_print_iso_times_not_epoch_seconds(db_path):
    stored = cli(db_path, "remember", "--members", '["account:admin", "host:db01"]', "--event-ts", str(NOW),
                 check=True).stdout
    recalled = cli(db_path, "recall", "--query", "account:admin", "--now", str(NOW + 60), check=True).stdout
    for shown in (stored, recalled):
        assert "2026-05-28T20:26:40Z" in shown and not re.search(r"\b1\d{9}\b", shown), shown
    # an instant among the parts of a result the text did not show
    assert "timestamp: 2026-05-28T20:26:40Z" in _terminal({"timestamp": NOW, "note": "x"}, 80, text="x")


def _sample(schema: dict, key: str, counter: list) -> object:
    """A value of `schema` with a distinct text or number at every leaf (so each leaf can be looked for)."""
    counter[0] += 1
    n = counter[0]
    kind = schema.get("type")
    if "anyOf" in schema:
        return _sample(next(s for s in schema["anyOf"] if s.get("type") != "null"), key, counter)
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}), key, counter)]
    if kind == "object":
        props = schema.get("properties") or {f"{key}_part": {"type": "string"}}
        return {k: _sample(v, k, counter) for k, v in props.items()}
    if kind == "integer":
        return 700_000 + n
    if kind == "number":
        return 0.5 + n
    if kind == "boolean":
        return True
    return f"v{n}x"


def _leaves(value) -> list:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_part_of_every_tools_result_is_shown(name, capsys):
    """For every tool: each top-level key of a result shaped by its output schema appears in the human
    rendering (its key, or every text and number in it), on a terminal and piped, unless NOT_PRINTED or an
    argument it only echoes says why not."""
    spec = REGISTRY[name]
    counter = [0]
    structured = {k: _sample(v, k, counter) for k, v in spec.output_schema.get("properties", {}).items()}
    if "variables" in structured:  # a query's answers bind its variables
        structured["bindings"] = [{v: f"{v}_value" for v in structured["variables"]}]
    for node in structured.get("proof_nodes", []):
        node.update(goal="g(1)", rule_applied="fact", children=[])  # a tree's nodes point at each other
    inputs = frozenset(spec.input_schema.get("properties", {}))
    piped = Console(file=io.StringIO(), force_terminal=False, width=100)
    render(piped, "", structured, inputs)
    shown = {"terminal": _terminal(structured, 100, inputs=inputs), "piped": piped.file.getvalue()
             + "".join(capsys.readouterr())}
    for where, text in shown.items():
        for key, value in structured.items():
            if key in NOT_PRINTED or key in inputs or key in AS_FORM and key in text_forms(structured, text):
                continue
            leaves = [leaf for leaf in _leaves(value) if not isinstance(leaf, bool) and leaf is not None]
            assert all(f"{leaf:g}" in text if isinstance(leaf, float) else str(leaf) in text for leaf in leaves) \
                and (leaves or key in text), (name, where, key, text)


def text_forms(structured: dict, text: str) -> set:
    """The AS_FORM keys whose form the rendering shows: a tree (or 'not provable'), a table, prove's lines."""
    found = set()
    if "proof_nodes" in structured and ("not provable" in text or structured["proof_nodes"][0]["goal"] in text):
        found |= {"proof_nodes", "proven"}
    if "bindings" in structured and all(v in text for b in structured["bindings"] for v in b.values()):
        found.add("bindings")
    if "proofs" in structured and "proof(s); cite the tags" in text:
        found.add("proofs")
    return found


def test_persistence_status_names_the_database_on_a_terminal(db_path):
    cli(db_path, "init", check=True)
    shown = _on_a_terminal(db_path, 80, "get-persistence-status")
    assert f"database: {db_path}" in shown and "status: active" in shown


def test_references_and_overview_show_every_part_without_json(db_path):
    cli(db_path, "remember-fact", "open(issue_42)", check=True)
    cli(db_path, "assume-fact", "open(issue_7)", "--assumption", "triage", check=True)
    cli(db_path, "define-rule", "todo(X)", "--body", "open(X)", check=True)
    for command in (["find-predicate-references", "--functor", "open"], ["get-kb-overview"]):
        structured = cli_json(db_path, *command)
        ran = cli(db_path, *command, check=True)
        text = ran.stdout + ran.stderr  # piped, what is not a row goes to standard error
        inputs = {"functor", "arity", "memory", "include_cross_memory_refs", "sample_size", "kind"}
        for key in set(structured) - set(NOT_PRINTED) - inputs:
            assert key in text or all(str(leaf) in text for leaf in _leaves(structured[key])), (command, key, text)
    refs = _on_a_terminal(db_path, 100, "find-predicate-references", "--functor", "open")
    assert "direct_facts_count: 2" in refs and "facts_referenced_in_assumptions" in refs and "open(issue_7)" in refs


def test_prove_explains_each_line(db_path):
    for drone, ts in (("drone:a", NOW - 300), ("drone:b", NOW - 200)):
        cli(db_path, "remember", "--members", json.dumps([drone, "sector:s1"]), "--event-ts", str(ts), check=True)
    cli(db_path, "define-rule", "converge(A, B, S)", "--name", "converge", "--body",
        "hedge(E1, 'DRONE_EVENT', _, _), member(E1, A), entity_type(A, drone), member(E1, S), entity_type(S, sector), "
        "hedge(E2, 'DRONE_EVENT', _, _), member(E2, B), entity_type(B, drone), member(E2, S), A @< B", check=True)
    shown = cli(db_path, "prove", "--query", "drones", "--now", str(NOW), check=True).stdout
    assert shown.startswith("1 proof(s); cite the tags"), shown
    assert "converge('drone:a', 'drone:b', 'sector:s1'): proved, confidence 1" in shown
    assert re.search(r"concluded as STEP-\d+ by RULE-\d+", shown) and "evidence: HEDGE-1, HEDGE-2" in shown
    assert "[]" not in shown
    nothing = cli(db_path, "prove", "--query", "nothing here", "--now", str(NOW), check=True).stdout
    assert nothing.startswith("no proofs: ")


# --- the reference CLI's forms ----------------------------------------------------------------------------

def test_the_reference_positional_forms_and_format_json(db_path):
    ran = cli_process(db_path, "define-rule", "reachable(X)", "--body", "edge(a, X)", check=True)
    assert ran.stdout.startswith("Asserted rule: reachable(X) :- edge(a, X)")
    cli(db_path, "assume-fact", "edge(a, b)", "--assumption", "hyp", check=True)
    assert cli(db_path, "query-logic", "reachable(X)", check=True).stdout == "b\n"
    as_json = cli(db_path, "query-logic", "reachable(X)", "--format", "json", check=True).stdout
    assert json.loads(as_json) == cli_json(db_path, "query-logic", "--goal", "reachable(X)")
    assert cli(db_path, "query-logic", "reachable(X)", "--format", "text", check=True).stdout == "b\n"
    for args, fragment in ((["query-logic", "reachable(X)", "--format", "yaml"], "--format takes json or text"),
                           (["define-rule", "p(X)", "--head", "p(X)", "--body", "q(X)"], "given twice"),
                           (["define-rule", "--body", "q(X)"], "Missing option '--head'")):
        refused = cli(db_path, *args)
        assert refused.returncode == 2 and fragment in refused.stderr, refused
    assert "p(X)" not in cli(db_path, "list-rules", check=True).stdout  # refused: nothing written


def test_the_reference_memory_group(db_path):
    assert cli(db_path, "memory", "create", "--name", "work", check=True).stdout.startswith("Created memory 'work'")
    cli(db_path, "memory", "mount", "--name", "work", "--mode", "ro", check=True)
    listed = json.loads(cli(db_path, "memory", "list", "--format", "json", check=True).stdout)
    assert {m["name"]: m["mode"] for m in listed["memories"]}["work"] == "ro"
    cli(db_path, "memory", "unmount", "--name", "work", check=True)
    assert cli(db_path, "memory", "frobnicate").returncode == 2


# --- empty answers, help ----------------------------------------------------------------------------------

def test_an_empty_answer_says_so(db_path):
    cli(db_path, "remember-fact", "edge(a, b)", check=True)
    empty = {"goal": "edge(X, c)", "variables": ["X"], "bindings": [], "values": [], "total": 0, "truncated": False}
    table = _terminal(empty, 80, inputs=frozenset({"goal"}))
    assert "┃ X ┃" in table and "no solutions" in table  # the header, and it says so
    piped = cli(db_path, "query-logic", "edge(X, Y), X = b", check=True)
    assert piped.stdout == "X\tY\n" and piped.stderr == "no solutions\n"
    assert cli(db_path, "query-logic", "edge(a, c)", check=True).stdout == "no solutions\n"
    assert cli(db_path, "query-logic", "edge(a, b)", check=True).stdout == "true\n"


def test_help_is_one_line_per_command_grouped_by_toolset(db_path):
    shown = cli_process(None, "--help", check=True, extra_env={"COLUMNS": "80"}).stdout
    lines = shown.splitlines()
    assert len(lines) <= 110, len(lines)
    commands = [line for line in lines if re.match(r"│ [a-z][a-z-]+ ", line)]
    assert len(commands) >= len(REGISTRY)
    assert not [line for line in lines if re.match(r"│ {6,}\S", line) and "─" not in line
                and lines.index(line) > next(i for i, l in enumerate(lines) if "Knowledge" in l)], \
        "a command's line wraps onto another"
    detail = cli(db_path, "query-logic", "--help", check=True).stdout
    assert " ".join(REGISTRY["query_logic"].description.split()[:8]) in " ".join(detail.split())
