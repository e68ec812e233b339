"""Memory segments: created, mounted (project or global), unmounted and listed."""

from __future__ import annotations

from ..knowledge import mounts
from .bases import KnowledgeBases


class SegmentService:
    def __init__(self, bases: KnowledgeBases) -> None:
        self.bases = bases

    def create_memory(self, name: str, scope: str = "project") -> dict:
        other = self.bases.global_base() if scope == "global" else self.bases.existing_global()
        return mounts.create_memory(self.bases.project, other, name, scope)

    def mount_memory(self, name: str, mode: str = "rw", scope: str | None = None) -> dict:
        return mounts.mount_memory(self.bases.project, self.bases.existing_global(), name, mode, scope)

    def unmount_memory(self, name: str) -> dict:
        return mounts.unmount_memory(self.bases.project, name)

    def list_memories(self) -> dict:
        return mounts.list_memories(self.bases.project, self.bases.existing_global())
