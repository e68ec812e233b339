"""Which knowledge base serves a segment: the project's, or the global database's for a mounted global one."""

from __future__ import annotations

from pathlib import Path

from ..clock import Clock
from ..errors import ReadOnly
from ..knowledge import KnowledgeBase
from ..knowledge.refactor import ALL
from ..knowledge.segments import DEFAULT
from ..access import CallerContext, CallerVisibility
from ..access.context import ADMIN, READ, WRITE_GLOBAL, WRITE_KNOWLEDGE, WRITE_OBSERVATIONS
from ..store import open_store
from ..store.repository import Repository

# The bulk operations surfaces run without a registry tool (the CLI's import and export commands), declared
# once: operation -> (capability, what it is called in a refusal, whether it writes the target segment).
BULK_OPERATIONS: dict[str, tuple[str, str, bool]] = {
    "add_fact_terms": (ADMIN, "Importing facts", True),
    "import_program": (ADMIN, "Importing a program", True),
    "export_program": (READ, "Exporting a program", False),
    "export_snapshot": (READ, "Exporting a snapshot", False),
    "import_snapshot": (WRITE_KNOWLEDGE, "Importing a snapshot", False),  # as save_snapshot: no segment write
    "remember_observations": (WRITE_OBSERVATIONS, "Importing observations", False),
}


class KnowledgeBases:
    """The project's knowledge base and, opened on first use, the global database's."""

    def __init__(self, project: KnowledgeBase, context: CallerContext, global_path: str, clock: Clock) -> None:
        self.project = project
        self.context = context
        self.global_path = global_path
        self.clock = clock
        self._global: KnowledgeBase | None = None

    def global_base(self) -> KnowledgeBase:
        if self._global is None:
            budget = self.project.budget
            store = open_store(self.global_path, busy_timeout_ms=budget.writer_wait_ms(), clock=self.clock)
            # The global database holds segments only: source memories, their projections and observations
            # all live in the project database, and the global one is never asked for its default segment
            # (`serving` answers that from the project). So the caller's visibility is kept (it is the same
            # caller, and costs one lookup when no projection is there), while there is nothing for a projection
            # guard to guard, no computed relation joins, and no further global database to reach.
            self._global = KnowledgeBase(Repository(store), self.project.actor, budget,
                                         visibility=CallerVisibility(self.context))
        return self._global

    def existing_global(self) -> KnowledgeBase | None:
        """The global knowledge base when its database exists (reading never creates it)."""
        if self._global is None and not Path(self.global_path).exists():
            return None
        return self.global_base()

    def serving(self, memory: str | None, write: bool = False) -> KnowledgeBase:
        """The project knowledge base, or the global one for a mounted global segment (whose mode,
        recorded with the project's mount, decides whether writes are allowed)."""
        if memory in (None, "", DEFAULT, ALL) or not isinstance(memory, str):
            return self.project
        with self.project.repository.read() as tx:
            segment = tx.segments.mounted(memory)
        if segment is None or segment.scope != "global":
            return self.project
        if write and segment.mode == "ro":
            raise ReadOnly("Memory is read-only", memory=memory, plain=True)
        if write:  # the global database is shared by every project
            self.context.require(WRITE_GLOBAL, f"Writing the global memory '{memory}'")
        return self.global_base()

    def require_for(self, operation: str, memory: str | None = None) -> KnowledgeBase:
        """Refuse a bulk operation (BULK_OPERATIONS) the caller may not run on `memory`, before anything is read
        or written; the operation calls it itself, and a surface calls it first, before it reads the input
        (a caller without the capability learns nothing about a file it may not import). Returns the
        knowledge base the operation works on."""
        capability, what, writes = BULK_OPERATIONS[operation]
        self.context.require(capability, what)
        return self.serving(memory, write=writes)

    def close(self) -> None:
        if self._global is not None:
            self._global.store.close()
