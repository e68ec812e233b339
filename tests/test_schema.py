"""Migrations build exactly schema/schema.sql; versions are recorded; newer databases are refused."""

import re
from pathlib import Path

import apsw
import pytest

from memory.errors import SchemaTooNew
from memory.store import Store, current_version, load_migrations, migrate, open_connection, schema_sql_path

ROOT = Path(__file__).resolve().parents[1]


def _strip_sql(sql: str | None) -> str:
    if sql is None:
        return ""
    sql = re.sub(r"--[^\n]*", "", sql)
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.S)
    sql = re.sub(r"\s+", " ", sql).strip().lower()
    return re.sub(r" ?([(),]) ?", r"\1", sql)  # ALTER TABLE ... ADD COLUMN spaces its commas its own way


def describe(conn: apsw.Connection) -> dict:
    """Everything about a schema that matters, read back from SQLite itself."""
    out = {}
    for kind, name, table, sql in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ):
        entry = {"type": kind, "table": table}
        if kind == "table":
            entry["columns"] = conn.execute(f"SELECT * FROM pragma_table_xinfo('{name}')").fetchall()
            entry["foreign_keys"] = conn.execute(f"SELECT * FROM pragma_foreign_key_list('{name}')").fetchall()
            entry["indexes"] = sorted(
                (r[1], r[2], r[3], r[4]) for r in conn.execute(f"SELECT * FROM pragma_index_list('{name}')")
            )
            entry["sql"] = _strip_sql(sql)
        elif kind == "index":
            entry["columns"] = conn.execute(f"SELECT * FROM pragma_index_xinfo('{name}')").fetchall()
            entry["sql"] = _strip_sql(sql)
        else:
            entry["sql"] = _strip_sql(sql)
        out[name] = entry
    return out


def test_migrations_build_schema_sql():
    from_migrations = apsw.Connection(":memory:")
    migrate(from_migrations)
    from_file = apsw.Connection(":memory:")
    from_file.execute(schema_sql_path().read_text(encoding="utf-8"))
    assert describe(from_migrations) == describe(from_file)


def test_schema_sql_is_what_the_migrations_generate():
    """The file's statements are the migrations' (laid out, commented); regenerate with --write."""
    from memory.store.schema_file import generate

    current = schema_sql_path().read_text(encoding="utf-8")
    text, unplaced = generate(current)
    assert unplaced == []
    assert text == current, "run: python -m memory.store.schema_file --write"


def test_the_generator_keeps_the_comments_places_a_new_object_and_reports_a_lost_comment():
    from memory.store.schema_file import generate, read_notes

    current = schema_sql_path().read_text(encoding="utf-8")
    start = current.index("CREATE TABLE memory_vectors")
    end = current.index(");", start) + 3
    without = current[:start] + current[end:]  # as if a migration had just added the table
    with_ghost = without.replace("    name TEXT NOT NULL UNIQUE,", "    ghost TEXT,  -- a column no migration has\n"
                                 "    name TEXT NOT NULL UNIQUE,", 1)
    text, unplaced = generate(with_ghost)
    assert unplaced == ["segments: -- a column no migration has"]
    order, notes = read_notes(text)
    assert order[-1] == "memory_vectors"  # the new object comes last, with no comment yet
    assert not any(line.strip() for line in notes["memory_vectors"].above) and notes["memory_vectors"].lines == {}
    assert notes["segments"].lines["name TEXT NOT NULL UNIQUE"] == "an atom; 'default' for the default memory"
    assert "ghost" not in text


def test_every_table_and_view_of_schema_sql_has_its_paragraph():
    from memory.store.schema_file import read_notes

    conn = apsw.Connection(":memory:")
    migrate(conn)
    kinds = dict(conn.execute("SELECT name, type FROM sqlite_schema"))
    order, notes = read_notes(schema_sql_path().read_text(encoding="utf-8"))
    undescribed = [name for name in order if kinds[name] in ("table", "view")
                   and not any(line.strip("- ") for line in notes[name].above)]
    assert undescribed == []


def test_schema_sql_is_the_repository_file():
    assert schema_sql_path().resolve() == (ROOT / "schema" / "schema.sql").resolve()


