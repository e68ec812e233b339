"""Storage that disappears, fills or turns read-only under a running process (issue 34, items 2 and 3):
writes are refused with a typed storage_error naming the cause, the status tool says `degraded` with the
reason, nothing is acknowledged that is not on disk, a restart says out loud that it starts an empty
memory, and a read-only file or file system opens read-only (reads, queries, proofs and exports work).

A full disk is a small tmpfs and a read-only file system a read-only bind mount where this process may
mount (root); SQLite's max_page_count (the same "database or disk is full") and permission bits stand in
elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import uuid

import pytest

from memory import Memory
from memory.errors import StorageError
from memory.workers.calls import run_call
from surfaces import cli
from test_server_budgets import Wire

ROOT_USER = os.geteuid() == 0


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def tmpfs(path, size: str):
    """A small file system at `path` (skipped where this process cannot mount)."""
    path.mkdir(parents=True, exist_ok=True)
    if not ROOT_USER or shutil.which("mount") is None or not _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                                                                     str(path)):
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextlib.contextmanager
def read_only_view(folder, view):
    """`folder` as a read-only file system at `view` (a read-only bind mount; skipped where none can be made)."""
    view.mkdir(parents=True, exist_ok=True)
    if not ROOT_USER or not _mount("--bind", str(folder), str(view)):
        pytest.skip("cannot bind-mount here")
    try:
        if not _mount("-o", "remount,bind,ro", str(view)):
            pytest.skip("cannot remount read-only here")
        yield view
    finally:
        subprocess.run(["umount", "-l", str(view)], capture_output=True)


def _error(outcome) -> dict:
    assert outcome.kind == "error", outcome.result.text
    return outcome.result.structured["error"]


def _count(db: str, goal: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM facts WHERE text LIKE ?", (goal,)).fetchone()[0]


# --- the database folder removed under a running server ---------------------------------------------------

@pytest.mark.parametrize("created_by", ["before the server", "the server's first write"])
def test_a_removed_folder_refuses_writes_reports_degraded_and_acknowledges_nothing_more(tmp_path, created_by):
    """Whether the database existed when the server started (its workers were told) or the server created it
    (its warm workers never opened it): after the removal, nothing answers from an empty memory."""
    folder = tmp_path / "data"
    db = str(folder / "memory.db")
    if created_by == "before the server":
        with Memory(db) as m:
            m.add_facts(["g(k0)"])
    wire = Wire(tmp_path, db, {"DATALOG_MEMORY_WORKERS": "2"})
    try:
        wire.initialize()
        assert "Asserted" in wire.result(wire.call("remember_fact", {"fact": "g(k1)"}))["content"][0]["text"]
        shutil.rmtree(folder)
        acknowledged, refused = [], []
        for i in range(2, 12):
            reply = wire.wait(wire.call("remember_fact", {"fact": f"g(k{i})"}))[1]["result"]
            (refused if reply.get("isError") else acknowledged).append(reply)
        assert acknowledged == []
        error = refused[0]["_meta"]["datalog-memory/error"]
        assert error["code"] == "storage_error" and error["reason"] == "database_removed"
        assert "removed" in refused[0]["content"][0]["text"]
        status = wire.result(wire.call("get_persistence_status", {}))
        assert status["structuredContent"]["status"] == "degraded"
        assert "removed" in status["structuredContent"]["problem"]
        assert status["structuredContent"]["reason"] == "database_removed"
        # An evaluating call (in a worker) does not answer from an empty memory either.
        query = wire.result(wire.call("query_logic", {"goal": "g(X)"}))
        assert query.get("isError") and query["_meta"]["datalog-memory/error"]["reason"] == "database_removed"
    finally:
        assert wire.close() == 0
    assert not folder.exists()  # nothing recreated it behind the refusals


def test_a_server_started_where_no_database_is_says_so(tmp_path):
    db = str(tmp_path / "gone" / "memory.db")
    wire = Wire(tmp_path, db)
    try:
        wire.initialize()
    finally:
        wire.close()
    assert any(f"no database at {db}" in line for line in wire.stderr), wire.stderr


def test_a_fresh_worker_told_a_database_exists_does_not_answer_from_an_empty_one(tmp_path):
    db = str(tmp_path / "memory.db")
    with Memory(db) as m:
        m.add_facts(["w(1)"])
    os.remove(db)
    m = Memory(db)
    m.store.expected = True  # what a worker's start message says when the server had the file
    error = _error(run_call(m, "query_logic", {"goal": "w(X)"}))
    assert error["reason"] == "database_removed"
    assert not os.path.exists(db)


def test_a_database_replaced_under_a_process_is_not_written(tmp_path):
    db = str(tmp_path / "memory.db")
    m = Memory(db)
    run_call(m, "remember_fact", {"fact": "r(1)"})
    os.rename(db, db + ".old")
    with Memory(db) as other:
        other.add_facts(["other(1)"])
    error = _error(run_call(m, "remember_fact", {"fact": "r(2)"}))
    assert error["reason"] == "database_removed" and "replaced" in error["message"]
    assert _count(db, "r(%)") == 0


# --- a full disk ------------------------------------------------------------------------------------------

def test_a_write_past_the_page_limit_is_a_storage_error_and_the_next_call_works():
    db = f"/tmp/dm-full-{uuid.uuid4().hex}.db"
    try:
        m = Memory(db)
        run_call(m, "remember_fact", {"fact": "p(0)"})
        with m.store.read() as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
        m.store._conn.execute(f"PRAGMA max_page_count={pages + 2}")
        outcomes = [run_call(m, "remember_fact", {"fact": f'p({i}, "{"x" * 3000}")'}) for i in range(10)]
        failed = [o for o in outcomes if o.kind != "ok"]
        assert failed and all(o.kind == "error" for o in failed)
        assert {_error(o)["code"] for o in failed} == {"storage_error"}
        assert {_error(o)["reason"] for o in failed} == {"disk_full"}
        assert run_call(m, "query_logic", {"goal": "p(0)"}).result.text == "[{}]"
        assert run_call(m, "get_persistence_status", {}).kind == "ok"
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(db + suffix)


def test_a_full_disk_is_storage_error_everywhere_and_the_status_says_degraded(tmp_path):
    with tmpfs(tmp_path / "small", "2m") as folder:
        db = str(folder / "memory.db")
        m = Memory(db)
        acknowledged = 0
        for i in range(2000):
            outcome = run_call(m, "remember_fact", {"fact": f'big({i}, "{"x" * 2000}")'})
            if outcome.kind != "ok":
                break
            acknowledged += 1
        error = _error(outcome)
        assert error["code"] == "storage_error" and error["reason"] == "disk_full"
        status = run_call(m, "get_persistence_status", {})
        assert status.kind == "ok", status.result.text  # was InternalError: FullError
        assert status.result.structured["status"] == "degraded" and "full" in status.result.structured["problem"]
        assert status.result.structured["reason"] == "disk_full"
        assert status.result.structured["last_failure"]["reason"] == "disk_full"
        assert run_call(m, "query_logic", {"goal": "big(0, _)"}).result.text == "[{}]"
        m.close()
        assert _count(db, "big(%") == acknowledged  # every acknowledged write is on disk, nothing more


def test_a_cli_import_onto_a_full_disk_is_a_storage_error_and_changes_nothing(tmp_path):
    facts = tmp_path / "facts.pl"
    facts.write_text("".join(f'big({i}, "{"x" * 50}").\n' for i in range(20000)))
    with tmpfs(tmp_path / "small", "3m") as folder:
        db = str(folder / "memory.db")
        cli(db, "remember-fact", "--fact", "x(1)", check=True)
        ran = cli(db, "import", str(facts))
        assert ran.returncode == 1 and "StorageError" in ran.stderr and "full" in ran.stderr, ran.stderr
        assert "InternalError" not in ran.stderr and "cannot rollback" not in ran.stderr
        assert _count(db, "big(%") == 0 and _count(db, "x(1)") == 1


# --- read-only files and file systems ---------------------------------------------------------------------

def _seeded(folder) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    db = str(folder / "memory.db")
    with Memory(db) as m:
        m.add_facts(["a(1)", "a(2)"])
        m.define_rule("b(X)", "a(X)")
    return db


def _check_read_only(db: str) -> None:
    m = Memory(db)
    try:
        assert run_call(m, "query_logic", {"goal": "b(X)"}).result.text == '[{"X":1},{"X":2}]'
        proof = run_call(m, "explain_why", {"fact": "b(1)"})
        assert proof.kind == "ok" and proof.result.structured["proven"]
        assert "a(1)." in m.export_program(None)
        error = _error(run_call(m, "remember_fact", {"fact": "a(3)"}))
        assert error["code"] == "storage_error" and error["reason"] == "read_only"
        assert "read-only" in error["message"]
        status = run_call(m, "get_persistence_status", {})
        assert status.kind == "ok" and status.result.structured["status"] == "degraded"
        assert "read-only" in status.result.structured["problem"]
        assert status.result.structured["reason"] == "read_only" and status.result.structured["read_only"] is True
        assert status.result.structured["last_failure"]["reason"] == "read_only"
    finally:
        m.close()


def test_a_database_on_a_read_only_file_system_opens_read_only(tmp_path):
    _seeded(tmp_path / "data")
    with read_only_view(tmp_path / "data", tmp_path / "view") as view:
        db = str(view / "memory.db")
        assert not os.path.exists(db + "-shm")  # closed cleanly: SQLite cannot create the index it reads with
        _check_read_only(db)
        ran = cli(db, "query-logic", "--goal", "a(X)", "--json")
        assert ran.returncode == 0 and json.loads(ran.stdout)["total"] == 2, ran.stdout
        ran = cli(db, "remember-fact", "--fact", "a(9)")
        assert ran.returncode == 1 and "StorageError" in ran.stderr and "read-only" in ran.stderr


@pytest.mark.skipif(ROOT_USER, reason="permission bits do not stop root")
def test_a_read_only_file_opens_read_only(tmp_path):
    db = _seeded(tmp_path / "data")
    os.chmod(db, 0o444)
    os.chmod(tmp_path / "data", 0o555)
    try:
        _check_read_only(db)
    finally:
        os.chmod(tmp_path / "data", 0o755)
        os.chmod(db, 0o644)


def test_a_read_only_copy_with_unmerged_commits_is_refused_not_answered_without_them(tmp_path):
    """A -wal that holds commits, without the -shm SQLite needs to read it on a read-only file system: the
    open is refused with the reason, never answered from the main file alone (which lacks those commits)."""
    data = tmp_path / "data"
    db = _seeded(data)
    keep = Memory(db)
    keep.store.ensure_created()
    with keep.store.read() as conn:  # a reader holds the WAL open, so later commits stay in it
        conn.execute("PRAGMA wal_autocheckpoint=0")
    keep.add_facts(["late(1)"])
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(db, copy / "memory.db")
    shutil.copy(db + "-wal", copy / "memory.db-wal")
    keep.close()
    assert os.path.getsize(copy / "memory.db-wal") > 0
    with read_only_view(copy, tmp_path / "view") as view:
        with pytest.raises(StorageError) as raised:
            with Memory(str(view / "memory.db")) as m:
                m.query_logic("late(X)")
        assert raised.value.details["reason"] == "read_only" and "-wal" in raised.value.message


def test_over_http_a_removed_folder_refuses_writes_and_the_status_says_why(tmp_path):
    from surfaces import HttpServer, run_http_client

    folder = tmp_path / "data"
    server = HttpServer(str(folder / "memory.db"))

    async def scenario(client):
        first = await client.call_tool("remember_fact", {"fact": "h(1)"})
        shutil.rmtree(folder)
        later = [await client.call_tool("remember_fact", {"fact": f"h({i})"}) for i in range(2, 6)]
        status = await client.call_tool("get_persistence_status", {})
        return first, later, status

    try:
        first, later, status = run_http_client(server.url, "legacy", scenario)
    finally:
        server.stop()
    assert not first.is_error
    assert all(r.is_error and r.meta["datalog-memory/error"]["reason"] == "database_removed" for r in later)
    assert status.structured_content["status"] == "degraded"
    assert status.structured_content["reason"] == "database_removed"
    assert not folder.exists()
