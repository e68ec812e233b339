"""Memory segments: lifecycle, isolation, read-only mounts, cross-segment rules, global scope."""

import pytest

from memory import Memory
from memory.access import CallerContext
from memory.access.context import KNOWN_CAPABILITIES
from memory.errors import Conflict, InvalidArguments, NotFound, ReadOnly

MUTATIONS = [
    lambda m, seg: m.remember_fact("p(z)", seg),
    lambda m, seg: m.forget_fact("p(a)", seg),
    lambda m, seg: m.define_rule("q(X)", "p(X)", seg),
    lambda m, seg: m.forget_rule(seg, name="anything"),
    lambda m, seg: m.clear_context("p(_)", seg),
    lambda m, seg: m.update_fact("p(a)", "p(b)", seg),
    lambda m, seg: m.upsert_fact("p(c)", seg),
    lambda m, seg: m.rename_predicate("p", "r", 1, seg),
    lambda m, seg: m.assume_fact("p(d)", "h", seg),
    lambda m, seg: m.retract_assumption("h", seg),
    lambda m, seg: m.retract_assumptions("*", seg),
    lambda m, seg: m.restore_snapshot("s", seg),
    lambda m, seg: m.import_program("p(e).", seg),
]


def test_lifecycle_and_isolation(mem):
    mem.create_memory("work")
    with pytest.raises(NotFound, match="Memory not mounted: work"):
        mem.remember_fact("p(a)", "work")  # created, not yet mounted
    mem.mount_memory("work")
    mem.remember_fact("p(a)", "work")
    mem.remember_fact("p(b)")
    assert [r["X"] for r in mem.query_logic("p(X)", "work").bindings] == ["a"]
    assert [r["X"] for r in mem.query_logic("p(X)").bindings] == ["b"]
    mem.clear_context("p(_)", "work")  # zpm B001: this once cleared default instead
    assert [r["X"] for r in mem.query_logic("p(X)").bindings] == ["b"]
    with pytest.raises(Conflict, match="already exists"):
        mem.create_memory("work")
    with pytest.raises(Conflict, match="is already mounted"):
        mem.mount_memory("work")
    mem.unmount_memory("work")
    with pytest.raises(NotFound):
        mem.query_logic("p(X)", "work")
    with pytest.raises(InvalidArguments, match="Cannot unmount the default memory"):
        mem.unmount_memory("default")
    with pytest.raises(InvalidArguments):
        mem.create_memory("../escape")


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_read_only_mount_refuses_every_mutation(mem, mutation):
    mem.create_memory("archive")
    mem.mount_memory("archive")
    mem.remember_fact("p(a)", "archive")
    mem.assume_fact("p(a)", "h", "archive")
    mem.save_snapshot("s", "archive")
    mem.mount_memory("archive", "ro")
    from conftest import snapshot_counts
    before = snapshot_counts(mem)
    with pytest.raises(ReadOnly):
        mutation(mem, "archive")
    assert snapshot_counts(mem) == before
    assert [r["X"] for r in mem.query_logic("p(X)", "archive").bindings] == ["a"]  # reads still work


def test_rules_read_other_segments(mem):
    mem.create_memory("inventory")
    mem.mount_memory("inventory", "ro")
    with mem.store.write() as conn:  # seed the read-only segment directly
        conn.execute("UPDATE segments SET mode = 'rw' WHERE name = 'inventory'")
    mem.remember_fact("stock(widget, 3)", "inventory")
    mem.remember_fact("stock(gadget, 0)", "inventory")
    mem.mount_memory("inventory", "ro")
    mem.remember_fact("wanted(widget)")
    mem.remember_fact("wanted(gadget)")
    mem.define_rule("available(X)", "wanted(X), inventory:stock(X, N), N > 0")
    mem.define_rule("missing(X)", "wanted(X), \\+ (inventory:stock(X, N), N > 0)")
    assert [r["X"] for r in mem.query_logic("available(X)").bindings] == ["widget"]
    assert [r["X"] for r in mem.query_logic("missing(X)").bindings] == ["gadget"]
    proof = mem.explain_why("available(widget)").detailed_tree
    leaf = [c for c in proof["children"] if c["goal"].startswith("inventory:")][0]
    assert leaf["memory"] == "inventory" and leaf["supports"] == ["asserted"]


