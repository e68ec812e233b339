"""PostgreSQL as the store: the parameter style and each dialect's forms, one schema in two dialects, serialized writes (ids become visible
in order, which the change feed needs), and what only an SQLite file has failing clearly."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, settings, strategies as st

from conftest import by_hand, postgresql_server
from memory import Memory
from memory.errors import InvalidArguments, SQLiteOnly, StorageError
from memory.store import load_migrations, open_connection, open_store
from memory.store.dialect import UnsupportedStatement, placeholders
from memory.store.postgresql import WRITE_LOCK, PostgresConnection, PostgresStore

LATEST = load_migrations()[-1].version  # both dialects' histories end at the same version


# --- the parameter style, and what each dialect writes its own way ------------------------------------------

@pytest.mark.parametrize("sqlite, postgresql", [
    ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = %s AND c = %s"),
    ("SELECT '?', 'x%' FROM t WHERE b LIKE 'a%' AND c = ?", "SELECT '?', 'x%%' FROM t WHERE b LIKE 'a%%' AND c = %s"),
    ("SELECT \"?\" FROM t WHERE x = :name", "SELECT \"?\" FROM t WHERE x = %(name)s"),
    ("SELECT 1 -- a ? in a comment\nFROM t WHERE a::text = ?", "SELECT 1 \nFROM t WHERE a::text = %s"),
    ("SELECT 'it''s ?', 5 % 2", "SELECT 'it''s ?', 5 %% 2"),
])
def test_only_placeholders_take_psycopgs_style(sqlite, postgresql):
    assert placeholders(sqlite).sql == postgresql


@pytest.mark.parametrize("statement", [
    "INSERT OR IGNORE INTO s (a) VALUES (1)", "SELECT group_concat(k) FROM t CROSS JOIN m ON m.a = t.a",
    "SELECT 1 FROM f WHERE id IN (SELECT value FROM json_each('[1]'))", "DELETE FROM temp.x", "SELECT max(1.5, b)",
])
def test_no_statement_is_rewritten(statement):
    """Law: without placeholders or `%`, PostgreSQL gets the statement as written; SQLite's own forms included
    (the repository writes PostgreSQL's from `conn.sql`, nothing translates them)."""
    assert placeholders(statement).sql == statement


def test_numbered_parameters_are_reordered():
    styled = placeholders("SELECT ?2, ?1, ?2")
    assert styled.sql == "SELECT %s, %s, %s" and styled.order == (1, 0, 1)
    assert placeholders("SELECT ?, ?").order is None


def test_a_statement_that_mixes_parameter_styles_or_leaves_a_quote_open_is_refused():
    with pytest.raises(UnsupportedStatement):
        placeholders("SELECT ? WHERE a = :name")
    with pytest.raises(UnsupportedStatement):
        placeholders("SELECT 'open")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab?%:'_ ", max_size=30))
def test_a_literal_is_copied_byte_for_byte(text):
    """Law: whatever a string literal holds (placeholders, percent signs, colons, doubled quotes), PostgreSQL gets
    the same literal (psycopg reads `%%` as `%`), and no parameter is found inside it."""
    literal = "'" + text.replace("'", "''") + "'"
    styled = placeholders(f"SELECT {literal}, ?")
    assert styled.sql == f"SELECT {literal.replace('%', '%%')}, %s" and styled.order is None


def test_each_dialects_forms_mean_the_same_on_its_store(store_location):
    """Conformance of `conn.sql` (memory/store/dialect.py): every form a statement takes from its connection
    gives the same rows on SQLite and PostgreSQL."""
    store = open_store(store_location)
    with store.write() as conn:
        d = conn.sql
        assert d.name == conn.dialect
        conn.execute(f"CREATE TEMP TABLE forms (position {d.generated_key}, label TEXT, items TEXT)")
        assert conn.insert_rows("forms", ("label", "items"),
                                [("b", '["x", "y"]'), ("a", '{"ids": ["m1", "m2"]}'), ("c", "[]")]) == 3
        assert conn.insert_rows("forms", ("label", "items"), iter(())) == 0
        assert conn.execute("SELECT position, label FROM forms ORDER BY position").fetchall() == \
            [(1, "b"), (2, "a"), (3, "c")]
        assert conn.execute(f"SELECT label FROM forms WHERE {d.in_list('label')} ORDER BY label",
                            (d.listed(["c", "a", "z"]),)).fetchall() == [("a",), ("c",)]
        assert conn.execute(f"SELECT label FROM forms WHERE {d.in_list('position')}",
                            (d.listed([2]),)).fetchall() == [("a",)]
        assert conn.execute(f"SELECT count(*) FROM forms WHERE {d.in_list('label')}",
                            (d.listed([]),)).fetchall() == [(0,)]
        assert conn.execute(f"SELECT j.value FROM forms AS f, {d.elements('f.items', 'j')} WHERE f.label = ?",
                            ("b",)).fetchall() == [("x",), ("y",)]
        assert conn.execute(f"SELECT j.value FROM forms AS f, {d.elements('f.items', 'j', 'ids')} "
                            "WHERE f.label = ?", ("a",)).fetchall() == [("m1",), ("m2",)]
        joined = d.concat("label, ',' ORDER BY label DESC")
        assert conn.execute(f"SELECT {joined} FROM forms").fetchall() == [("c,b,a",)]
        assert conn.execute(f"SELECT g.label FROM forms AS f {d.ordered_join} forms AS g ON g.position = f.position + 1 "
                            "ORDER BY f.position").fetchall() == [("a",), ("c",)]
        conn.execute("DROP TABLE forms")
    store.close()


# --- one schema, two dialects ----------------------------------------------------------------------------------

def _sqlite_shape() -> dict:
    conn = open_connection(":memory:")
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE 'memory_fts_%'")]
    shape = {t: {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')} for t in tables}
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger'")}
    conn.close()
    return {"relations": shape, "triggers": triggers}


def _postgresql_shape(url: str) -> dict:
    conn = PostgresConnection(url)
    shape: dict[str, set] = {}
    for table, column in conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                      "WHERE table_schema = 'public'"):
        shape.setdefault(table, set()).add(column)
    triggers = {r[0] for r in conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
    conn.close()
    return {"relations": shape, "triggers": triggers}


def test_both_dialects_define_the_same_tables_views_columns_and_triggers(postgresql_location):
    """The history and the PostgreSQL migrations generated from it describe one schema: every table and view
    with the same columns, every trigger under the same name. The differences are the ones
    migrations/postgresql/differences/0012.sql names: FTS5's
    memory_fts is a plain table there (its rows keyed by `rowid`, SQLite's hidden column), the view the
    projection-key triggers read is a function, and TRUNCATE (which SQLite lacks) is refused on the audit log."""
    url = postgresql_location
    store = PostgresStore(url)
    store.ensure_created()
    store.close()
    sqlite, postgresql = _sqlite_shape(), _postgresql_shape(url)
    sqlite["relations"].pop("memory_projection_key_rows")
    postgresql["relations"]["memory_fts"].discard("rowid")
    assert postgresql["relations"] == sqlite["relations"]
    assert postgresql["triggers"] - {"audit_log_no_truncate"} == sqlite["triggers"]
    with by_hand(url) as conn:
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == LATEST


def test_no_view_answers_a_boolean_where_sqlite_answers_0_or_1(postgresql_location):
    """A view copied from SQLite's text keeps its meaning only if no comparison is one of its columns: SQLite
    gives 0 or 1 there, PostgreSQL a boolean (such a view needs its own form: migrations/postgresql/differences)."""
    store = PostgresStore(postgresql_location)
    store.ensure_created()
    store.close()
    with by_hand(postgresql_location) as conn:
        booleans = conn.execute("SELECT c.table_name, c.column_name FROM information_schema.columns AS c "
                                "JOIN information_schema.views AS v ON v.table_name = c.table_name "
                                "AND v.table_schema = c.table_schema "
                                "WHERE c.table_schema = 'public' AND c.data_type = 'boolean'").fetchall()
        views = conn.execute("SELECT count(*) FROM information_schema.views WHERE table_schema = 'public'").fetchone()
    assert views[0] >= 8 and booleans == []


def _sqlite_indexes() -> dict[str, list[str]]:
    """Every index the SQLite schema declares, by name: its columns as SQLite orders its entries, that is with
    the row id last when the table has an integer primary key (SQLite keeps the id in every index of such a
    table). Unique indexes are left out: their key is what makes them unique, the id is not part of it."""
    conn = open_connection(":memory:")
    out = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                                 "AND name NOT LIKE 'memory_fts_%'").fetchall():
        info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        keys = [r[1] for r in info if r[5]]
        row_id = keys if len(keys) == 1 and [r[2] for r in info if r[5]] == ["INTEGER"] else []
        for _, name, unique, origin, _ in conn.execute(f'PRAGMA index_list("{table}")').fetchall():
            if origin == "c" and not unique:
                out[name] = [r[2] for r in conn.execute(f'PRAGMA index_info("{name}")')] + row_id
    conn.close()
    return out


def test_every_sqlite_index_has_a_postgresql_twin_in_the_same_order(postgresql_location):
    """PostgreSQL's indexes hold their entries in SQLite's order, the integer id last: without it "the newest
    fact of a predicate" (asked for every inserted fact by the change feed and by every warm lookup) read the
    whole predicate, and importing 100,000 edges took 605 s."""
    store = PostgresStore(postgresql_location)
    store.ensure_created()
    store.close()
    with by_hand(postgresql_location) as conn:
        found = {name: columns for name, columns in conn.execute(
            "SELECT i.relname, array_agg(a.attname ORDER BY k.n) FROM pg_index AS x "
            "JOIN pg_class AS i ON i.oid = x.indexrelid JOIN pg_namespace AS s ON s.oid = i.relnamespace "
            "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) "
            "JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum = k.attnum "
            "WHERE s.nspname = 'public' AND NOT x.indisunique GROUP BY i.relname").fetchall()}
    expected = _sqlite_indexes()
    assert expected and {name: found.get(name) for name in expected} == expected


def _rows_read(conn) -> int:
    """Table rows the current transaction has read from `facts`, by scans and through indexes."""
    return conn.execute("SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                        "WHERE relname = 'facts'").fetchone()[0]


def test_inserting_facts_reads_a_bounded_number_of_rows_per_fact(postgresql_location):
    """The change feed's insert trigger asks, for every new fact, whether its predicate holds a newer one. Into a
    store the planner has no statistics for (a new one, as before a first import), 3,000 facts inserted in one
    statement beside 3,000 of the same predicate read a few rows each, not the whole predicate each (which
    made importing 100,000 edges take 605 s); nor does a single fact once the table is analyzed, whatever plan
    PL/pgSQL settles on (a generic plan scanned the table: 8 ms per remember_fact at 100,000 facts)."""
    memory = Memory(postgresql_location)
    memory.remember_fact("edge(a, b)")
    memory.close()
    with by_hand(postgresql_location) as conn:
        for first in (1, 3001):
            before = _rows_read(conn)
            conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
                         "SELECT 1, 'edge', 2, 'edge(n' || g || ', m)', '[\"n' || g || '\", \"m\"]', 'now' "
                         "FROM generate_series(?, ? + 2999) AS g", (first, first))
            assert _rows_read(conn) - before < 3 * 3000
        conn.execute("ANALYZE facts")  # and one fact at a time, past the five PL/pgSQL plans before a generic one
        before = _rows_read(conn)
        for n in range(10):
            conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
                         "VALUES (1, 'note', 1, ?, '[\"k\"]', 'now')", (f"note(k{n})",))
        assert _rows_read(conn) - before < 10 * 3


def test_a_bulk_import_leaves_statistics_the_planner_can_use(postgresql_location):
    """A write that grows a table by a tenth or more (and 1,000 rows) analyzes it when it commits: a bound
    lookup right after importing into an empty store walks the (segment, text) index, not every fact of the
    predicate, as it did while the planner took the new table for empty."""
    memory = Memory(postgresql_location)
    memory.add_facts([f"edge(n{i}, n{i + 1})" for i in range(3000)])
    memory.remember_fact("note(small)")  # a small write afterwards analyzes nothing
    memory.close()
    with by_hand(postgresql_location) as conn:
        analyzed = dict(conn.execute("SELECT relname, analyze_count FROM pg_stat_user_tables "
                                     "WHERE relname IN ('facts', 'supports', 'rules')").fetchall())
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT args FROM facts WHERE segment_id = 1 AND text >= 'edge(n7, ' AND text < 'edge(n7,!' "
            "AND functor = 'edge' AND arity = 2"))
    assert analyzed == {"facts": 1, "supports": 1, "rules": 0}
    assert "facts_segment_id_text_key" in plan, plan


