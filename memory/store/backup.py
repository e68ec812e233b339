"""Backups of an SQLite database, and what its write-ahead log says about a copy that lost part of it.

`backup` copies a consistent snapshot with SQLite's online backup API: it reads through an ordinary read
transaction, so it sees every commit acknowledged before it started, the ones still in the -wal file
included (a copy of `memory.db` alone misses those), and servers keep writing meanwhile (WAL readers do not
block writers). The copy is written beside its destination, made a single self-contained file (rollback
journal mode, no -wal), checked (`PRAGMA integrity_check`, and the same row counts and last audit event as
the snapshot it was copied from), synced, and only then renamed into place.

`wal_warnings` reads the -wal and -shm files before anything opens the database (opening it runs SQLite's
recovery, which silently drops what a damaged log cannot give back)."""

from __future__ import annotations

import os
import struct
import sys
import time
from pathlib import Path

import apsw

from ..errors import SQLiteOnly, StorageError
from .connection import storage_error
from .location import IN_MEMORY, is_url
from .repository.audit import Audit

WAL_HEADER = 32
FRAME_HEADER = 24
# What a backup's verification compares between the snapshot and the copy.
COUNTED = ("facts", "supports", "rules", "segments", "observations", "source_memories", "audit_log")


def _counts(conn: apsw.Connection) -> dict:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    counts = {t: _one(conn, f"SELECT count(*) FROM {t}") for t in COUNTED if t in tables}
    if "audit_log" in tables:
        counts["last_audit_id"] = Audit(conn).newest_id()
    return counts


def _one(conn: apsw.Connection, sql: str) -> int:
    """The single value of an aggregate query (always one row)."""
    row = conn.execute(sql).fetchone()
    assert row is not None
    return row[0]


def backup(source: str, destination: str, *, overwrite: bool = False) -> dict:
    """Copy the database at `source` to `destination` (a new file unless `overwrite`) and verify the copy.

    Returns what was copied: the path, bytes, pages, the verified row counts and the last audit event id
    (every write acknowledged before the backup began has its audit event at or below it)."""
    if source == IN_MEMORY or is_url(source):
        raise SQLiteOnly(f"backup copies an SQLite file; {'a PostgreSQL store is backed up with pg_dump (see docs/durability.md)' if is_url(source) else 'an in-memory database has nothing to copy'}")
    if not os.path.isfile(source):
        raise StorageError(f"no database at {source} to back up", reason="not_found", path=source)
    target = Path(destination)
    if target.is_dir():
        target = target / Path(source).name
    if os.path.abspath(target) == os.path.abspath(source):
        raise StorageError("the backup's destination is the database itself", reason="invalid_destination")
    if target.exists() and not overwrite:
        raise StorageError(f"{target} exists already (give --force to replace it)", reason="exists")
    if not target.parent.is_dir():
        raise StorageError(f"the folder {target.parent} does not exist", reason="invalid_destination")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    started = time.monotonic()
    try:
        src = apsw.Connection(f"file:{os.path.abspath(source)}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        raise storage_error(exc, f"cannot open {source} to back it up") from exc
    try:
        src.setbusytimeout(10_000)
        for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm"), Path(f"{partial}-journal")):
            leftover.unlink(missing_ok=True)
        try:
            src.execute("BEGIN")
            expected = _counts(src)  # the snapshot the backup copies: the same read transaction
            dst = apsw.Connection(str(partial))
            try:
                with dst.backup("main", src, "main") as copy:
                    copy.step(-1)
                    pages = copy.pagecount
                src.execute("COMMIT")
                dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file: no -wal to lose
                problems = [r[0] for r in dst.execute("PRAGMA integrity_check(20)")]
                found = _counts(dst)
            finally:
                dst.close()
        except apsw.Error as exc:
            raise storage_error(exc, f"the backup of {source} to {target} failed") from exc
        if problems != ["ok"]:
            raise StorageError(f"the backup copy failed its integrity check: {'; '.join(problems)[:500]}",
                               reason="backup_unverified")
        if found != expected:
            raise StorageError(f"the backup copy does not hold what it copied (expected {expected}, found {found})",
                               reason="backup_unverified")
        _sync(partial)
        os.replace(partial, target)
        _sync_folder(target.parent)
    except BaseException:
        for leftover in (partial, Path(f"{partial}-journal")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    return {"database": source, "backup": str(target), "bytes": target.stat().st_size, "pages": pages,
            "integrity": "ok", "counts": found, "seconds": round(time.monotonic() - started, 3)}


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def wal_warnings(path: str) -> list[str]:
    """What the -wal and -shm beside `path` say was lost, as far as the files tell (read before opening it):
    a -wal that is missing or shorter than the shared-memory index says it was (commits acknowledged and now
    gone; a torn last frame is a commit that was never acknowledged, and is not reported). Empty when nothing
    looks lost, or nothing can be told (no -shm: the last connection closed cleanly, or it was not copied)."""
    if path == IN_MEMORY or is_url(path) or not os.path.isfile(path):
        return []
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    warnings: list[str] = []
    page_size = frames = None
    if shm.is_file():
        try:
            with open(shm, "rb") as f:
                header = f.read(48)
        except OSError:
            header = b""
        if len(header) >= 48:
            order = "<" if sys.byteorder == "little" else ">"
            version, _, _, initialized, _, size, last = struct.unpack(order + "IIIBBHI", header[:20])
            if version == 3007000 and initialized:
                page_size, frames = (65536 if size == 1 else size), last
    wal_size = wal.stat().st_size if wal.is_file() else None
    if frames and page_size:
        needed = WAL_HEADER + frames * (FRAME_HEADER + page_size)
        if wal_size is None:
            warnings.append(f"{wal.name} is missing, but {shm.name} says it held {frames} frame(s) of commits: "
                            "writes acknowledged after the last checkpoint are lost (was the database copied "
                            "without it? use `datalog-memory backup`)")
        elif wal_size < needed:
            warnings.append(f"{wal.name} is {wal_size} bytes, shorter than the {needed} bytes {shm.name} says it held "
                            f"({frames} frame(s)): it was truncated, and the commits in the missing part are lost")
    if wal_size is not None and 0 < wal_size < WAL_HEADER:
        warnings.append(f"{wal.name} is {wal_size} bytes, shorter than its own {WAL_HEADER}-byte header")
    return warnings
