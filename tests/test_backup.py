"""`datalog-memory backup DEST` and `check`'s look at the write-ahead log (issue 34, item 4): a backup holds
every write acknowledged before it began, the ones still in the -wal included (a copy of memory.db alone
loses them), it is safe while a server writes, verified before it is put in place, and restores by a copy;
`check` says when a -wal is missing or shorter than the -shm index says it was."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from memory import Memory
from memory.errors import SQLiteOnly, StorageError
from memory.store.backup import backup, wal_warnings
from memory.workers.calls import run_call
from surfaces import cli
from test_server_budgets import Wire


def _facts(db: str, like: str = "%") -> set[str]:
    with sqlite3.connect(db) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'facts'").fetchone():
            return set()  # not even the schema: everything was still in the -wal
        return {r[0] for r in conn.execute("SELECT text FROM facts WHERE text LIKE ?", (like,))}


def _unmerged(db: str, count: int) -> Memory:
    """A Memory that has written `count` facts, all still in the -wal (no checkpoint ran): kept open."""
    m = Memory(db)
    m.store.ensure_created()
    m.store._conn.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(count):
        m.add_facts([f"u({i})"])
    return m


def test_a_backup_holds_the_commits_still_in_the_wal_and_a_copy_of_the_file_alone_does_not(tmp_path):
    db = str(tmp_path / "memory.db")
    m = _unmerged(db, 40)
    try:
        plain = tmp_path / "copied.db"
        shutil.copy(db, plain)  # what users did: the file alone
        assert len(_facts(str(plain), "u(%")) < 40
        ran = cli(db, "backup", str(tmp_path / "backup.db"), "--json", check=True)
        report = json.loads(ran.stdout)
        assert report["integrity"] == "ok" and report["counts"]["facts"] == 40
        assert len(_facts(str(tmp_path / "backup.db"), "u(%")) == 40
        assert not os.path.exists(tmp_path / "backup.db-wal")  # one self-contained file
        assert not [p for p in os.listdir(tmp_path) if ".partial" in p]
    finally:
        m.close()


def test_a_backup_taken_while_a_server_writes_holds_every_write_acknowledged_before_it(tmp_path):
    db = str(tmp_path / "memory.db")
    wire = Wire(tmp_path, db)
    acknowledged: list[tuple[float, str]] = []
    stop = threading.Event()

    def write():
        i = 0
        while not stop.is_set():
            fact = f"s({i})"
            reply = wire.wait(wire.call("remember_fact", {"fact": fact}))[1]
            assert not reply["result"].get("isError"), reply
            acknowledged.append((time.monotonic(), fact))
            i += 1

    try:
        wire.initialize()
        wire.result(wire.call("remember_fact", {"fact": "s(start)"}))
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        time.sleep(0.5)
        backups = []
        for n in range(3):
            began = time.monotonic()
            target = str(tmp_path / f"backup-{n}.db")
            backup(db, target)
            backups.append((began, target))
            time.sleep(0.3)
        stop.set()
        writer.join(30)
    finally:
        assert wire.close() == 0
    for began, target in backups:
        held = _facts(target, "s(%")
        before = {fact for at, fact in acknowledged if at < began}
        assert before and before <= held, sorted(before - held)[:5]
        assert cli(target, "check").returncode == 0
    assert len(acknowledged) > 20


def test_restoring_a_backup_is_a_copy_over_the_database_with_the_servers_stopped(tmp_path):
    db = str(tmp_path / "memory.db")
    with Memory(db) as m:
        m.add_facts(["keep(1)", "keep(2)"])
        m.define_rule("kept(X)", "keep(X)")
    backup(db, str(tmp_path / "backup.db"))
    with Memory(db) as m:
        m.add_facts(["later(1)"])
    for suffix in ("-wal", "-shm"):  # the restore procedure of docs/durability.md
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    shutil.copy(tmp_path / "backup.db", db)
    assert cli(db, "check").returncode == 0
    with Memory(db) as m:
        assert run_call(m, "query_logic", {"goal": "kept(X)"}).result.text == '[{"X":1},{"X":2}]'
        assert run_call(m, "query_logic", {"goal": "later(X)"}).result.structured["total"] == 0


def test_a_backup_refuses_to_replace_a_file_or_itself_unless_told(tmp_path):
    db = str(tmp_path / "memory.db")
    with Memory(db) as m:
        m.add_facts(["x(1)"])
    (tmp_path / "old.db").write_text("not a backup")
    with pytest.raises(StorageError) as raised:
        backup(db, str(tmp_path / "old.db"))
    assert raised.value.details["reason"] == "exists"
    assert (tmp_path / "old.db").read_text() == "not a backup"
    assert backup(db, str(tmp_path / "old.db"), overwrite=True)["counts"]["facts"] == 1
    with pytest.raises(StorageError):
        backup(db, db)
    folder = tmp_path / "into"
    folder.mkdir()
    assert backup(db, str(folder))["backup"] == str(folder / "memory.db")
    ran = cli(db, "backup", str(tmp_path / "old.db"))
    assert ran.returncode == 1 and "--force" in ran.stderr


def test_a_postgresql_store_is_pointed_at_pg_dump():
    with pytest.raises(SQLiteOnly) as raised:
        backup("postgresql://user@localhost/memory", "/tmp/never.db")
    assert "pg_dump" in raised.value.message and raised.value.code == "storage_error"


def _killed_after_writes(db: str, count: int) -> None:
    code = ("import os, sys\nfrom memory import Memory\nm = Memory(sys.argv[1])\n"
            f"for i in range({count}):\n    m.add_facts([f'w({{i}})'])\nos.kill(os.getpid(), 9)\n")
    subprocess.run([sys.executable, "-c", code, db], cwd=os.path.dirname(os.path.dirname(__file__)),
                   env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))})


def test_check_says_when_the_wal_is_missing_or_shorter_than_the_index_says(tmp_path):
    source = tmp_path / "killed"
    source.mkdir()
    db = str(source / "memory.db")
    _killed_after_writes(db, 300)  # every write acknowledged, all in the -wal: kill -9 leaves it and the -shm
    assert os.path.getsize(db + "-wal") > 0 and os.path.exists(db + "-shm")
    truncated, missing = tmp_path / "truncated", tmp_path / "missing"
    shutil.copytree(source, truncated)
    shutil.copytree(source, missing)
    with open(truncated / "memory.db-wal", "r+b") as f:
        f.truncate(os.path.getsize(db + "-wal") // 2)
    os.remove(missing / "memory.db-wal")
    assert wal_warnings(db) == []
    ran = cli(str(truncated / "memory.db"), "check")
    assert ran.returncode == 1 and "shorter than" in ran.stdout and "truncated" in ran.stdout, ran.stdout
    ran = cli(str(missing / "memory.db"), "check", "--json")
    assert ran.returncode == 1 and "is missing" in json.loads(ran.stdout)["wal"][0]
    ran = cli(db, "check")
    assert ran.returncode == 0 and "wal" not in ran.stdout
    assert len(_facts(db, "w(%")) == 300  # and the intact one kept every acknowledged write
