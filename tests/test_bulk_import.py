"""Bulk import streams: rows are read as they are stored, in set-based batches of one transaction with one audit
row, and plain facts get their text and JSON without the printer and the parser.

The laws: the plain forms are exactly the general ones; the streaming reader reads exactly the rows the
whole-file reader did; a streamed import in batches leaves exactly the database a fact-by-fact import leaves
(facts, supports, counts, audit row), with counts over what the caller sees; and a bad row anywhere changes
nothing."""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import snapshot_counts
from memory import Memory
from memory.cli import bulk
from memory.cli.bulk import cell_value, read_csv, read_jsonl
from memory.clock import ManualClock
from memory.errors import DatalogMemoryError
from memory.knowledge.parsing import parse_fact, plain_fact, plain_row
from memory.knowledge.segments import resolve
from memory.access.context import KNOWN_CAPABILITIES, CallerContext
from memory.store.repository import new_fact
from memory.terms import Compound, Float, String, format_term, parse_term
from memory.terms.codec import encode_args
from memory.terms.operators import ALL_OPERATORS
from memory.terms.plain import plain_block_forms, plain_cell_forms, plain_forms
from surfaces import cli, cli_json

# --- the plain forms are the general forms ------------------------------------------------------------------

PLAIN_ATOMS = st.from_regex(r"[a-z][A-Za-z0-9_]{0,8}", fullmatch=True).filter(lambda a: a not in ALL_OPERATORS)
PLAIN_INTS = st.integers(-10 ** 18 + 1, 10 ** 18 - 1)
NAMES = st.one_of(PLAIN_ATOMS, st.sampled_from(["is", "mod", "xor", "-", "+", ":", ",", "|", "[]", "{}", ".",
                                                 "true", "fail", "aggregate_all", "call", "not", "$p", "Edge",
                                                 "_x", "a b", "é", "edge"]),
                  st.text(max_size=6))
OTHER_VALUES = st.one_of(
    st.integers(), st.booleans(), st.text(max_size=6), NAMES,
    st.floats(allow_nan=False, allow_infinity=False).map(Float), st.text(max_size=4).map(String),
    st.tuples(PLAIN_ATOMS, st.lists(PLAIN_ATOMS, min_size=1, max_size=2)).map(lambda t: Compound(t[0], tuple(t[1]))))
VALUES = st.one_of(PLAIN_ATOMS, PLAIN_INTS, OTHER_VALUES)


def general_forms(functor: str, args: tuple) -> tuple[str, str]:
    term = Compound(functor, args)
    return format_term(term), encode_args(args)


@settings(max_examples=250, deadline=None)
@given(NAMES, st.lists(VALUES, max_size=4))
def test_plain_forms_are_the_printer_s_and_the_codec_s(functor, args):
    args = tuple(args)
    forms = plain_forms(functor, args)
    if forms is not None:
        assert forms == general_forms(functor, args)
        assert parse_term(forms[0]) == Compound(functor, args)  # and the text reads back as the term


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(ALL_OPERATORS) + ["[]", "{}", "'a'", "A"]),
       st.lists(st.one_of(PLAIN_ATOMS, PLAIN_INTS), min_size=1, max_size=3))
def test_operators_and_quoted_names_are_not_plain_functors(functor, args):
    """Their facts print in operator form or quoted: the general way, always."""
    forms = plain_forms(functor, tuple(args))
    assert forms is None and plain_fact(functor, args) is None and plain_row(functor, [str(a) for a in args]) is None


@settings(max_examples=200, deadline=None)
@given(PLAIN_ATOMS, st.lists(st.one_of(PLAIN_ATOMS, PLAIN_INTS), min_size=1, max_size=5))
def test_plain_facts_take_the_plain_way(functor, args):
    """Not vacuous: every fact of plain parts gets plain forms, and new_fact stores exactly the general forms."""
    args = tuple(args)
    assert plain_forms(functor, args) is not None
    stored = new_fact(Compound(functor, args))
    assert (stored.functor, stored.arity) == (functor, len(args))
    assert (stored.text, stored.args) == general_forms(functor, args)


def general_fact(predicate: str, values: list):
    """What the readers gave before they had a plain way: print the fact, parse it back (or the error)."""
    try:
        return parse_fact(format_term(Compound(predicate, tuple(values))), "where")
    except DatalogMemoryError as error:
        return error.code


CELLS = st.one_of(PLAIN_ATOMS, PLAIN_INTS.map(str), st.from_regex(r"-?0*[0-9]{1,20}", fullmatch=True),
                  st.sampled_from(["is", "mod", "-0", "007", "1.5", "a,b", "", " a", "A", "_", "é", "[]"]),
                  st.text(max_size=5))


