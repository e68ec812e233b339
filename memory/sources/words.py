"""The words search scores, and the per-memory index of them (migration 0011) written with each memory.

A word is a run of letters, digits and '_' after case folding and removing accents: what the full-text
index (unicode61, diacritics removed) finds, as close as Python's `\\w` gets to it. BM25 counts these."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

_WORD = re.compile(r"\w+")


def folded_words(text: str | None) -> list[str]:
    """Words as the index sees them (unicode61 with diacritics removed): case and accents folded."""
    folded = (text or "").casefold()
    if folded.isascii():  # nothing to decompose (the common case, and per character the costly part)
        return _WORD.findall(folded)
    decomposed = unicodedata.normalize("NFKD", folded)
    return _WORD.findall("".join(c for c in decomposed if not unicodedata.combining(c)))


@dataclass(frozen=True)
class WordCounts:
    """A memory's words as search ranks them: how often each occurs in the text and in the statements, and how
    many words each has (source_memories.text_words, statement_words)."""

    occurrences: list[tuple[str, int, int]]  # (word, in text, in statements)
    text_words: int
    statement_words: int


def count_words(text: str, statements: str) -> WordCounts:
    in_text, in_statements = folded_words(text), folded_words(statements)
    counts_text, counts_statements = Counter(in_text), Counter(in_statements)
    return WordCounts([(w, counts_text[w], counts_statements[w]) for w in counts_text | counts_statements],
                      len(in_text), len(in_statements))


def store_words(conn, seq: int, counts: WordCounts) -> None:
    conn.executemany("INSERT INTO memory_words (seq, word, in_text, in_statements) VALUES (?, ?, ?, ?)",
                     [(seq, *occurrence) for occurrence in counts.occurrences])


def erase_words(conn, seq: int) -> None:
    """An erased memory's words go with its text (the connection overwrites freed pages with zeros)."""
    conn.execute("DELETE FROM memory_words WHERE seq = ?", (seq,))
    conn.execute("UPDATE source_memories SET text_words = NULL, statement_words = NULL WHERE seq = ?", (seq,))
