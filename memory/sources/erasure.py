"""Erasing a source memory: no byte of its content is left in the database, its WAL or its audit rows.

What goes: the text and its digest, the idempotency key, every projection's
predicate, arguments, statement and fact text (and with them its search keys),
the full-text index entries (the index is then optimized, so no old segment
keeps the tokens) and search's word counts, every materialized
conclusion (any may rest on the memory; `materialize` rebuilds them), the change
feed's record of removed facts (`fact_changes`: every warm copy is then read
again), and the erased strings wherever an older audit payload of the memory's
author or of the eraser holds them. Another principal's audit rows are never changed by
someone else's erase: what they wrote is their record, even where it spells the
same words (else anyone could wipe others' audit trail by erasing a memory of
their own that names their writes). Connections run with
`secure_delete`, so freed bytes are overwritten with zeros, and after the commit
the WAL is checkpointed and truncated (`Store.scrub`).

What stays is the tombstone: the memory's id, namespace, kind, times and
lifecycle history (with the reasons callers gave), the `sources` row with
`erased_at`, and the audit row saying that an erase happened, by whom and when.
They hold ids, never content, and keep the audit trail and `as_of` history whole."""

from __future__ import annotations

from ..store.repository import Transaction


def erase_memory(tx: Transaction, record, now: str, eraser: str) -> None:
    """Erase one memory's content inside the caller's write transaction (`record`: a MemoryRecord; `eraser`: the
    principal erasing it)."""
    strings = {record.text, record.sha256, record.idempotency_key}
    facts: set[str] = set()
    for statement, fact, arguments in tx.memory_projections.contents(record.id):
        strings.add(statement)
        facts.add(fact)
        facts |= {value for value in arguments if isinstance(value, str) and len(value) > 3}
    tx.source_memories.erase_source(record.source_id, now)
    tx.memory_projections.erase(record.id)
    tx.source_memories.forget_key(record.id)
    tx.fulltext.erase(record.seq)  # with every copy of its tokens the full-text index kept
    tx.memory_words.erase(record.seq)  # search's terms (0011); the projection keys go with the projections
    tx.vectors.erase(record.seq)  # its sentence embedding (0015): a vector is readable content too
    # Which conclusions rest on the memory is a question about proofs; the cache is cheaper to drop than to
    # search, and nothing but `materialize` writes it.
    tx.derived.clear_everywhere()
    # The change feed names removed facts with their old arguments: it forgets them all (warm copies are read
    # again), rather than find which rows hold this memory's.
    tx.facts.forget_changes()
    # A fact text or argument still held by a stored fact (asserted, or projected by another memory) is not
    # this memory's alone: it stays where it is, and so do the audit rows of whoever stored it.
    strings |= {t for t in facts if t and not tx.facts.any_text_contains(t)}
    tx.audit.redact({s for s in strings if isinstance(s, str) and s.strip()}, now, {record.principal, eraser})