def test_copy_writes_what_insert_would(postgresql_location):
    """insert_rows goes as COPY: the same rows, the same count, the same checks (a row the schema refuses fails
    the whole statement and writes nothing)."""
    conn = PostgresConnection(postgresql_location)
    try:
        conn.execute("CREATE TEMP TABLE copied (n BIGINT, word TEXT, flag BIGINT, note TEXT CHECK (note <> 'bad'))")
        rows = [(1, "tab\there", True, None), (2, "quote ' and \\ and \nnewline", False, "é"), (2 ** 62, "", 0, "x")]
        assert conn.insert_rows("copied", ("n", "word", "flag", "note"), rows) == 3
        assert conn.execute("SELECT n, word, flag, note FROM copied ORDER BY n").fetchall() == \
            [(1, "tab\there", 1, None), (2, "quote ' and \\ and \nnewline", 0, "é"), (2 ** 62, "", 0, "x")]
        with pytest.raises(conn.error):
            conn.insert_rows("copied", ("n", "word", "flag", "note"), [(5, "fine", 0, "ok"), (6, "refused", 0, "bad")])
        assert conn.execute("SELECT count(*) FROM copied").fetchone()[0] == 3
    finally:
        conn.close()


# --- serialized writes ------------------------------------------------------------------------------------------