@settings(max_examples=400, deadline=None)
@given(NAMES, st.lists(CELLS, min_size=1, max_size=4))
def test_a_plain_csv_row_is_the_fact_the_general_way_gives(predicate, cells):
    path = Path("rows.csv")
    try:
        values = [cell_value(c, path, 1) for c in cells]
    except DatalogMemoryError:
        values = None
    stored = plain_row(predicate, cells)
    if stored is not None:
        assert values is not None
        assert stored == new_fact(general_fact(predicate, values))
        assert parse_fact(stored.text) == general_fact(predicate, values)
    if values is not None:
        fact = plain_fact(predicate, values)  # the JSON Lines reader's plain way, over values
        if fact is not None:
            assert fact == general_fact(predicate, values)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(PLAIN_ATOMS, PLAIN_INTS.map(str)), min_size=1, max_size=4))
def test_csv_rows_of_plain_cells_take_the_plain_way(cells):
    assert plain_row("edge", cells) is not None


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3).flatmap(lambda width: st.lists(st.lists(
    st.one_of(PLAIN_ATOMS, PLAIN_INTS.map(str)), min_size=width, max_size=width), min_size=1, max_size=6)))
def test_a_block_of_plain_rows_has_each_row_s_forms(rows):
    texts, encoded = plain_block_forms("edge", "\n".join(",".join(r) for r in rows), len(rows[0]))
    assert list(zip(texts, encoded)) == [(f"edge({t})", j) for t, j in map(plain_cell_forms, rows)]


def test_a_fact_longer_than_an_argument_may_be_takes_the_general_way():
    cells = ["a" * 40_000, "b" * 40_000]
    assert plain_row("edge", cells) is None and plain_fact("edge", cells) is None
    assert general_fact("edge", cells) == "invalid_arguments"


# --- the streaming reader reads what the whole-file reader read ------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="ab,\"\r\n 1é", max_size=40), st.integers(1, 9))
def test_streamed_lines_are_the_whole_file_s(tmp_path, text, block):
    """Read in blocks of any size, a file splits into the lines the whole-file readers saw: the csv module's
    (a file opened with newline="") and JSON Lines' (`\n` only)."""
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))

    def rows(lines):
        reader, out = csv.reader(lines), []
        try:
            for row in reader:
                out.append((row, reader.line_num))
        except csv.Error as exc:
            out.append(("error", str(exc), reader.line_num))
        return out
    with mock.patch.object(bulk, "READ_BLOCK", block):
        assert rows(bulk._csv_lines(bulk.read_blocks(path))) == rows(io.StringIO(text, newline=""))
        assert list(bulk._newline_lines(path)) == (text.split("\n")[:-1] if text.endswith("\n") else
                                                   text.split("\n") if text else [])


@pytest.mark.parametrize("block", [1, 3, 1 << 20])
def test_a_byte_that_is_not_utf8_is_named_by_its_line_whatever_the_block(tmp_path, block):
    path = tmp_path / "bad.csv"
    path.write_bytes("a,b\nc,d\né,\xe9\n".encode("utf-8").replace(b"\xc3\xa9,\xc3\xa9", b"\xc3\xa9,\xe9"))
    with mock.patch.object(bulk, "READ_BLOCK", block), pytest.raises(DatalogMemoryError, match=r"bad\.csv:3: not UTF-8"):
        list(read_csv(path, "p", False))


CSV_CELLS = st.sampled_from(["a", "b1", "n42", "x_Y", "0", "7", "-12", "123456789012345678", "is", "007", "-0",
                              "1.5", "x y", "", '"q"', '"a,b"', "é"])
