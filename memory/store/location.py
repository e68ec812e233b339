"""Where databases live: `--db`, then `DATALOG_MEMORY_DB`, then the project default."""

from __future__ import annotations

import os
from pathlib import Path

ENV_DB = "DATALOG_MEMORY_DB"
PROJECT_DIR = ".datalog-memory"
DB_NAME = "memory.db"
IN_MEMORY = ":memory:"


def resolve_db_path(flag: str | None = None, cwd: Path | None = None) -> str:
    """The database the caller means: the flag wins, then the environment, then the project default."""
    if flag:
        return flag if flag == IN_MEMORY else str(Path(flag).expanduser())
    env = os.environ.get(ENV_DB)
    if env:
        return env if env == IN_MEMORY else str(Path(env).expanduser())
    return str((cwd or Path.cwd()) / PROJECT_DIR / DB_NAME)


def global_data_dir() -> Path:
    """`$XDG_DATA_HOME/datalog-memory`, defaulting to `~/.local/share/datalog-memory`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "datalog-memory"


def global_db_path() -> str:
    return str(global_data_dir() / DB_NAME)
