"""Keeping memory_words made by the analyzer this process searches with (words.py).

A database records the tag of the analysis that made its terms (search_index_state, migration 0014). Before a
process first searches a store it compares that tag with its own (ANALYZER_VERSION and the stemming language);
when they differ (a database from before 0014, or another DATALOG_MEMORY_SEARCH_LANGUAGE) every memory whose
text is kept is analyzed again in one write, and the tag recorded. Erased memories have no text and no terms."""

from __future__ import annotations

import weakref

from ..errors import DatalogMemoryError
from .stemming import language_setting
from .words import ANALYZER_VERSION, count_words

_checked: "weakref.WeakKeyDictionary[object, str]" = weakref.WeakKeyDictionary()


def analyzer_tag(language: str | None = None) -> str:
    return f"{ANALYZER_VERSION}:{language or language_setting()}"


def ensure_terms(repository, actor: str) -> bool:
    """Re-index the repository's store when its terms were made by another analyzer, in one write with its
    audit row (`actor` is the caller whose search started it); True when it did. A store that cannot be
    written (read-only) is searched with the terms it has."""
    store = repository.store
    language = language_setting()
    tag = analyzer_tag(language)
    if _checked.get(store) == tag:
        return False
    with store.read() as conn:
        row = conn.execute("SELECT analyzer FROM search_index_state WHERE id = 1").fetchone()
    if row is not None and row[0] in (tag, ""):  # '': no terms yet, the first write names their analyzer
        _checked[store] = tag
        return False
    try:
        with repository.write() as tx:
            conn = tx.connection
            row = conn.execute("SELECT analyzer FROM search_index_state WHERE id = 1").fetchone()
            if row is not None and row[0] == tag:  # another process did it meanwhile
                _checked[store] = tag
                return False
            rebuild_terms(conn, language)
            conn.execute("UPDATE search_index_state SET analyzer = ? WHERE id = 1", (tag,))
            # No count of memories: the caller whose search started it may not see them all.
            tx.audit.record(actor, "reindex_search", None, {"analyzer": tag,
                                                            "was": row[0] if row is not None else None})
    except DatalogMemoryError:  # a read-only database: its terms stay as they are
        return False
    _checked[store] = tag
    return True


def rebuild_terms(conn, language: str) -> int:
    """Every kept memory's terms and counts made again; how many memories that was."""
    rows = conn.execute("SELECT m.seq, s.text, f.statements FROM source_memories AS m "
                        "JOIN sources AS s ON s.id = m.source_id JOIN memory_fts AS f ON f.rowid = m.seq "
                        "WHERE s.text IS NOT NULL ORDER BY m.seq").fetchall()
    conn.execute("DELETE FROM memory_words")
    occurrences, lengths = [], []
    for seq, text, statements in rows:
        counts = count_words(text, statements, language)
        occurrences += [(seq, *occurrence) for occurrence in counts.occurrences]
        lengths.append((counts.text_words, counts.statement_words, seq))
    conn.executemany("INSERT INTO memory_words (seq, word, in_text, in_statements) VALUES (?, ?, ?, ?)", occurrences)
    conn.executemany("UPDATE source_memories SET text_words = ?, statement_words = ? WHERE seq = ?", lengths)
    return len(rows)