def _waiting_on_the_write_lock(url: str) -> bool:
    with by_hand(url) as conn:
        return conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone()[0] > 0


def test_a_write_waits_for_the_one_before_it_so_ids_become_visible_in_order(postgresql_location):
    """Two servers on one database: while one write transaction is open, another one waits for it (the advisory
    lock), so the second's fact gets the higher id only after the first is committed: no reader can see id N+1
    without id N, which the change feed's "new rows are above the newest id" needs."""
    url = postgresql_location
    first, second = Memory(url, actor="one"), Memory(url, actor="two")
    first.remember_fact("seen(0)")
    second.remember_fact("seen(1)")
    done = threading.Event()
    try:
        with first.store.write() as conn:
            held = conn.execute("INSERT INTO facts (segment_id, functor, arity, text, args, created_at) "
                                "VALUES (1, 'p', 1, 'p(a)', '[\"a\"]', 'now') RETURNING id").fetchall()[0][0]
            writer = threading.Thread(target=lambda: (second.remember_fact("p(b)"), done.set()))
            writer.start()
            while not _waiting_on_the_write_lock(url):
                assert writer.is_alive() and not done.is_set()
            assert not done.is_set()
            with by_hand(url) as reader:  # the first is not committed: neither row is visible
                assert reader.execute("SELECT count(*) FROM facts WHERE functor = 'p'").fetchone()[0] == 0
        writer.join(timeout=30)
        assert done.is_set()
        with by_hand(url) as reader:
            rows = reader.execute("SELECT id, text FROM facts WHERE functor = 'p' ORDER BY id").fetchall()
        assert [t for _, t in rows] == ["p(a)", "p(b)"] and rows[0][0] == held
    finally:
        first.close()
        second.close()