# Writing global segments (shared by every project) needs memory_write_global, which is never a default.
GLOBAL_WRITER = CallerContext(capabilities=KNOWN_CAPABILITIES)


def test_global_segments_are_shared_between_projects(tmp_path):
    one = Memory(str(tmp_path / "one" / "memory.db"), context=GLOBAL_WRITER)
    two = Memory(str(tmp_path / "two" / "memory.db"))
    one.create_memory("team", scope="global")
    one.mount_memory("team")
    one.remember_fact("member(alice)", "team")
    listed = {m["name"]: m for m in two.list_memories()["memories"]}
    assert listed["team"] == {"name": "team", "scope": "global", "mounted": False, "mode": None}
    two.mount_memory("team", "ro")
    assert [r["X"] for r in two.query_logic("member(X)", "team").bindings] == ["alice"]
    with pytest.raises(ReadOnly):
        two.remember_fact("member(mallory)", "team")
    two.define_rule("colleague(X)", "team:member(X)")
    one.remember_fact("member(bob)", "team")  # another project's write is seen at once
    assert [r["X"] for r in two.query_logic("colleague(X)").bindings] == ["alice", "bob"]
    leaf = two.explain_why("colleague(bob)").detailed_tree["children"][0]
    assert leaf["goal"] == "team:member(bob)" and leaf["memory"] == "team" and leaf["supports"] == ["asserted"]
    with pytest.raises(Conflict):
        two.create_memory("team")  # names are unique across scopes
    two.unmount_memory("team")
    assert {m["name"]: m["mounted"] for m in two.list_memories()["memories"]}["team"] is False
    assert [r["X"] for r in one.query_logic("member(X)", "team").bindings] == ["alice", "bob"]
    one.close()
    two.close()


def test_mounts_persist_for_the_project(db_path):
    with Memory(db_path) as m:
        m.create_memory("notes")
        m.mount_memory("notes", "ro")
    with Memory(db_path) as m:
        assert {x["name"]: x["mode"] for x in m.list_memories()["memories"]}["notes"] == "ro"


def test_references_and_rename_see_rules_in_global_segments(tmp_path):
    m = Memory(str(tmp_path / "p" / "memory.db"), context=GLOBAL_WRITER)
    m.create_memory("shared", scope="global")
    m.mount_memory("shared")
    m.remember_fact("task_status(a, open)")
    m.define_rule("open_here(X)", "default:task_status(X, open)", "shared")
    refs = m.find_predicate_references("task_status", 2, "__all__")
    assert [(r["head"], r["memory"], r["qualifier"]) for r in refs["cross_memory_refs"]] == [
        ("open_here(X)", "shared", "default")]
    report = m.rename_predicate("task_status", "status_of", 2, propagate_cross_memory_refs=True)
    assert report["cross_memory_impact"]["warnings"] == [
        {"memory": "shared", "refs": 1, "reason": "global segment, not rewritten"}]
    assert [r["rule"] for r in m.list_rules("shared").items] == ["open_here(X) :- default:task_status(X, open)"]
    m.close()


def test_bulk_import_into_a_global_segment_lands_in_the_global_database(tmp_path, monkeypatch):
    from surfaces import cli, cli_json
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("DATALOG_MEMORY_CAPABILITIES", ",".join(KNOWN_CAPABILITIES))  # global writes need it
    db = str(tmp_path / "p.db")
    cli(db, "create-memory", "--name", "shared", "--scope", "global", check=True)
    cli(db, "mount-memory", "--name", "shared", check=True)
    rows = tmp_path / "rows.csv"
    rows.write_text("a,1\nb,2\n")
    cli(db, "import", str(rows), "--predicate", "item", "--memory", "shared", check=True)
    other = str(tmp_path / "other.db")
    cli(other, "mount-memory", "--name", "shared", "--mode", "ro", check=True)
    assert cli_json(other, "query-logic", "--goal", "item(X, N)", "--memory", "shared")["total"] == 2
