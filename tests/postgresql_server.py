"""A throwaway PostgreSQL server for the tests, from the distribution's binaries (initdb, pg_ctl).

It lives in a temporary folder and listens on a Unix socket there (no TCP port). PostgreSQL refuses to run as
root, so as root the server runs as the `postgres` system user that the Debian packages create. Each test gets
a fresh database copied from a migrated template (`fresh_database`)."""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

BIN_GLOBS = ("/usr/lib/postgresql/*/bin",)
TEMPLATE = "datalog_memory_template"


def binaries() -> Path | None:
    """The folder with initdb and pg_ctl (the newest installed version), or None when PostgreSQL is missing."""
    found = sorted((Path(p) for pattern in BIN_GLOBS for p in glob.glob(pattern)),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")])
    for folder in reversed(found):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


@dataclass
class Server:
    folder: Path
    bin: Path
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def socket_dir(self) -> Path:
        return self.folder / "socket"

    def url(self, database: str) -> str:
        return f"postgresql:///{database}?host={self.socket_dir}&user=postgres"

    def admin(self):
        import psycopg
        return psycopg.connect(self.url("postgres"), autocommit=True)

    def fresh_database(self) -> str:
        """A new database copied from the migrated template; returns its URL."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
        return self.url(name)

    def copy_database(self, url: str) -> str:
        """A new database with the contents of another one (which nothing may be connected to)."""
        source = url.split("///", 1)[1].split("?", 1)[0]
        name = f"test_{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.split("///", 1)[1].split("?", 1)[0]
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate",
                                        "-w", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_server(durable: bool = False) -> Server:
    """initdb into a new temporary folder and start the server on a socket in it. Durability settings are
    relaxed (fsync off; the data is thrown away with the folder), unless `durable` (a benchmark: PostgreSQL's
    defaults, every commit flushed)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed (no initdb/pg_ctl): apt-get install postgresql")
    folder = Path(tempfile.mkdtemp(prefix="datalog-memory-pg-"))
    (folder / "socket").mkdir()
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(folder / "socket", "postgres", "postgres")
    data = folder / "data"
    subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                    "--encoding=UTF8", "--locale=C", "--no-sync"]),
                   check=True, capture_output=True, timeout=120)
    options = (f"-k {folder / 'socket'} -c listen_addresses='' -c max_connections=200 -c shared_buffers=32MB"
               + ("" if durable else " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"))
    subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l",
                                    str(folder / "server.log"), "-w", "-t", "60", "start"]),
                   check=True, capture_output=True, timeout=90)
    server = Server(folder, bin_dir)
    with server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{TEMPLATE}"')
    from memory.store import open_store
    store = open_store(server.url(TEMPLATE))
    store.ensure_created()  # migrated once: every test database is a copy
    store.close()
    return server
