"""Keeping memory_words made by the analyzer this process searches with (words.py).

A database records the tag of the analysis that made its terms (search_index_state, migration 0014). Before a
process first searches a store it compares that tag with its own (ANALYZER_VERSION and the stemming language);
when they differ (a database from before 0014, or another DATALOG_MEMORY_SEARCH_LANGUAGE) every memory whose
text is kept is analyzed again in one write, and the tag recorded. Erased memories have no text and no terms."""

from __future__ import annotations

import weakref

from ..errors import DatalogMemoryError
from ..store.repository import Repository
from ..store.repository.memory_words import MemoryWords
from .stemming import language_setting
from .words import ANALYZER_VERSION, count_words

_checked: "weakref.WeakKeyDictionary[object, str]" = weakref.WeakKeyDictionary()


def analyzer_tag(language: str | None = None) -> str:
    return f"{ANALYZER_VERSION}:{language or language_setting()}"


def ensure_terms(repository: Repository, actor: str) -> bool:
    """Re-index the repository's store when its terms were made by another analyzer, in one write with its
    audit row (`actor` is the caller whose search started it); True when it did. A store that cannot be
    written (read-only) is searched with the terms it has."""
    store = repository.store
    language = language_setting()
    tag = analyzer_tag(language)
    if _checked.get(store) == tag:
        return False
    with repository.read() as tx:
        recorded = tx.memory_words.analyzer()
    if recorded in (tag, ""):  # '': no terms yet, the first write names their analyzer
        _checked[store] = tag
        return False
    try:
        with repository.write() as tx:
            recorded = tx.memory_words.analyzer()
            if recorded == tag:  # another process did it meanwhile
                _checked[store] = tag
                return False
            rebuild_terms(tx.memory_words, language)
            tx.memory_words.set_analyzer(tag)
            # No count of memories: the caller whose search started it may not see them all.
            tx.audit.record(actor, "reindex_search", None, {"analyzer": tag, "was": recorded})
    except DatalogMemoryError:  # a read-only database: its terms stay as they are
        return False
    _checked[store] = tag
    return True


def rebuild_terms(words: MemoryWords, language: str) -> int:
    """Every kept memory's terms and counts made again; how many memories that was."""
    rows = words.texts()
    occurrences: list[tuple[int, str, int, int]] = []
    lengths: list[tuple[int, int, int]] = []
    for seq, text, statements in rows:
        counts = count_words(text, statements, language)
        occurrences += [(seq, *occurrence) for occurrence in counts.occurrences]
        lengths.append((counts.text_words, counts.statement_words, seq))
    words.replace(occurrences, lengths)
    return len(rows)
