"""Snapshots of a segment: saved, restored, listed, exported and imported as Prolog text."""

from __future__ import annotations

from ..knowledge import programs
from .bases import KnowledgeBases


class SnapshotService:
    def __init__(self, bases: KnowledgeBases) -> None:
        self.bases = bases

    def save_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.save_snapshot(self.bases.serving(memory), name, memory)

    def restore_snapshot(self, name: str, memory: str | None = None) -> dict:
        return programs.restore_snapshot(self.bases.serving(memory, write=True), name, memory)

    def list_snapshots(self, memory: str | None = None) -> dict:
        return programs.list_snapshots(self.bases.serving(memory), memory)

    def export_snapshot(self, name: str, memory: str | None = None) -> str:
        return programs.snapshot_content(self.bases.require_for("export_snapshot", memory), name, memory)

    def import_snapshot(self, name: str, content: str, memory: str | None = None) -> dict:
        """Store Prolog text as a snapshot (without restoring it)."""
        return programs.save_snapshot(self.bases.require_for("import_snapshot", memory), name, memory, content)
