"""Erase is erasure: after `memory_forget {action: delete, erase: true}` no byte of the memory's content is left
in the database file, its -wal or its -shm; the audit log keeps a tombstone (that it happened, by whom, when)."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

from memory import Memory
from memory.access import CallerContext
from memory.store import load_migrations, migrate
from memory.tools import call_tool

TEXT = "Zanzibarquux keeps the vault code Qwertyplugh 7193 under the blue lamp"
STATEMENT = "Zanzibarquux knows vaultcodeqwertyplugh"
KEY = "erase-key-xyzzyfrobnitz"
OWNER = CallerContext(principal="keeper", session_id="s1", project_remote="https://example.org/vault")


def remember_secret(m: Memory) -> dict:
    stored = m.memory_remember(TEXT, idempotency_key=KEY, projections=[
        {"predicate": "vault_code", "arguments": ["zanzibarquux_person", "qwertyplugh_code"], "statement": STATEMENT},
        {"predicate": "keeper", "arguments": ["zanzibarquux_person"], "statement": "Zanzibarquux guards plughroom"}])
    return stored


SECRETS = [TEXT, STATEMENT, KEY, "Zanzibarquux", "zanzibarquux", "Qwertyplugh", "qwertyplugh", "vaultcodeqwertyplugh",
           "plughroom", "vault_code(zanzibarquux_person, qwertyplugh_code)", "zanzibarquux_person", "qwertyplugh_code"]


def raw_bytes(path: str) -> bytes:
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        file = Path(path + suffix)
        if file.exists():
            out += file.read_bytes()
    return out


def leftovers(path: str, secrets: list[str]) -> list[str]:
    data = raw_bytes(path)
    return [s for s in secrets if s.encode("utf-8") in data or s.encode("utf-16-le") in data]


def exercise(m: Memory, ident: str) -> None:
    """Everything that copies a memory's content elsewhere: proofs, materialized conclusions, audit payloads
    of knowledge tools that name its facts, searches, and the digest in the receipt."""
    m.define_rule("guarded(X)", "keeper(X), vault_code(X, _)")
    assert m.query_logic("guarded(X)").total == 1
    m.materialize()  # proof edges name the projected facts too
    m.remember_fact("secondary(x)")
    assert m.explain_why("guarded(zanzibarquux_person)", record_proof=True).recorded["written"] == 1
    m.remember_fact("vault_code(zanzibarquux_person, qwertyplugh_code)")  # asserted too: an audit row names it
    m.forget_fact("vault_code(zanzibarquux_person, qwertyplugh_code)")   # and another one
    assert m.memory_search("Zanzibarquux")["total"] == 1
    assert m.memory_get(ident)["source_text"] == TEXT


def test_erase_leaves_no_byte_in_db_wal_or_shm(db_path):
    with Memory(db_path, context=OWNER) as m:
        for i in range(30):  # other memories around it, so its pages are shared and the index has several segments
            m.memory_remember(f"ordinary note number {i} about lamps", projections=[
                {"predicate": "note", "arguments": [i], "statement": f"note {i}"}])
        stored = remember_secret(m)
        exercise(m, stored["id"])
        assert leftovers(db_path, SECRETS), "the test must see the content before the erase"
        out = call_tool(m, "memory_forget", {"ids": [stored["id"]], "action": "delete", "erase": True,
                                             "reason": "user asked"}).structured
        assert out["erased"] and out["wal_truncated"] is True
        assert leftovers(db_path, SECRETS) == []  # with the connection still open: the -wal and -shm too
        # the tombstone: id and times, no content
        got = m.memory_get(stored["id"])
        assert got["source_text"] is None and got["erased"] and got["status"] == "deleted"
        assert got["sha256"] is None and all(p["fact"] == "" for p in got["projections"])
        assert m.memory_search("Zanzibarquux")["total"] == 0 and m.memory_search("lamps")["total"] == 30
        with m.store.read() as conn:
            assert conn.execute("SELECT count(*) FROM derived").fetchone()[0] == 0
            actor, payload = conn.execute("SELECT actor, payload FROM audit_log WHERE operation = 'memory_forget'"
                                          ).fetchone()
            assert actor == "keeper" and json.loads(payload)["ids"] == [stored["id"]] and json.loads(payload)["erase"]
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')") is not None
    assert leftovers(db_path, SECRETS) == []


def test_the_audit_log_never_records_a_digest_or_key(store_file):
    db_path = store_file
    with Memory(db_path, context=OWNER) as m:
        stored = remember_secret(m)
        with m.store.read() as conn:
            payloads = " ".join(r[0] for r in conn.execute("SELECT payload FROM audit_log"))
    assert stored["sha256"] not in payloads and KEY not in payloads and TEXT not in payloads


def test_erase_in_a_database_written_before_secure_delete(tmp_path):
    """Migrated from 0005 (no secure_delete): the first erase rebuilds the file once, so stale copies go too."""
    path = str(tmp_path / "old.db")
    conn = apsw.Connection(path)
    conn.execute("PRAGMA journal_mode=WAL")
    migrate(conn, load_migrations()[:5])
    conn.execute("INSERT INTO sources VALUES ('src_0', 'seed', '', 'keeper', 'model_inferred', 'model_inferred', "
                 "'2026-01-01T00:00:00.000000Z', NULL)")
    conn.close()
    with Memory(path, context=OWNER) as m:
        stored = remember_secret(m)
        with m.store.write() as c:  # leave stale copies in free space, as an old version would have
            c.execute("PRAGMA secure_delete=OFF")
            c.execute("CREATE TABLE scratch (x TEXT)")
            c.execute("INSERT INTO scratch SELECT s.text FROM sources AS s, json_each('[1,2,3,4,5,6,7,8,9,10]') "
                      "WHERE s.id = ?", (stored["source_id"],))
            c.execute("DROP TABLE scratch")
        m.store.close()
        out = m.memory_forget([stored["id"]], action="delete", erase=True)
        assert out["wal_truncated"] is True
        with m.store.read() as c:
            assert c.execute("SELECT count(*) FROM maintenance").fetchone()[0] == 0
    assert leftovers(path, SECRETS) == []


def test_erase_keeps_what_is_not_the_memorys_alone(store_file):
    db_path = store_file
    """Fact texts and arguments another fact still holds stay, with the audit rows of whoever stored them."""
    with Memory(db_path, context=OWNER) as m:
        m.remember_fact("keeper(zanzibarquux_person)")  # asserted independently of the memory
        stored = remember_secret(m)
        m.memory_forget([stored["id"]], action="delete", erase=True)
        assert [f["fact"] for f in m.list_facts(functor="keeper").items] == ["keeper(zanzibarquux_person)"]
        with m.store.read() as conn:
            payload = json.loads(conn.execute("SELECT payload FROM audit_log WHERE operation = 'remember_fact'"
                                              ).fetchone()[0])
    assert payload == {"fact": "keeper(zanzibarquux_person)", "created": True}
    assert leftovers(db_path, [TEXT, STATEMENT, KEY, "qwertyplugh", "plughroom"]) == []


def test_an_erase_never_rewrites_another_principals_audit_rows(db_path):
    """Alice erases a session memory whose text and statement are words bob's own writes contain: bob's audit
    rows (and a token's) stay as they were written; alice's own row naming the same words is redacted."""
    alice = CallerContext(principal="alice", session_id="s1", project_remote="https://example.org/a")
    bob = CallerContext(principal="bob", session_id="s1", project_remote="https://example.org/b")
    with Memory(db_path, context=bob) as b:
        b.remember_fact("deploy(prod_cluster_7)")
        b.remember_fact("e(x)")
        with b.store.read() as conn:
            before = conn.execute("SELECT id, payload FROM audit_log WHERE actor = 'bob' ORDER BY id").fetchall()
    with Memory(db_path, context=alice) as a:
        a.remember_fact("note(prod)")
        stored = a.memory_remember("prod", scope="session", projections=[
            {"predicate": "tag", "arguments": ["prod_cluster_7"], "statement": "e"}])
        a.memory_forget([stored["id"]], action="delete", erase=True)
        with a.store.read() as conn:
            after = conn.execute("SELECT id, payload FROM audit_log WHERE actor = 'bob' ORDER BY id").fetchall()
            own = json.loads(conn.execute("SELECT payload FROM audit_log WHERE actor = 'alice' AND "
                                          "operation = 'remember_fact'").fetchone()[0])
    assert after == before and len(before) == 2
    assert own["fact"] == "[erased]" and "redacted_at" in own  # her own copy of the erased text goes
