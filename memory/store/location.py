"""Where databases live: `--db`, then `DATALOG_MEMORY_DB`, then the project default, else the global one.
Either may be a `postgresql://` URL instead of a file (the shared store, memory/store/postgresql.py).

The project default is `./.datalog-memory/memory.db` in the working directory. A host that starts the
server in a folder that cannot hold it (the filesystem root, a read-only folder, a folder where
`.datalog-memory` is a file) gets the user's global database instead of a server whose first write
fails; `DatabaseLocation.reason` says why, and surfaces print which database is in use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_DB = "DATALOG_MEMORY_DB"
PROJECT_DIR = ".datalog-memory"
DB_NAME = "memory.db"
IN_MEMORY = ":memory:"


@dataclass(frozen=True)
class DatabaseLocation:
    """The database in use and why: `origin` is "flag", "environment", "project" or "global"."""

    path: str
    origin: str
    reason: str | None = None  # why the project default was not used (origin "global" only)

    def describe(self) -> str:
        """One line for people, e.g. `/home/me/.local/share/datalog-memory/memory.db (global: / is ...)`."""
        how = {"flag": "from --db", "environment": f"from ${ENV_DB}", "project": "project database"}.get(
            self.origin, "global database")
        return f"{shown(self.path)} ({how}{': ' + self.reason if self.reason else ''})"


def shown(path: str) -> str:
    """A database as messages name it: a file's path, or a URL without its password."""
    if not is_url(path):
        return path
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(path)
    if parts.password is None:
        return path
    netloc = f"{parts.username}:***@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def resolve_location(flag: str | None = None, cwd: Path | None = None) -> DatabaseLocation:
    """The database the caller means: the flag wins, then the environment, then the project default
    when the working directory can hold it, else the user's global database."""
    if flag:
        return DatabaseLocation(_expand(flag), "flag")
    env = os.environ.get(ENV_DB)
    if env:
        return DatabaseLocation(_expand(env), "environment")
    folder = cwd or Path.cwd()
    reason = _unusable_project_folder(folder)
    if reason is None:
        return DatabaseLocation(str(folder / PROJECT_DIR / DB_NAME), "project")
    return DatabaseLocation(global_db_path(), "global", reason)


def resolve_db_path(flag: str | None = None, cwd: Path | None = None) -> str:
    return resolve_location(flag, cwd).path


POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


def is_url(path: str) -> bool:
    """A PostgreSQL URL (the shared store) rather than a file path."""
    return path.startswith(POSTGRESQL_SCHEMES)


def absolute(path: str) -> str:
    """The location as another process (a worker, another working directory) must be given it: a file's
    absolute path; a URL or ":memory:" as it is (a URL is not a file name, never made one)."""
    return path if path == IN_MEMORY or is_url(path) else os.path.abspath(path)


def _expand(path: str) -> str:
    return path if path == IN_MEMORY or is_url(path) else str(Path(path).expanduser())


def _unusable_project_folder(cwd: Path) -> str | None:
    """Why `cwd` cannot hold `.datalog-memory/memory.db`, or None when it can (nothing is created here)."""
    if cwd.resolve().parent == cwd.resolve():
        return f"the working directory {cwd} is the filesystem root"
    project = cwd / PROJECT_DIR
    if project.exists() or project.is_symlink():
        if not project.is_dir():
            return f"{project} exists and is not a folder"
        if not os.access(project, os.W_OK | os.X_OK):
            return f"{project} is not writable"
        return None
    if not os.access(cwd, os.W_OK | os.X_OK):
        return f"the working directory {cwd} is not writable"
    return None


def global_data_dir() -> Path:
    """`$XDG_DATA_HOME/datalog-memory`, defaulting to `~/.local/share/datalog-memory`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "datalog-memory"


def global_db_path() -> str:
    return str(global_data_dir() / DB_NAME)
