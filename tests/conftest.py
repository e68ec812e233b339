import atexit
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

# One BLAS thread per process (this one and every server a test starts), set before NumPy loads: the suite already
# runs a process per core, and the embedding model's matrix products would otherwise start a thread per core in
# each, which spin while they wait and delay the timing-sensitive tests beside them.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Where this run would otherwise read and write: recorded before anything is redirected, so a test can
# prove that they were left alone.
REAL_LOCATIONS = {"HOME": os.environ.get("HOME", ""), "XDG_DATA_HOME": os.environ.get("XDG_DATA_HOME", ""),
                  "cwd": os.getcwd()}

# Redirect the whole session before any test module (or module-scoped fixture) is imported or built:
# the home folder, the XDG data folder (the global database) and the database path point at a
# temporary folder, so nothing a test opens by default can be the user's own data. Every subprocess
# a test starts inherits this environment; each test then gets its own folders (below).
SESSION_HOME = Path(tempfile.mkdtemp(prefix="datalog-memory-tests-"))
atexit.register(shutil.rmtree, SESSION_HOME, ignore_errors=True)
for prefix in ("DATALOG_MEMORY_", "SYMBOLIC_MEMORY_"):
    for name in ("DB", "PRINCIPAL", "SESSION_ID", "PROJECT_REMOTE", "SOURCE_CLASS", "CAPABILITIES"):
        os.environ.pop(prefix + name, None)
os.environ["HOME"] = str(SESSION_HOME / "home")
os.environ["XDG_DATA_HOME"] = str(SESSION_HOME / "xdg")
os.environ["XDG_CACHE_HOME"] = str(SESSION_HOME / "xdg-cache")  # what `serve` keeps to answer initialize early
os.environ["DATALOG_MEMORY_DB"] = str(SESSION_HOME / "project" / "memory.db")
# Servers the tests start list every tool with its whole contract (the references' names and schemas); the
# tests of the default toolsets (tests/test_toolsets.py) choose theirs.
os.environ["DATALOG_MEMORY_TOOLSETS"] = "all"
# Search ranks by words alone unless a test asks for meaning too (tests/test_semantic.py sets an embedder): the
# word-ranking tests pin exact scores, which an embedding model's similarity would change.
os.environ["DATALOG_MEMORY_EMBEDDER"] = "off"
# hypothesis keeps its example database in the working directory unless told otherwise
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(str(SESSION_HOME / ".hypothesis"))

from memory import Memory  # noqa: E402


# The stores the store-level fixtures run on: SQLite, and PostgreSQL from a throwaway server (tests/
# postgresql_server.py). DATALOG_MEMORY_TEST_STORES=sqlite runs SQLite alone; without PostgreSQL's binaries the
# postgresql cases skip, except under CI, where they fail (.ci/run installs PostgreSQL).
STORES = [s.strip() for s in os.environ.get("DATALOG_MEMORY_TEST_STORES", "sqlite,postgresql").split(",") if s.strip()]
_POSTGRESQL: list = []


def postgresql_server():
    """This process's PostgreSQL server (one per xdist worker), started at its first use."""
    if not _POSTGRESQL:
        from postgresql_server import binaries, start_server
        if binaries() is None:
            if os.environ.get("CI"):
                pytest.fail("PostgreSQL is not installed: .ci/run installs it (apt-get install postgresql)")
            pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
        server = start_server()
        atexit.register(server.stop)
        _POSTGRESQL.append(server)
    return _POSTGRESQL[0]


# The inner loop's subset (`pytest -m fast`): in-process tests of the engine, the terms and the tool layer, which
# start no server, browser or PostgreSQL and finish in about a minute; the whole suite stays the gate.
FAST_FILES = {
    "test_terms.py", "test_engine.py", "test_builtin_table.py", "test_dialect_agreement.py", "test_proofs.py",
    "test_tool_models.py", "test_reply_texts.py", "test_forget_rule.py", "test_withdrawn_conclusions.py",
    "test_strict_parsing.py", "test_verify_counts.py", "test_query_answers.py", "test_layering.py",
    "test_columnar_sorting.py",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only(reason): a test about the SQLite file itself (the sqlite3 face, "
                                       "PRAGMAs, WAL, file permissions); its postgresql case is skipped with the reason")
    config.addinivalue_line("markers", "fast: the inner loop's in-process subset (tests/conftest.py FAST_FILES)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in FAST_FILES and "postgresql" not in item.name:
            item.add_marker(pytest.mark.fast)


def _sqlite_only(request) -> None:
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"SQLite only: {marker.args[0] if marker.args else 'about the SQLite file'}")


@pytest.fixture(params=STORES)
def store_location(request):
    """Where a test's store lives: ":memory:" on SQLite, a fresh database's URL on PostgreSQL."""
    if request.param == "sqlite":
        yield ":memory:"
        return
    _sqlite_only(request)
    server = postgresql_server()
    url = server.fresh_database()
    yield url
    server.drop_database(url)


@pytest.fixture(scope="module", params=STORES)
def module_store_location(request):
    """A store that a module's tests share (built once by a module-scoped fixture): as `store_location`."""
    if request.param == "sqlite":
        yield ":memory:"
        return
    server = postgresql_server()
    url = server.fresh_database()
    yield url
    server.drop_database(url)


@pytest.fixture(params=STORES)
def store_file(request, tmp_path):
    """A store that outlives one connection: a file on SQLite, a fresh database's URL on PostgreSQL."""
    if request.param == "sqlite":
        yield str(tmp_path / "memory.db")
        return
    _sqlite_only(request)
    server = postgresql_server()
    url = server.fresh_database()
    yield url
    server.drop_database(url)


@pytest.fixture
def postgresql_location(tmp_path):
    """A fresh PostgreSQL database, for a test about PostgreSQL alone (skipped when the run is SQLite only)."""
    if "postgresql" not in STORES:
        pytest.skip("DATALOG_MEMORY_TEST_STORES leaves PostgreSQL out")
    return fresh_location("postgresql", tmp_path)


@pytest.fixture(params=STORES)
def store_kind(request):
    """"sqlite" or "postgresql", for a test that makes its stores itself (`fresh_location`)."""
    if request.param == "postgresql":
        _sqlite_only(request)
        postgresql_server()
    return request.param


_MADE: list[str] = []


def fresh_location(kind: str, folder: Path) -> str:
    """A new, empty store of this kind: a file in `folder`, or a new database on this process's server (dropped
    after the test)."""
    if kind == "sqlite":
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder / f"memory-{next(_LOCATIONS)}.db")
    url = postgresql_server().fresh_database()
    _MADE.append(url)
    return url