def test_migrations_are_recorded_and_idempotent(db_path):
    conn = open_connection(db_path)
    migrations = load_migrations()
    rows = conn.execute("SELECT version, name, checksum FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == [m.version for m in migrations]
    assert [r[2] for r in rows] == [m.checksum for m in migrations]
    assert migrate(conn) == migrations[-1].version
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(migrations)
    assert conn.execute("SELECT name FROM segments").fetchall() == [("default",)]


def test_pragmas(db_path):
    conn = open_connection(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_newer_database_is_refused(db_path):
    conn = open_connection(db_path)
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x', 'now')")
    conn.close()
    with pytest.raises(SchemaTooNew) as info:
        open_connection(db_path)
    assert "999" in info.value.message and "upgrade" in info.value.message
    assert info.value.code == "schema_too_new"


def test_failed_migration_leaves_nothing_behind(tmp_path):
    folder = tmp_path / "migs"
    folder.mkdir()
    (folder / "0001_good.sql").write_text("CREATE TABLE a (x INTEGER);")
    (folder / "0002_bad.sql").write_text("CREATE TABLE b (x INTEGER); CREATE TABLE a (y INTEGER);")
    conn = apsw.Connection(":memory:")
    with pytest.raises(apsw.SQLError):
        migrate(conn, load_migrations(folder))
    assert current_version(conn) == 1
    assert conn.execute("SELECT name FROM sqlite_schema WHERE name = 'b'").fetchall() == []


def test_gap_in_numbering_is_an_error(tmp_path):
    folder = tmp_path / "migs"
    folder.mkdir()
    (folder / "0001_a.sql").write_text("SELECT 1;")
    (folder / "0003_c.sql").write_text("SELECT 1;")
    with pytest.raises(Exception, match="without gaps"):
        load_migrations(folder)


def test_audit_log_is_append_only(db_path):
    conn = open_connection(db_path)
    conn.execute("INSERT INTO audit_log (at, actor, operation, payload) VALUES ('t', 'a', 'op', '{}')")
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        conn.execute("UPDATE audit_log SET actor = 'b'")
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        conn.execute("DELETE FROM audit_log")


def test_database_is_created_on_first_write_only(tmp_path):
    path = tmp_path / "sub" / "memory.db"
    store = Store(str(path))
    with store.read() as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    assert not path.exists()
    with store.write() as conn:
        conn.execute("UPDATE segments SET generation = generation + 1")
    assert path.exists()
    store.close()


def test_write_transaction_rolls_back_on_error(db_path):
    store = Store(db_path)
    with pytest.raises(RuntimeError):
        with store.write() as conn:
            conn.execute("UPDATE segments SET generation = 41")
            raise RuntimeError("boom")
    with store.read() as conn:
        assert conn.execute("SELECT generation FROM segments").fetchone()[0] == 0


def test_database_errors_inside_a_write_become_storage_errors_and_roll_back(db_path):
    from memory.errors import StorageError
    store = Store(db_path)
    with pytest.raises(StorageError, match="database error"):
        with store.write() as conn:
            conn.execute("UPDATE segments SET generation = 7")
            conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
                         "VALUES (1, 'p', 0, 'p', 'not json', 'now')")  # violates CHECK (json_valid(args))
    with store.read() as conn:
        assert conn.execute("SELECT generation FROM segments").fetchone()[0] == 0


def test_lock_held_by_another_writer_times_out_with_a_storage_error(tmp_path, monkeypatch):
    from memory.errors import StorageError
    from memory.store import connection
    db = str(tmp_path / "busy.db")
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)
    holder = Store(db)
    holder.ensure_created()
    other = Store(db)
    other.ensure_created()
    with holder.write():
        with pytest.raises(StorageError, match="cannot start a write transaction"):
            with other.write():
                pass
    with other.write() as conn:  # free again
        conn.execute("UPDATE segments SET generation = generation")


def test_the_newest_audit_row_of_an_operation_is_found_through_an_index(store_location):
    """Status shows the last integrity check: the audit log is not read backwards from its end to find it (on a
    log of a million rows without one, that read the whole log on every status call)."""
    from memory import Memory
    with Memory(store_location, actor="tester") as memory:
        memory.remember_fact("p(a)")
        memory.get_persistence_status(check_integrity=True)
        memory.remember_fact("p(b)")
        with memory.store.read() as conn:
            if memory.store.dialect == "sqlite":
                plan = " ".join(str(r[-1]) for r in conn.execute(
                    "EXPLAIN QUERY PLAN SELECT at, payload FROM audit_log WHERE operation = ? ORDER BY id DESC LIMIT 1",
                    ("integrity_check",)))
            else:
                plan = " ".join(r[0] for r in conn.execute(
                    "EXPLAIN SELECT at, payload FROM audit_log WHERE operation = 'integrity_check' "
                    "ORDER BY id DESC LIMIT 1"))
        assert "audit_log_by_operation" in plan, plan
        assert memory.get_persistence_status()["integrity"]["ok"] is True
