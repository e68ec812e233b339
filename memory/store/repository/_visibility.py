"""A `Visibility` as SQL conditions: over a supports row `s`, and over a facts row `f`."""

from __future__ import annotations

from .records import Visibility

EVERYTHING: tuple[str, list] = ("TRUE", [])  # the condition of a caller that sees every support


def seen(visibility: Visibility | None) -> tuple[str, list]:
    """SQL over a supports row `s` and its parameters."""
    if visibility is None:
        return EVERYTHING
    listed = ", ".join("?" * len(visibility.namespaces)) or "NULL"
    return (f"(s.kind <> 'source' OR s.ref IN (SELECT id FROM source_memories WHERE namespace IN ({listed})))",
            list(visibility.namespaces))


def visible(visibility: Visibility | None) -> tuple[str, list]:
    """SQL over a facts row `f` and its parameters: the fact has a support the caller sees."""
    if visibility is None:
        return EVERYTHING
    condition, params = seen(visibility)
    return f"EXISTS (SELECT 1 FROM supports AS s WHERE s.fact_id = f.id AND {condition})", params