_LOCATIONS = __import__("itertools").count(1)


def copy_store(location: str, into: Path, name: str, keep: bool = False) -> str:
    """A copy of a store: the file copied into `into`, or a new database made from it (CREATE DATABASE ...
    TEMPLATE; dropped after the test unless `keep`, e.g. for a module's fixture). Nothing may be connected to
    `location` meanwhile."""
    if not location.startswith("postgresql://"):
        target = into / f"{name}-{next(_LOCATIONS)}.db"
        shutil.copy(location, target)
        return str(target)
    url = postgresql_server().copy_database(location)
    if not keep:
        _MADE.append(url)
    return url


@pytest.fixture(autouse=True)
def _drop_made_databases():
    yield
    while _MADE:  # the databases fresh_location and copy_store made for this test
        postgresql_server().drop_database(_MADE.pop())


@contextmanager
def by_hand(location: str):
    """The store as a person at a prompt would use it (sqlite3, psql): one transaction, committed at the end,
    without this program's write lock."""
    if location.startswith("postgresql://"):
        from memory.store.postgresql import PostgresConnection
        conn = PostgresConnection(location)
        try:
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")
        finally:
            conn.close()
        return
    import apsw
    conn = apsw.Connection(location)
    try:
        conn.execute("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000")
        with conn:
            yield conn
    finally:
        conn.close()


@pytest.fixture
def mem(store_location):
    m = Memory(store_location, actor="tester")
    yield m
    m.close()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "memory.db")


@pytest.fixture(scope="session", autouse=True)
def _session_working_directory():
    """Before any fixture of a wider scope than a test runs (pytest has found the tests by then)."""
    saved = os.getcwd()
    os.chdir(SESSION_HOME)
    yield
    os.chdir(saved)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path, monkeypatch):
    """No test reads the developer's own databases or environment: each one gets its own home, data folder,
    database path and working directory (a subprocess started by the test inherits all four)."""
    for prefix in ("DATALOG_MEMORY_", "SYMBOLIC_MEMORY_"):
        for name in ("PRINCIPAL", "SESSION_ID", "PROJECT_REMOTE", "SOURCE_CLASS", "CAPABILITIES"):
            monkeypatch.delenv(prefix + name, raising=False)
    places = tmp_path / "isolated"
    monkeypatch.setenv("HOME", str(places / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(places / "xdg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(places / "xdg-cache"))
    monkeypatch.setenv("DATALOG_MEMORY_DB", str(places / "default.db"))
    work = places / "cwd"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    yield


def stepping_clock() -> "ManualClock":  # noqa: F821  (imported inside: memory loads after the environment is set)
    """A clock the test controls, for `Memory(clock=...)`: every reading is one millisecond after the previous
    one, so stored instants are strictly ordered without sleeping; `utc_now(clock)` is a moment between what
    happened before and what happens after."""
    from memory.clock import ManualClock
    return ManualClock(tick=timedelta(milliseconds=1))


@pytest.fixture
def clock():
    return stepping_clock()


def snapshot_counts(m: Memory) -> dict:
    """Row counts of every table plus the audit log's contents: 'nothing changed' means equal."""
    with m.store.read() as conn:
        tables = table_names(conn)
        counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
        counts["__audit"] = conn.execute("SELECT id, operation, payload FROM audit_log ORDER BY id").fetchall()
        counts["__generation"] = conn.execute("SELECT name, generation FROM segments ORDER BY id").fetchall()
    return counts


def table_names(conn) -> list[str]:
    """The tables of the store a connection is on, by name."""
    if conn.dialect == "postgresql":
        return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                           "ORDER BY tablename COLLATE \"C\"")]
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
