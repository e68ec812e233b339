import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory import Memory  # noqa: E402


@pytest.fixture
def mem():
    m = Memory(":memory:", actor="tester")
    yield m
    m.close()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "memory.db")


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path, monkeypatch):
    """No test reads the developer's own databases or environment."""
    for prefix in ("DATALOG_MEMORY_", "SYMBOLIC_MEMORY_"):
        for name in ("DB", "PRINCIPAL", "SESSION_ID", "PROJECT_REMOTE", "SOURCE_CLASS", "CAPABILITIES"):
            monkeypatch.delenv(prefix + name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    yield


def snapshot_counts(m: Memory) -> dict:
    """Row counts of every table plus the audit log's contents: 'nothing changed' means equal."""
    with m.store.read() as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
        counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
        counts["__audit"] = conn.execute("SELECT id, operation, payload FROM audit_log ORDER BY id").fetchall()
        counts["__generation"] = conn.execute("SELECT name, generation FROM segments ORDER BY id").fetchall()
    return counts
