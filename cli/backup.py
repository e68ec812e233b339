"""`datalog-memory backup DEST`: a verified copy of the database that holds every acknowledged write, safe
while servers write (memory/store/backup.py); restore is a copy back with the servers stopped
(docs/durability.md)."""

from __future__ import annotations

import json

import typer

from memory.store import resolve_location
from memory.store.backup import backup as copy_database


def backup(
    ctx: typer.Context,
    destination: str = typer.Argument(..., help="The backup file to write (or a folder to write memory.db into)"),
    force: bool = typer.Option(False, "--force", help="Replace the destination if it exists"),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON"),
) -> None:
    """Copy the database to DEST with SQLite's online backup (every write acknowledged before it started,
    the ones still in the -wal included; servers keep writing meanwhile), as one self-contained file, checked
    before it is put in place. Restore: stop the servers, then copy DEST over the database (see docs/durability.md)."""
    source = resolve_location(ctx.find_root().obj.get("db")).path
    report = copy_database(source, destination, overwrite=force)
    if as_json:
        typer.echo(json.dumps(report))
        return
    counts = report["counts"]
    typer.echo(f"Backed up {report['database']} to {report['backup']}: {report['bytes']} bytes, integrity ok, "
               f"{counts.get('facts', 0)} facts, {counts.get('rules', 0)} rules, audit events up to "
               f"#{counts.get('last_audit_id', 0)} ({report['seconds']} s)")


def wal_findings(ctx: typer.Context) -> list[str]:
    """What `check` reports about the database's write-ahead log (a -wal missing or cut short)."""
    from memory.store.backup import wal_warnings

    return wal_warnings(resolve_location(ctx.find_root().obj.get("db")).path)
