"""Which database a command uses when none is named: the project folder when the working directory can
hold it, else the user's global database, and the surfaces can say which and why."""

import os
from pathlib import Path

import pytest

from memory import Memory
from memory.store import global_db_path, resolve_location
from surfaces import cli, cli_process


@pytest.fixture
def no_db_env(monkeypatch):
    monkeypatch.delenv("DATALOG_MEMORY_DB")


def test_flag_then_environment_then_project(tmp_path, monkeypatch):
    monkeypatch.setenv("DATALOG_MEMORY_DB", str(tmp_path / "env.db"))
    assert resolve_location(str(tmp_path / "flag.db")) == resolve_location(str(tmp_path / "flag.db"))
    assert resolve_location(str(tmp_path / "flag.db")).origin == "flag"
    assert resolve_location().path == str(tmp_path / "env.db") and resolve_location().origin == "environment"
    monkeypatch.delenv("DATALOG_MEMORY_DB")
    here = resolve_location(cwd=tmp_path)
    assert here.path == str(tmp_path / ".datalog-memory" / "memory.db") and here.origin == "project"
    assert here.reason is None and "project database" in here.describe()


def test_the_filesystem_root_falls_back_to_the_global_database(no_db_env):
    found = resolve_location(cwd=Path("/"))
    assert found.path == global_db_path() and found.origin == "global"
    assert found.reason == "the working directory / is the filesystem root"
    assert found.describe() == f"{global_db_path()} (global database: the working directory / is the filesystem root)"


def test_a_file_named_like_the_project_folder_falls_back(tmp_path, monkeypatch, no_db_env):
    (tmp_path / ".datalog-memory").write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    found = resolve_location()
    assert found.origin == "global" and found.reason == f"{tmp_path / '.datalog-memory'} exists and is not a folder"
    with Memory.open() as m:
        assert m.location == found and m.path == global_db_path()
        m.remember_fact("works(here)")
    assert (tmp_path / ".datalog-memory").read_text() == "not a folder"
    assert Path(global_db_path()).exists()


def test_a_read_only_working_directory_falls_back(tmp_path, monkeypatch, no_db_env):
    folder = tmp_path / "read-only"
    folder.mkdir()
    monkeypatch.chdir(folder)
    real_access = os.access
    # root may write anywhere, so the permission check itself is what is exercised here; the chmod makes
    # the folder read-only for everyone else
    folder.chmod(0o555)
    try:
        monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == folder else real_access(path, mode))
        found = resolve_location()
        assert found.origin == "global" and found.reason == f"the working directory {folder} is not writable"
    finally:
        folder.chmod(0o755)


def test_a_read_only_project_folder_falls_back(tmp_path, monkeypatch, no_db_env):
    (tmp_path / ".datalog-memory").mkdir()
    monkeypatch.chdir(tmp_path)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path).name == ".datalog-memory"
                        else real_access(path, mode))
    found = resolve_location()
    assert found.origin == "global" and found.reason.endswith(".datalog-memory is not writable")


def test_commands_work_from_the_filesystem_root_and_from_beside_a_file(tmp_path, monkeypatch, no_db_env):
    """A real process started in /, and the command line started beside a file named .datalog-memory: both
    write to the global database (the isolated one of this test), and `init` says which one."""
    before = sorted(os.listdir("/"))
    cli_process(None, "remember-fact", "--fact", "from(root)", cwd="/", extra_env={"DATALOG_MEMORY_DB": ""},
                check=True)
    assert sorted(os.listdir("/")) == before
    (tmp_path / ".datalog-memory").write_text("")
    monkeypatch.chdir(tmp_path)
    done = cli(None, "init", check=True)
    assert done.stdout == (f"Database ready: {global_db_path()} (global database: {tmp_path / '.datalog-memory'} "
                           "exists and is not a folder)\n")
    assert cli(None, "query-logic", "--goal", "from(X)", check=True).stdout == "root\n"