def test_a_write_that_waits_too_long_fails_and_changes_nothing(postgresql_location):
    url = postgresql_location
    holder = PostgresStore(url)
    waiting = PostgresStore(url, busy_timeout_ms=100)
    try:
        with holder.write():
            with pytest.raises(StorageError, match="cannot start a write transaction"):
                with waiting.write() as conn:
                    conn.execute("INSERT INTO maintenance (task, since) VALUES ('x', 'y')")
        with waiting.read() as conn:
            assert conn.execute("SELECT count(*) FROM maintenance").fetchone()[0] == 0
        with waiting.write() as conn:  # the connection is usable afterwards
            conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
    finally:
        holder.close()
        waiting.close()


def test_concurrent_writers_on_two_stores_all_land_with_their_audit_rows(postgresql_location):
    url = postgresql_location
    writers = [Memory(url, actor=f"w{i}") for i in range(4)]
    try:
        threads = [threading.Thread(target=lambda m=m, i=i: [m.remember_fact(f"n({i}, {j})") for j in range(25)])
                   for i, m in enumerate(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with by_hand(url) as conn:
            assert conn.execute("SELECT count(*) FROM facts WHERE functor = 'n'").fetchone()[0] == 100
            assert conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0] == 100
        assert writers[0].query_logic("n(X, Y)").total == 100
    finally:
        for m in writers:
            m.close()


# --- what only the SQLite file has, and bad locations ------------------------------------------------------------

def test_the_sqlite_schema_text_is_refused_with_a_typed_error(mem):
    from memory.resources import schema_text
    if mem.store.dialect == "sqlite":
        assert "CREATE TABLE facts" in schema_text(mem)
        return
    with pytest.raises(SQLiteOnly) as info:
        schema_text(mem)
    assert info.value.code == "storage_error" and "psql" in str(info.value)


def test_persistence_status_names_the_server_without_its_password(mem):
    status = mem.get_persistence_status()
    assert status["status"] == "active" and status["schema_version"] == LATEST
    if mem.store.dialect == "postgresql":
        assert status["journal_mode"] == "postgresql" and status["wal_bytes"] == 0
        assert status["last_checkpoint"] is None and status["database"] == mem.path
    checked = mem.get_persistence_status(check_integrity=True)
    assert checked["integrity"]["ok"] is True


def test_an_unreachable_server_is_a_storage_error_that_hides_the_password(tmp_path):
    url = f"postgresql://someone:hunter2@/nowhere?host={tmp_path}"
    with Memory(url) as m:
        for call in (lambda: m.remember_fact("p(a)"), lambda: m.query_logic("p(X)"), m.get_persistence_status):
            with pytest.raises(StorageError) as info:
                call()
            assert "hunter2" not in str(info.value) and "someone:***@" in str(info.value)


def test_a_postgresql_url_is_kept_as_it_is_by_the_location_rules(monkeypatch):
    from memory.store import resolve_location
    url = "postgresql://u:secret@db.example:5432/memory"
    assert resolve_location(url).path == url
    monkeypatch.setenv("DATALOG_MEMORY_DB", url)
    location = resolve_location()
    assert location.path == url and "secret" not in location.describe()


def test_an_erase_leaves_no_content_in_the_tables(store_file):
    """On PostgreSQL the erase deletes and redacts as on SQLite, and Store.scrub rewrites the tables that held
    the content (VACUUM FULL), so no dead row version keeps it in the database's files."""
    from memory.access import CallerContext
    owner = CallerContext(principal="owner", session_id="s1", project_remote="https://example.org/p")
    with Memory(store_file, context=owner) as m:
        ident = m.memory_remember("the vault code is 4711", projections=[
            {"predicate": "code", "arguments": ["vault", 4711], "statement": "vault code"}])["id"]
        m.memory_forget(ids=[ident], action="delete", erase=True)
        with m.store.read() as conn:
            for table in ("sources", "memory_projections", "memory_fts", "memory_words", "audit_log", "facts"):
                rows = json.dumps(conn.execute(f"SELECT * FROM {table}").fetchall(), default=str)
                assert "4711" not in rows and "vault code" not in rows, table
    if store_file.startswith("postgresql://"):  # no file of the database's tables and indexes holds the text
        with by_hand(store_file) as conn:
            files = [r[0] for r in conn.execute(
                "SELECT pg_relation_filepath(c.oid) FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
                "WHERE n.nspname IN ('public', 'pg_toast') AND c.relkind IN ('r', 'i', 't') "
                "AND pg_relation_filepath(c.oid) IS NOT NULL")]
            conn.execute("CHECKPOINT")  # what the server holds in memory, written to the files
        data = postgresql_server().folder / "data"
        held = [f for f in files for path in sorted(data.glob(f + "*")) if b"vault code is 4711" in path.read_bytes()]
        assert files and held == []


def test_the_test_server_is_a_throwaway_one():
    server = postgresql_server()
    assert str(server.folder).startswith("/tmp") and server.socket_dir.exists()


# --- two servers, one database --------------------------------------------------------------------------------

def test_two_servers_share_one_database_and_a_kill9_loses_no_acknowledged_write(postgresql_location):
    """Two `serve --http` processes on one database, as two hosts: server A is killed (-9) while a client writes
    through it; every write it acknowledged is present with its audit row, and server B goes on writing and
    answers with A's writes (its evaluation workers open the same database)."""
    import time

    from surfaces import HttpServer, run_http_client
    url = postgresql_location
    acked: list[int] = []

    def write_until_killed(server_url: str) -> None:
        async def scenario(client):
            for n in range(100_000):
                result = await client.call_tool("remember_fact", {"fact": f"k({n})"})
                assert not result.is_error
                acked.append(n)
        try:
            run_http_client(server_url, "2026-07-28", scenario)
        except BaseException:  # the server died under the client: expected
            pass

    with HttpServer(url) as a, HttpServer(url) as b:
        writer = threading.Thread(target=write_until_killed, args=(a.url,))
        writer.start()
        deadline = time.monotonic() + 60
        while len(acked) < 20 and writer.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        a.kill9()
        writer.join(timeout=60)
        assert len(acked) >= 20
        with by_hand(url) as conn:
            present = {json.loads(args)[0] for (args,) in conn.execute("SELECT args FROM facts WHERE functor = 'k'")}
            audited = conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0]
        assert set(acked) <= present and audited == len(present)

        async def other(client):
            written = await client.call_tool("remember_fact", {"fact": "from_b(1)"})
            answer = await client.call_tool("query_logic", {"goal": "k(X)", "limit": 1})
            return written.is_error, answer.structured_content["total"]
        assert run_http_client(b.url, "2026-07-28", other) == (False, len(present))


