"""Which stored supports and facts a caller may see: the one filter every fact and support read goes through.

A support is visible unless it is a source memory's projection (kind 'source') from a
namespace the caller cannot read (or the caller lacks memory_read). A fact is visible
when it has a visible support. Everything the knowledge tools report (facts, counts,
supports, 'kept', 'removed', created) is computed over visible supports only, and
writes never remove a support the caller cannot see, so a call behaves as if the
hidden projections did not exist and leaves them as they were."""

from __future__ import annotations

from ..store.repository import Transaction, Visibility
from .context import READ, CallerContext
from .namespaces import readable_namespaces

__all__ = ["CallerVisibility", "visibility"]


def visibility(tx: Transaction, context: CallerContext) -> Visibility | None:
    """What the caller sees of supports, or None when no support rests on a source memory."""
    if not tx.supports.any_of_kind("source"):
        return None
    return Visibility(tuple(readable_namespaces(tx.connection, context) if context.can(READ) else ()))


class CallerVisibility:
    """The knowledge base's `SupportVisibility` for one caller."""

    def __init__(self, context: CallerContext) -> None:
        self.context = context

    def __call__(self, tx: Transaction) -> Visibility | None:
        return visibility(tx, self.context)
