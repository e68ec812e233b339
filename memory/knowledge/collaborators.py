"""What a `KnowledgeBase` is given at construction: the parts of the world it reads but does not own.

Each is a typing.Protocol, so the knowledge base depends on a shape, never on the source-memory or
evidence packages that implement it (they sit beside it, and import it)."""

from __future__ import annotations

from typing import Callable, Collection, Protocol, runtime_checkable

from ..store.repository import Transaction, Visibility


class SupportVisibility(Protocol):
    """Which supports the caller may see, decided inside the reading transaction: None when every support is
    visible. Every fact and support read of the knowledge base goes through it."""

    def __call__(self, tx: Transaction) -> Visibility | None: ...


class ProjectionGuard(Protocol):
    """Refuses (PermissionDenied) rewriting the projections of the given source memories."""

    def __call__(self, tx: Transaction, memory_ids: list[str], what: str) -> None: ...


@runtime_checkable
class ComputedRelations(Protocol):
    """Relations computed from other tables (the evidence memory's observations); they join the default
    segment's facts."""

    @property
    def preds(self) -> Collection[tuple]: ...

    def tuples(self, tx: Transaction, pred: tuple) -> list[tuple]: ...

    def supports(self, tx: Transaction, pred: tuple, args: tuple) -> list[str]: ...


@runtime_checkable
class GlobalKnowledge(Protocol):
    """The knowledge base of the global database, as the project's one reads its mounted global segments."""

    def facts_of(self, memory: str, functor: str, arity: int) -> list: ...

    def supports_of(self, memory: str, text: str) -> list[str]: ...

    def rules_of(self, memory: str) -> list[tuple[int, str]]: ...


# Opened on first use: most calls never touch a global segment, and reading must not create its file.
GlobalSource = Callable[[], GlobalKnowledge]