def test_text_with_a_nul_character_is_refused_with_a_typed_error_and_changes_nothing(postgresql_location):
    """PostgreSQL's text type cannot hold U+0000 (SQLite's can): a value with one, whether a source text, a
    name looked up, a row of a bulk write or an element of a JSON list parameter, is an `invalid_arguments`
    error before the statement runs, never the driver's untyped one."""
    memory = Memory(postgresql_location, actor="tester")
    try:
        memory.remember_fact("p(a)")  # (terms cannot hold NUL on either store: the parser refuses it)
        with pytest.raises(InvalidArguments):
            memory.memory_remember("a note with \x00 inside")
        with pytest.raises(InvalidArguments):
            memory.list_facts(memory="seg\x00ment")
        assert [b["X"] for b in memory.query_logic("p(X)").bindings] == ["a"]
        assert memory.memory_search("note")["total"] == 0
        conn = memory.store._connection()
        with pytest.raises(InvalidArguments):
            conn.execute(f"SELECT count(*) FROM facts WHERE {conn.sql.in_list('text')}",
                         (conn.sql.listed(["p(a)", "p(\x00)"]),))
        with pytest.raises(InvalidArguments):
            conn.executemany("INSERT INTO audit_log (at, actor, operation, segment, payload) VALUES (?, ?, ?, ?, ?)",
                             [("now", "x\x00", "op", None, "{}")])
        with pytest.raises(InvalidArguments):
            conn.insert_rows("audit_log", ("at", "actor", "operation", "segment", "payload"),
                             [("now", "x\x00", "op", None, "{}")])
    finally:
        memory.close()


