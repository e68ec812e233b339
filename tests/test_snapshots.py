"""Snapshots in the database, their Prolog form, restore across restarts, persistence status."""

import anyio
import pytest
from mcp import Client

from memory import Memory
from memory.errors import InvalidArguments, NotFound

from surfaces import cli, cli_json, server_params


def fill(m):
    m.remember_fact("server(alpha, up)")
    m.remember_fact("weight('Big Box', 2.5)")
    m.assume_fact("server(beta, up)", "optimistic")
    m.assume_fact("server(alpha, up)", "monitoring_ok")
    m.define_rule("healthy(S)", "server(S, up)")


def test_snapshot_holds_facts_rules_and_assumptions_and_restores_them(mem):
    fill(mem)
    saved = mem.save_snapshot("before")
    assert saved == {"name": "before", "memory": "default", "replaced": False, "facts": 2, "rules": 1, "assumptions": 2}
    assert mem.export_snapshot("before") == mem.export_program()
    mem.retract_assumption("optimistic")
    mem.forget_fact("weight('Big Box', 2.5)")
    mem.define_rule("extra(X)", "server(X, down)")
    mem.restore_snapshot("before")
    assert [r["S"] for r in mem.query_logic("healthy(S)").bindings] == ["alpha", "beta"]
    assert sorted(mem.list_assumptions()["assumptions"]) == ["monitoring_ok", "optimistic"]
    assert [r["rule"] for r in mem.list_rules().items] == ["healthy(S) :- server(S, up)"]
    status = mem.get_belief_status("server(alpha, up)")
    assert status["supports"] == ["asserted", "assumption:monitoring_ok"]


def test_saving_again_says_it_replaced(mem):
    fill(mem)
    assert mem.save_snapshot("s")["replaced"] is False
    mem.remember_fact("new(fact)")
    again = mem.save_snapshot("s")
    assert again["replaced"] is True and again["facts"] == 3
    assert [s["name"] for s in mem.list_snapshots()["snapshots"]] == ["s"]


@pytest.mark.parametrize("name", ["../x", "Bad", "with space", "", "a" * 200])
def test_snapshot_names_are_atoms(mem, name):
    with pytest.raises(InvalidArguments):
        mem.save_snapshot(name)


def test_restoring_an_unknown_snapshot_changes_nothing(mem):
    fill(mem)
    with pytest.raises(NotFound, match="Snapshot not found: nope"):
        mem.restore_snapshot("nope")
    assert mem.list_facts().total == 3


def test_restore_is_durable_across_a_server_restart(db_path):
    with Memory(db_path) as m:
        fill(m)
        m.save_snapshot("good")
        m.clear_context("server(_, _)")

    async def restore(client):
        return await client.call_tool("restore_snapshot", {"name": "good"})

    async def query(client):
        return await client.call_tool("query_logic", {"goal": "healthy(S)"})

    async def session(scenario):
        async with Client(server_params(db_path), mode="legacy") as client:
            return await scenario(client)
    assert not anyio.run(session, restore).is_error
    result = anyio.run(session, query)  # a new server process
    assert result.structured_content["total"] == 2


def test_snapshot_round_trips_byte_for_byte_through_export_and_import(tmp_path):
    db = str(tmp_path / "m.db")
    with Memory(db) as m:
        fill(m)
        m.save_snapshot("first")
    exported = tmp_path / "first.pl"
    cli(db, "snapshot-export", "first", str(exported), check=True)
    cli(db, "snapshot-import", str(exported), "--name", "second", check=True)
    second = tmp_path / "second.pl"
    cli(db, "snapshot-export", "second", str(second), check=True)
    assert second.read_bytes() == exported.read_bytes()
    # and the file loads into another database as the same knowledge
    other = str(tmp_path / "other.db")
    cli(other, "import", str(exported), check=True)
    assert cli(other, "export", check=True).stdout == exported.read_text()
    assert cli_json(other, "get-belief-status", "--fact", "server(beta, up)")["justifications"] == ["optimistic"]


def test_persistence_status(db_path):
    with Memory(db_path) as m:
        fill(m)
        m.save_snapshot("nightly")
        status = m.get_persistence_status()
        assert status["status"] == "active" and status["journal_mode"] == "wal"
        assert status["database"] == db_path and status["schema_version"] >= 3
        assert status["last_snapshot"]["name"] == "nightly" and status["integrity"] is None
        assert status["last_checkpoint"]["busy"] is False
        assert status["last_checkpoint"]["checkpointed_frames"] == status["last_checkpoint"]["wal_frames"]
        checked = m.get_persistence_status(check_integrity=True)
        assert checked["integrity"]["ok"] is True
        assert m.get_persistence_status()["integrity"]["at"] == checked["integrity"]["at"]
