"""The suite never touches the user's data: every default location a test (or a process it starts) can
reach is a temporary folder, and a whole run of tests that write through every default leaves the real
home folder and working directory exactly as they were."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REAL_LOCATIONS
from memory import Memory
from memory.store import global_db_path, resolve_location
from surfaces import ROOT, cli, cli_process, env

PROBE = "test_isolation.py::test_writes_through_every_default_location"


def _inside(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_every_default_location_is_a_temporary_folder(tmp_path):
    for name in ("HOME", "XDG_DATA_HOME", "DATALOG_MEMORY_DB"):
        assert _inside(os.environ[name], tmp_path), name
    assert _inside(os.getcwd(), tmp_path)
    assert os.environ["HOME"] != REAL_LOCATIONS["HOME"] and os.getcwd() != REAL_LOCATIONS["cwd"]
    assert _inside(Memory.open().path, tmp_path) and _inside(global_db_path(), tmp_path)
    assert _inside(str(Path.home()), tmp_path)
    child = env()  # what every subprocess a test starts gets
    for name in ("HOME", "XDG_DATA_HOME", "DATALOG_MEMORY_DB"):
        assert child[name] == os.environ[name]


@pytest.fixture(scope="module")
def shared_memory():
    """Built once per module, before any test's own fixtures: where the tool fuzzer's memory is made."""
    m = Memory(":memory:", actor="probe")
    yield m
    m.close()


def test_writes_through_every_default_location(tmp_path, shared_memory):
    """Writes through each default a careless test could use; the run below checks where they landed."""
    with Memory.open() as m:  # $DATALOG_MEMORY_DB
        m.remember_fact("probe(env)")
    shared_memory.create_memory("probe_shared", "global")  # global segments go to the global database
    with Memory(":memory:", actor="probe") as m:
        m.create_memory("probe_other", "global")
    os.environ.pop("DATALOG_MEMORY_DB")  # the project default: ./.datalog-memory in the working directory
    assert resolve_location().origin == "project"
    cli_process(None, "remember-fact", "--fact", "probe(process)", check=True)
    cli(None, "remember-fact", "--fact", "probe(in_process)", check=True)
    assert (Path.cwd() / ".datalog-memory" / "memory.db").exists()


def test_a_run_leaves_the_real_home_and_working_directory_untouched(tmp_path):
    """Run the probe above as a developer runs the suite (HOME set, no XDG_DATA_HOME, no DATALOG_MEMORY_DB,
    started in a project folder): the home folder and the project folder stay empty."""
    home, project = tmp_path / "real-home", tmp_path / "real-project"
    home.mkdir()
    project.mkdir()
    child = {k: v for k, v in env().items() if k not in ("XDG_DATA_HOME", "DATALOG_MEMORY_DB")}
    child.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", str(ROOT / "tests" / PROBE)],
                          cwd=project, env=child, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert sorted(p.name for p in home.rglob("*")) == [] and sorted(p.name for p in project.rglob("*")) == []
