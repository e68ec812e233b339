"""Memory segments: create, mount (rw/ro), unmount and list, in project and global scope.

Project segments live in the project database. Global segments live in the global
database under $XDG_DATA_HOME/datalog-memory/; a project mounts one by recording a
row with scope 'global' in its own `segments` table (the mount persists for the
project, with its mode), and every tool call on that name is served by the global
database."""

from __future__ import annotations


from ..errors import Conflict, InvalidArguments, NotFound
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


def _global_exists(global_kb, name: str) -> bool:
    if global_kb is None:
        return False
    with global_kb.repository.read() as tx:
        return tx.segments.exists_besides_default(name)


def create_memory(kb, global_kb, name: str, scope: str = "project") -> dict:
    name = check_name(name)
    scope = _check(scope, SCOPES, "scope")
    if name == DEFAULT or _global_exists(global_kb, name):
        raise Conflict(f"Memory '{name}' already exists", memory=name, plain=True)
    with kb.repository.write() as tx:
        row = tx.segments.record(name)
        if row is not None and row.scope == "project":
            raise Conflict(f"Memory '{name}' already exists", memory=name, plain=True)
        if scope == "project":
            tx.segments.create(name, "project", "rw", False)
        tx.audit.record(kb.actor, "create_memory", name, {"scope": scope})
    if scope == "global":
        with global_kb.repository.write() as tx:
            tx.segments.create(name, "global", "rw", True)
            tx.audit.record(kb.actor, "create_memory", name, {"scope": "global"})
    return {"name": name, "scope": scope, "mounted": False}


def mount_memory(kb, global_kb, name: str, mode: str = "rw", scope: str | None = None) -> dict:
    name = check_name(name)
    mode = _check(mode, MODES, "mode")
    if scope is not None:
        _check(scope, SCOPES, "scope")
    if name == DEFAULT:
        raise InvalidArguments("the default memory is always mounted read-write", argument="name")
    with kb.repository.write() as tx:
        row = tx.segments.record(name)
        in_project = row is not None and row.scope == "project"
        in_global = _global_exists(global_kb, name)
        if scope == "project" and not in_project or scope == "global" and not in_global or not (in_project or in_global):
            raise NotFound(f"Memory '{name}' does not exist", memory=name, plain=True)
        target = scope or ("project" if in_project else "global")
        if in_project and in_global and scope is None:
            raise InvalidArguments(f"Memory '{name}' exists in both scopes: pass scope", argument="scope")
        if row is not None and row.mounted and row.mode == mode and row.scope == target:
            raise Conflict(f"Memory '{name}' is already mounted", memory=name, plain=True)
        if row is None:
            tx.segments.create(name, "global", mode, True)
        else:
            tx.segments.mount(row.id, mode)
        tx.audit.record(kb.actor, "mount_memory", name, {"scope": target, "mode": mode})
    return {"name": name, "scope": target, "mode": mode, "mounted": True}


def unmount_memory(kb, name: str) -> dict:
    name = check_name(name)
    if name == DEFAULT:
        raise InvalidArguments("Cannot unmount the default memory", plain=True)
    with kb.repository.write() as tx:
        row = tx.segments.record(name)
        if row is None or not row.mounted:
            raise NotFound(f"Memory not mounted: {name}", memory=name, plain=True)
        if row.scope == "global":
            tx.segments.delete(row.id)  # only the mount record
        else:
            tx.segments.unmount(row.id)
        tx.audit.record(kb.actor, "unmount_memory", name, {"scope": row.scope})
    return {"name": name, "scope": row.scope, "mounted": False}


def list_memories(kb, global_kb) -> dict:
    with kb.repository.read() as tx:
        rows = tx.segments.records()
    memories = []
    mounted_globals = {}
    for row in rows:
        if row.scope == "global":
            mounted_globals[row.name] = row.mode
            continue
        memories.append({"name": row.name, "scope": "project", "mounted": row.mounted,
                         "mode": row.mode if row.mounted else None})
    if global_kb is not None:
        with global_kb.repository.read() as tx:
            names = tx.segments.names_besides_default()
        for name in names:
            mode = mounted_globals.get(name)
            memories.append({"name": name, "scope": "global", "mounted": mode is not None, "mode": mode})
    return {"memories": memories}