CSV_ROWS = st.lists(st.lists(CSV_CELLS, min_size=1, max_size=3).map(",".join), max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(CSV_ROWS, st.sampled_from(["\n", "\r\n"]), st.booleans(), st.booleans(), st.integers(1, 40),
       st.sampled_from(["edge", "is", "p_2"]))
def test_plain_blocks_read_as_the_row_by_row_reader_reads(tmp_path, rows, ending, last_ending, header, block,
                                                          predicate):
    """Whole blocks of plain rows taken at once give the facts, and the errors, the csv module's row-by-row
    reading gives, wherever the blocks fall."""
    path = tmp_path / "rows.csv"
    path.write_bytes((ending.join(rows) + (ending if last_ending and rows else "")).encode("utf-8"))

    def read(facts):
        try:
            return list(facts)
        except DatalogMemoryError as error:
            return error.message
    with mock.patch.object(bulk, "READ_BLOCK", block):
        by_row = read(bulk._csv_rows(path, predicate, header, bulk.read_blocks(path), 0, None))
        assert read(read_csv(path, predicate, header)) == by_row


def test_a_plain_file_is_read_in_blocks(tmp_path, monkeypatch):
    """Not vacuous: a file of plain rows never reaches the row-by-row reader."""
    path = tmp_path / "plain.csv"
    path.write_text("src,dst\n" + "".join(f"n{i},{i}\n" for i in range(100)))
    monkeypatch.setattr(bulk, "READ_BLOCK", 64)
    monkeypatch.setattr(bulk, "_csv_rows", None)
    facts = list(read_csv(path, "edge", True))
    assert len(facts) == 100 and facts[7] == ("edge", 2, "edge(n7, 7)", '["n7",7]')


@pytest.mark.parametrize("block", [16, 1 << 20])
@pytest.mark.parametrize("ending", ["\n", "", "\nd,e\n"])
def test_a_line_longer_than_the_bound_is_refused_without_reading_it_whole(tmp_path, monkeypatch, block, ending):
    monkeypatch.setattr(bulk, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(bulk, "READ_BLOCK", block)
    path = tmp_path / "long.csv"
    path.write_text("a,b\n" + "c" * 62 + ",c\n" + "c" * 65 + ending)  # 64 bytes pass, 65 do not
    with pytest.raises(DatalogMemoryError, match=r"long\.csv:3: a line longer than 64 bytes"):
        list(read_csv(path, "p", False))


@pytest.mark.parametrize("name, content", [("digits.csv", "1\n" + "7" * 4001 + "\n"),
                                           ("digits.jsonl", "[1]\n[" + "7" * 4001 + "]\n")])
def test_an_integer_longer_than_the_parser_reads_is_refused_naming_its_line(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    reader = read_csv(path, "p", False) if name.endswith(".csv") else read_jsonl(path, "p")
    with pytest.raises(DatalogMemoryError, match=rf"{name}:2: an integer with more than 4000 digits"):
        list(reader)


# --- a streamed import is a fact-by-fact import ------------------------------------------------------------

OWNER = CallerContext(principal="owner", session_id="s1", project_remote="https://example.org/payroll",
                      capabilities=KNOWN_CAPABILITIES)
IMPORTER = CallerContext(principal="importer", session_id="s2", project_remote="https://example.org/other",
                         capabilities=KNOWN_CAPABILITIES)
START = "2026-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def start_state(tmp_path_factory) -> Path:
    """A store where the importer already sees some facts (asserted, assumed) and others exist only as another
    project's source projections, which the importer must count as new."""
    base = tmp_path_factory.mktemp("bulk")
    path = base / "start.db"
    with Memory(str(path), context=OWNER, global_path=str(base / "g.db"), clock=ManualClock(START)) as m:
        m.memory_remember("hidden things", projections=[
            {"predicate": "p", "arguments": [f"h{i}"], "statement": f"h{i}"} for i in range(3)])
    with Memory(str(path), context=IMPORTER, global_path=str(base / "g.db"), clock=ManualClock(START)) as m:
        m.add_facts(["p(a0)", "p(a1)", "q(1, x)"])
        m.assume_fact("p(s0)", "guess")
    return path


POOL = ["p(a0)", "p(a1)", "p(a2)", "p(h0)", "p(h1)", "p(s0)", "p(n0)", "p(n1)", "q(1, x)", "q(2, y)", "r('A b', 2.5)",
        "r(\"s\", [1, 2])", "s(f(g(1)))"]


def database(path: Path) -> dict:
    with Memory(str(path), context=OWNER) as m, m.store.read() as conn:
        return {"facts": conn.execute("SELECT * FROM facts ORDER BY id").fetchall(),
                "supports": conn.execute("SELECT * FROM supports ORDER BY id").fetchall(),
                "audit": conn.execute("SELECT at, actor, operation, segment, payload FROM audit_log "
                                      "ORDER BY id").fetchall(),
                "segments": conn.execute("SELECT * FROM segments ORDER BY id").fetchall()}


def fact_by_fact(path: Path, texts: list[str]) -> tuple[int, int]:
    """The model: each fact on its own through the single-fact write, counts over what the caller sees."""
    with Memory(str(path), context=IMPORTER, clock=ManualClock(START)) as m:
        kb = m.require_for("add_fact_terms", None)
        with kb.repository.write() as tx:
            segment = resolve(tx, None, write=True)
            seen = kb.visibility(tx)
            before = tx.facts.count(segment.id, seen)
            for text in texts:
                tx.facts.support(segment.id, new_fact(parse_fact(text)), "asserted", "", "importer", seen)
            added = tx.facts.count(segment.id, seen) - before
            if added:
                tx.segments.bump_generation(segment.id)
            tx.audit.record("importer", "import_facts", segment.name, {"facts": len(texts), "added": added})
    return added, len(texts) - added


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(POOL), max_size=30), st.integers(1, 8))
@example(["p(a2)", "p(n0)", "p(n1)", "q(2, y)", "s(f(g(1)))", "p(a0)", "p(n0)"], 3)  # all new, then some not
def test_a_streamed_import_leaves_the_database_a_fact_by_fact_import_leaves(start_state, tmp_path, texts, batch):
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: no file of another example's is left
    streamed, model = folder / "streamed.db", folder / "model.db"
    for target in (streamed, model):
        shutil.copy(start_state, target)
    with Memory(str(streamed), context=IMPORTER, clock=ManualClock(START)) as m:
        stored: list[int] = []
        counts = m.add_fact_terms((parse_fact(t) for t in texts), chunk=batch, progress=stored.append)
    assert counts == fact_by_fact(model, texts)
    assert database(streamed) == database(model)
    assert sum(stored) == len(texts) and all(n <= batch for n in stored)


def test_rows_are_read_one_batch_ahead_of_what_is_stored(mem):
    """Streaming: the import never holds more than one batch of rows it has not stored."""
    pulled = 0
    ahead = []

    def rows():
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield Compound("n", (i,))

    def progress(n):
        stored.append(n)
        ahead.append(pulled - sum(stored))
    stored: list[int] = []
    assert mem.add_fact_terms(rows(), chunk=64, progress=progress) == (1000, 0)
    assert max(ahead) == 0 and len(stored) == 16  # each batch stored before the next is read


@pytest.mark.sqlite_only("SQLite's page cache (PRAGMA cache_size); PostgreSQL's server sizes its own buffers")
def test_a_bulk_stream_gives_its_page_cache_back(mem):
    with mem.store.read() as conn:
        before = conn.execute("PRAGMA cache_size").fetchone()[0]
    sizes = []

    def progress(n):
        sizes.append(mem.store._connection(for_write=True).execute("PRAGMA cache_size").fetchone()[0])
    mem.add_fact_terms((Compound("n", (i,)) for i in range(30)), chunk=10, progress=progress)
    assert sizes[0] == before and sizes[1] == -64 * 1024  # grown from the second batch on
    with mem.store.read() as conn:
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == before


def test_hidden_facts_count_as_new_once(start_state, tmp_path):
    path = tmp_path / "s.db"
    shutil.copy(start_state, path)
    with Memory(str(path), context=IMPORTER) as m:
        texts = ["p(h0)", "p(h0)", "p(a0)", "p(new)", "p(h1)"]
        assert m.add_fact_terms([parse_fact(t) for t in texts], chunk=2) == (3, 2)
    with Memory(str(path), context=OWNER) as m:  # the owner saw the hidden ones already
        assert m.add_fact_terms([parse_fact(t) for t in ["p(h2)", "p(h0)", "p(other)"]]) == (1, 2)


# --- through the command line: one transaction, one audit row, all or nothing ----------------------------

CLI_BATCH = 10_000  # cli/main.py BULK_CHUNK: the files below are larger than two batches


def _audit(db: str) -> list:
    with Memory(db) as m, m.store.read() as conn:
        return [(op, json.loads(p)) for op, p in conn.execute("SELECT operation, payload FROM audit_log ORDER BY id")]


def test_a_file_larger_than_a_batch_is_one_import_with_one_audit_row(tmp_path):
    db = str(tmp_path / "m.db")
    cli(db, "remember-fact", "--fact", "edge(0, 1)", check=True)
    rows = 2 * CLI_BATCH + 500
    path = tmp_path / "edges.csv"
    path.write_text("".join(f"{i},{i + 1}\n" for i in range(rows)) + "0,1\n")  # one repeat, one already there
    result = cli_json(db, "import", str(path), "--predicate", "edge")
    assert result == {"file": str(path), "facts_read": rows + 1, "facts_added": rows - 1}
    assert _audit(db)[1:] == [("import_facts", {"added": rows - 1, "facts": rows + 1})]
    with Memory(db) as m:
        assert m.list_facts(functor="edge", limit=1).total == rows
        assert m.query_logic(f"edge({rows - 1}, X)").bindings == [{"X": str(rows)}]


@pytest.mark.parametrize("bad, reason", [("x,y,z", "3 cell(s) where the first row has 2"),
                                         ("1,1.0e309", "1.0e309 is not a finite number"),
                                         ("caf\xe9,1", "not UTF-8 text")])
def test_a_bad_row_late_in_a_big_file_changes_nothing(tmp_path, bad, reason):
    db = str(tmp_path / "m.db")
    cli(db, "remember-fact", "--fact", "before(1)", check=True)
    with Memory(db) as m:
        before = snapshot_counts(m)
    path = tmp_path / "late.csv"
    rows = 2 * CLI_BATCH + 10
    path.write_bytes(("".join(f"n{i},{i}\n" for i in range(rows)) + bad + "\n").encode("latin-1"))
    done = cli(db, "import", str(path), "--predicate", "edge")
    assert done.returncode == 1 and f"{path}:{rows + 1}: " in done.stderr and reason in done.stderr, done.stderr
    with Memory(db) as m:
        assert snapshot_counts(m) == before
