"""The foundation's Python API: facts, rules, supports, audit, locations, bad input."""

import os
import subprocess
import sys

import pytest

from memory import Memory
from memory.errors import DatalogMemoryError, InvalidArguments, InvalidProgram, NotFound, TermSyntaxError
from memory.store import global_data_dir, resolve_db_path

from conftest import snapshot_counts


def audit_ops(m):
    with m.store.read() as conn:
        return [r[0] for r in conn.execute("SELECT operation FROM audit_log ORDER BY id")]


def test_remember_fact_canonicalizes_and_is_unique(mem):
    first = mem.remember_fact("human( socrates )")
    again = mem.remember_fact("human(socrates)")
    assert first.fact == "human(socrates)" and first.created
    assert not again.created
    page = mem.list_facts()
    assert page.total == 1 and page.items[0]["fact"] == "human(socrates)"
    assert page.items[0]["supports"] == ["asserted"]


def test_every_mutation_writes_one_audit_row(mem):
    mem.remember_fact("p(a)")
    mem.remember_fact("p(a)")
    mem.define_rule("q(X)", "p(X)")
    mem.forget_fact("p(a)")
    mem.define_rule("q(X)", "p(X)")
    assert audit_ops(mem) == ["remember_fact", "define_rule", "forget_fact"]  # repeats change nothing
    with mem.store.read() as conn:
        at, actor = conn.execute("SELECT at, actor FROM audit_log ORDER BY id LIMIT 1").fetchone()
    assert actor == "tester"
    assert at.endswith("Z") and len(at.split(".")[1]) == 7  # microseconds + Z


def test_forget_removes_the_asserted_support(mem):
    mem.remember_fact("p(a)")
    change = mem.forget_fact("p(a)")
    assert change.removed and mem.list_facts().total == 0
    with pytest.raises(NotFound):
        mem.forget_fact("p(a)")


def test_forget_keeps_a_fact_with_other_supports(mem):
    mem.remember_fact("p(a)")
    with mem.store.write() as conn:
        fact_id = conn.execute("SELECT id FROM facts").fetchone()[0]
        conn.execute("INSERT INTO supports (fact_id, kind, ref, actor, created_at) VALUES (?, 'assumption', 'h1', 't', 'now')",
                     (fact_id,))
    change = mem.forget_fact("p(a)")
    assert not change.removed and change.supports == ["assumption:h1"]
    assert mem.list_facts().total == 1


def test_rules_are_checked_and_stored_canonically(mem):
    change = mem.define_rule("mortal(X)", "human(X)")
    assert change.rule == "mortal(X) :- human(X)" and change.created
    assert not mem.define_rule("mortal(X)", " human(X) ").created
    assert mem.list_rules().items[0]["head"] == "mortal/1"


@pytest.mark.parametrize("head, body, error, fragment", [
    ("p(X)", "q(Y)", InvalidProgram, "head variable X"),
    ("p(X)", "q(X), \\+ p(X)", InvalidProgram, "not stratified"),
    ("p(X", "q(X)", TermSyntaxError, "line 1, column 4"),
    ("p(X)", "q(X", TermSyntaxError, "line 1, column 4"),
    ("p(X) :- r(X)", "q(X)", InvalidArguments, "single goal"),
    ("p(X)", "q(X)), evil(", TermSyntaxError, "expected an operator"),
    ("X", "q(X)", InvalidProgram, "rule head"),
    ("p(X)", "call(X)", InvalidProgram, "call/1 is not supported"),
    ("is(X, 1)", "q(X)", InvalidProgram, "built-in"),
])
def test_bad_rules_are_refused_and_change_nothing(mem, head, body, error, fragment):
    mem.define_rule("base(X)", "q(X)")
    before = snapshot_counts(mem)
    with pytest.raises(error) as info:
        mem.define_rule(head, body)
    assert fragment in str(info.value)
    assert snapshot_counts(mem) == before


def test_rule_that_would_break_stratification_with_existing_rules(mem):
    mem.define_rule("a(X)", "b(X), \\+ c(X)")
    before = snapshot_counts(mem)
    with pytest.raises(InvalidProgram, match="not stratified"):
        mem.define_rule("c(X)", "a(X)")
    assert snapshot_counts(mem) == before


