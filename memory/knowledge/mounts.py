"""Memory segments: create, mount (rw/ro), unmount and list, in project and global scope.

Project segments live in the project database. Global segments live in the global
database under $XDG_DATA_HOME/datalog-memory/; a project mounts one by recording a
row with scope 'global' in its own `segments` table (the mount persists for the
project, with its mode), and every tool call on that name is served by the global
database."""

from __future__ import annotations


from ..errors import Conflict, InvalidArguments, NotFound
from ..store import record_audit, utc_now
from ..validation import require_name
from .segments import DEFAULT

SCOPES = ("project", "global")
MODES = ("rw", "ro")


def check_name(name: object) -> str:
    return require_name("name", name)


def _check(value: object, allowed: tuple, argument: str) -> str:
    if value not in allowed:
        raise InvalidArguments(f"'{argument}' must be one of {', '.join(allowed)}", argument=argument)
    return value  # type: ignore[return-value]


def _project_row(conn, name: str):
    return conn.execute("SELECT id, scope, mode, mounted FROM segments WHERE name = ?", (name,)).fetchone()


def _global_exists(global_kb, name: str) -> bool:
    if global_kb is None:
        return False
    with global_kb.store.read() as conn:
        return conn.execute("SELECT 1 FROM segments WHERE name = ? AND name != ?", (name, DEFAULT)).fetchone() is not None


def create_memory(kb, global_kb, name: str, scope: str = "project") -> dict:
    name = check_name(name)
    scope = _check(scope, SCOPES, "scope")
    if name == DEFAULT or _global_exists(global_kb, name):
        raise Conflict(f"Memory '{name}' already exists", memory=name, plain=True)
    with kb.store.write() as conn:
        row = _project_row(conn, name)
        if row is not None and row[1] == "project":
            raise Conflict(f"Memory '{name}' already exists", memory=name, plain=True)
        if scope == "project":
            conn.execute("INSERT INTO segments (name, scope, mode, mounted, created_at) VALUES (?, 'project', 'rw', 0, ?)",
                         (name, utc_now(conn.clock)))
        record_audit(conn, kb.actor, "create_memory", name, {"scope": scope})
    if scope == "global":
        with global_kb.store.write() as conn:
            conn.execute("INSERT INTO segments (name, scope, mode, mounted, created_at) VALUES (?, 'global', 'rw', 1, ?)",
                         (name, utc_now(conn.clock)))
            record_audit(conn, kb.actor, "create_memory", name, {"scope": "global"})
    return {"name": name, "scope": scope, "mounted": False}


def mount_memory(kb, global_kb, name: str, mode: str = "rw", scope: str | None = None) -> dict:
    name = check_name(name)
    mode = _check(mode, MODES, "mode")
    if scope is not None:
        _check(scope, SCOPES, "scope")
    if name == DEFAULT:
        raise InvalidArguments("the default memory is always mounted read-write", argument="name")
    with kb.store.write() as conn:
        row = _project_row(conn, name)
        in_project = row is not None and row[1] == "project"
        in_global = _global_exists(global_kb, name)
        if scope == "project" and not in_project or scope == "global" and not in_global or not (in_project or in_global):
            raise NotFound(f"Memory '{name}' does not exist", memory=name, plain=True)
        target = scope or ("project" if in_project else "global")
        if in_project and in_global and scope is None:
            raise InvalidArguments(f"Memory '{name}' exists in both scopes: pass scope", argument="scope")
        if row is not None and row[3] == 1 and row[2] == mode and row[1] == target:
            raise Conflict(f"Memory '{name}' is already mounted", memory=name, plain=True)
        if target == "project":
            conn.execute("UPDATE segments SET mounted = 1, mode = ? WHERE id = ?", (mode, row[0]))
        elif row is None:
            conn.execute("INSERT INTO segments (name, scope, mode, mounted, created_at) VALUES (?, 'global', ?, 1, ?)",
                         (name, mode, utc_now(conn.clock)))
        else:
            conn.execute("UPDATE segments SET mounted = 1, mode = ? WHERE id = ?", (mode, row[0]))
        record_audit(conn, kb.actor, "mount_memory", name, {"scope": target, "mode": mode})
    return {"name": name, "scope": target, "mode": mode, "mounted": True}


def unmount_memory(kb, name: str) -> dict:
    name = check_name(name)
    if name == DEFAULT:
        raise InvalidArguments("Cannot unmount the default memory", plain=True)
    with kb.store.write() as conn:
        row = _project_row(conn, name)
        if row is None or row[3] == 0:
            raise NotFound(f"Memory not mounted: {name}", memory=name, plain=True)
        if row[1] == "global":
            conn.execute("DELETE FROM segments WHERE id = ?", (row[0],))  # only the mount record
        else:
            conn.execute("UPDATE segments SET mounted = 0 WHERE id = ?", (row[0],))
        record_audit(conn, kb.actor, "unmount_memory", name, {"scope": row[1]})
    return {"name": name, "scope": row[1], "mounted": False}


def list_memories(kb, global_kb) -> dict:
    with kb.store.read() as conn:
        rows = conn.execute("SELECT name, scope, mode, mounted FROM segments ORDER BY name = 'default' DESC, name").fetchall()
    memories = []
    mounted_globals = {}
    for name, scope, mode, mounted in rows:
        if scope == "global":
            mounted_globals[name] = mode
            continue
        memories.append({"name": name, "scope": "project", "mounted": bool(mounted), "mode": mode if mounted else None})
    if global_kb is not None:
        with global_kb.store.read() as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM segments WHERE name != ? ORDER BY name", (DEFAULT,))]
        for name in names:
            mode = mounted_globals.get(name)
            memories.append({"name": name, "scope": "global", "mounted": mode is not None, "mode": mode})
    return {"memories": memories}