def test_a_term_too_large_for_an_index_entry_is_a_typed_error_that_writes_nothing(postgresql_location):
    """A fact is unique by its text, which PostgreSQL keeps in a B-tree whose entries hold about 2,700 bytes after
    compression; a larger text (a list of 10,000 items, within the 64 KiB a term may have) is `invalid_arguments`
    saying so, and nothing of the call is written. The same term under the limit is stored."""
    big = "[" + ",".join(f"i{i}" for i in range(10_000)) + "]"
    fits = "[" + ",".join(f"i{i}" for i in range(300)) + "]"
    with Memory(postgresql_location, actor="tester") as memory:
        memory.remember_fact("seen(a)")
        with pytest.raises(InvalidArguments, match="too large for a PostgreSQL store"):
            memory.remember_fact(f"big({big})")
        with pytest.raises(InvalidArguments, match="too large for a PostgreSQL store"):
            memory.define_rule(f"huge({big})", "seen(a)")
        memory.remember_fact(f"small({fits})")
        assert memory.query_logic("big(X)").total == 0 and memory.query_logic("small(X)").total == 1
        with by_hand(postgresql_location) as conn:
            assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 2
            assert conn.execute("SELECT count(*) FROM audit_log WHERE operation = 'remember_fact'").fetchone()[0] == 2


def test_a_memory_with_a_long_unbroken_token_is_stored_and_found(postgresql_location):
    """A word is any run of letters and digits, so a key or a base64 blob in a memory's text is one word of
    kilobytes. Its index entry used to be over PostgreSQL's B-tree limit and the memory could not be stored; the
    word index is a hash index now: the memory is stored, its long word indexed, and it is found by the others
    (a search query itself is limited to 2,048 characters)."""
    import base64
    import random
    token = base64.b32encode(random.Random(3).randbytes(12_500)).decode().lower()  # 20,000 letters and digits
    with Memory(postgresql_location, actor="tester") as memory:
        stored = memory.memory_remember(f"the deploy key is {token} for staging")["id"]
        assert [m["id"] for m in memory.memory_search("staging")["results"]] == [stored]
        assert memory.memory_get(stored)["source_text"] == f"the deploy key is {token} for staging"
        with by_hand(postgresql_location) as conn:  # the long word is in the index as it is
            assert conn.execute("SELECT count(*) FROM memory_words WHERE word = ?", (token,)).fetchone()[0] == 1
        memory.memory_forget([stored], action="delete", erase=True)
        assert memory.memory_search("staging")["total"] == 0