BAD_FACTS = [
    (None, InvalidArguments, "required"),
    (42, InvalidArguments, "must be a string"),
    ("", InvalidArguments, "empty"),
    ("   \n\t", InvalidArguments, "empty"),
    ("p(X)", InvalidArguments, "ground"),
    ("p(_)", InvalidArguments, "ground"),
    ("mortal(X) :- human(X)", InvalidArguments, "rule"),
    ("human(socrates", TermSyntaxError, "line 1, column 15"),
    ("p(a) q(b)", TermSyntaxError, "line 1, column 6"),
    ("\"text\"", InvalidArguments, "atom or compound"),
    ("3.14", InvalidArguments, "atom or compound"),
    ("X", InvalidArguments, "atom or compound"),
    ("p(a\x00)", InvalidArguments, "NUL"),
    ("p('\\x0\\')", TermSyntaxError, "NUL"),
    ("p(\udcff)", InvalidArguments, "UTF-8"),
    ("p(" + "a" * (1 << 20) + ")", InvalidArguments, "too long"),
    ("(a, b)", InvalidArguments, "control construct"),
    ("X = 1", InvalidArguments, "built-in"),
    ("a = b", InvalidArguments, "built-in"),
    ("'$neg1'(a)", InvalidArguments, "reserved"),
    ("seg:p(a)", InvalidArguments, "module-qualified"),
]


@pytest.mark.parametrize("fact, error, fragment", BAD_FACTS)
def test_bad_facts_are_refused_and_change_nothing(mem, fact, error, fragment):
    mem.remember_fact("keep(me)")
    before = snapshot_counts(mem)
    with pytest.raises(error) as info:
        mem.remember_fact(fact)
    assert fragment in str(info.value)
    assert isinstance(info.value, DatalogMemoryError) and info.value.code in ("invalid_arguments", "syntax_error")
    assert snapshot_counts(mem) == before


def test_unknown_segment_is_an_error_not_the_default(mem):
    with pytest.raises(NotFound, match="Memory not mounted: nope"):
        mem.remember_fact("p(a)", memory="nope")
    assert mem.list_facts().total == 0


def test_read_only_segment_refuses_writes(mem):
    with mem.store.write() as conn:
        conn.execute("INSERT INTO segments (name, mode, created_at) VALUES ('frozen', 'ro', 'now')")
    before = snapshot_counts(mem)
    with pytest.raises(DatalogMemoryError) as info:
        mem.remember_fact("p(a)", memory="frozen")
    assert info.value.code == "read_only" and str(info.value) == "Memory is read-only"
    assert snapshot_counts(mem) == before


def test_facts_persist_across_reopen(db_path):
    with Memory(db_path) as m:
        m.remember_fact("p('Hello, World', \"s\", 1.5, -3, f([a|T]))".replace("T", "b"))
    with Memory(db_path) as m:
        assert [i["fact"] for i in m.list_facts().items] == ["p('Hello, World', \"s\", 1.5, -3, f([a|b]))"]


def test_database_location_precedence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DATALOG_MEMORY_DB")
    assert resolve_db_path() == str(tmp_path / ".datalog-memory" / "memory.db")
    monkeypatch.setenv("DATALOG_MEMORY_DB", str(tmp_path / "env.db"))
    assert resolve_db_path() == str(tmp_path / "env.db")
    assert resolve_db_path(str(tmp_path / "flag.db")) == str(tmp_path / "flag.db")


def test_global_data_dir_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert global_data_dir() == tmp_path / "data" / "datalog-memory"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert str(global_data_dir()).endswith(".local/share/datalog-memory")


def test_two_processes_write_one_file(db_path):
    """A second process's writes are visible to an open Memory (no stale cache)."""
    with Memory(db_path) as m:
        m.define_rule("q(X)", "p(X)")
        m.remember_fact("p(a)")
        assert m.query_logic("q(X)").total == 1
        code = (
            "import sys; sys.path.insert(0, %r); from memory import Memory; "
            "m = Memory(%r); [m.remember_fact(f'p(n{i})') for i in range(20)]"
        ) % (os.getcwd(), db_path)
        subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
        assert m.query_logic("q(X)").total == 21


def test_concurrent_writers_all_land(db_path):
    """Four processes writing to one file at once: every acknowledged write is there, none fails on locks."""
    Memory(db_path).init()
    code = (
        "import sys; sys.path.insert(0, %r); from memory import Memory; "
        "m = Memory(%r); w = sys.argv[1]; "
        "[m.remember_fact(f'row({w}, {i})') for i in range(60)]; "
        "[m.assume_fact(f'hyp({w}, {i})', 'h' + w) for i in range(20)]"
    ) % (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), db_path)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(w)], stderr=subprocess.PIPE, text=True) for w in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Memory(db_path) as m:
        assert m.query_logic("row(W, I)").total == 240
        assert m.query_logic("hyp(W, I)").total == 80
        with m.store.read() as conn:
            assert conn.execute("SELECT count(*) FROM audit_log").fetchone()[0] == 320
