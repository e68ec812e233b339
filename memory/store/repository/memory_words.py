"""The terms search matches (migrations 0011, 0014): each memory's terms with their counts (`memory_words`), its
lengths in words (`source_memories.text_words`, `statement_words`) and the tag of the analysis that made them
all (`search_index_state`). memory/sources/words.py makes the terms; this family stores and reads them."""

from __future__ import annotations

from typing import Iterable

from .records import WordOverlap
from .source_memories import marks, visible_now

_COLUMNS = ("seq", "word", "in_text", "in_statements")


class MemoryWords:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- the analyzer that made the terms ----------------------------------------------------------------
    def analyzer(self) -> str | None:
        """The recorded tag of the analysis that made the terms ('': none yet; None: a store without the row)."""
        row = self._conn.execute("SELECT analyzer FROM search_index_state WHERE id = 1").fetchone()
        return None if row is None else row[0]

    def set_analyzer(self, tag: str) -> None:
        self._conn.execute("UPDATE search_index_state SET analyzer = ? WHERE id = 1", (tag,))

    def name_analyzer(self, tag: str) -> None:
        """Record `tag` as the analyzer unless one is recorded already (a new store's first terms name it)."""
        self._conn.execute("UPDATE search_index_state SET analyzer = ? WHERE id = 1 AND analyzer = ''", (tag,))

    # --- one memory's terms ------------------------------------------------------------------------------
    def add(self, seq: int, occurrences: Iterable[tuple[str, int, int]]) -> None:
        """Store a new memory's (term, in text, in statements) counts; its lengths come with its row."""
        self._conn.insert_rows("memory_words", _COLUMNS, [(seq, *occurrence) for occurrence in occurrences])

    def erase(self, seq: int) -> None:
        """An erased memory's terms and lengths go with its text (the connection overwrites freed pages)."""
        self._conn.execute("DELETE FROM memory_words WHERE seq = ?", (seq,))
        self._conn.execute("UPDATE source_memories SET text_words = NULL, statement_words = NULL WHERE seq = ?", (seq,))

    # --- every memory's terms, made again ----------------------------------------------------------------
    def texts(self) -> list[tuple[int, str, str | None]]:
        """(seq, text, projection statements) of every memory whose text is kept, by seq: what terms are made of."""
        return [(seq, text, statements) for seq, text, statements in self._conn.execute(
            "SELECT m.seq, s.text, f.statements FROM source_memories AS m "
            "JOIN sources AS s ON s.id = m.source_id JOIN memory_fts AS f ON f.rowid = m.seq "
            "WHERE s.text IS NOT NULL ORDER BY m.seq").fetchall()]

    def replace(self, occurrences: Iterable[tuple[int, str, int, int]],
                lengths: Iterable[tuple[int, int, int]]) -> None:
        """Every term replaced by `occurrences` (seq, term, in text, in statements), and the lengths of the
        memories in `lengths` (text words, statement words, seq) set."""
        self._conn.execute("DELETE FROM memory_words")
        self._conn.insert_rows("memory_words", _COLUMNS, occurrences)
        self._conn.executemany("UPDATE source_memories SET text_words = ?, statement_words = ? WHERE seq = ?",
                               list(lengths))

    # --- what a new memory may restate -------------------------------------------------------------------
    def newest_holders(self, word: str, now: str, namespaces: list[str], least: int, limit: int) -> list[int]:
        """The seqs, newest first and at most `limit`, of the memories holding `word` in their text or statements
        that are current at `now`, not erased, in `namespaces`, and long enough to hold `least` words of another
        text (twice their text's words at least `least`)."""
        where, params = visible_now(now, namespaces)
        return [seq for seq, in self._conn.execute(
            "SELECT m.seq FROM memory_words AS w JOIN source_memories AS m ON m.seq = w.seq "
            f"JOIN sources AS s ON s.id = m.source_id WHERE w.word = ? AND {where} AND 2 * m.text_words >= ? "
            "ORDER BY m.seq DESC LIMIT ?", [word, *params, least, limit]).fetchall()]

    def overlaps(self, seqs: list[int], words: set[str], cap: int) -> list[WordOverlap]:
        """For each memory of `seqs`: how many of `words` its text holds and how many distinct terms its text
        holds (counted up to `cap`)."""
        rows = self._conn.execute(
            "SELECT m.seq, m.id, m.namespace, m.source_id, "
            "(SELECT count(*) FROM memory_words AS w WHERE w.seq = m.seq AND w.in_text > 0 "
            f"AND {self._conn.sql.in_list('w.word')}), "
            "(SELECT count(*) FROM (SELECT 1 FROM memory_words AS w WHERE w.seq = m.seq AND w.in_text > 0 LIMIT ?) AS b) "
            f"FROM source_memories AS m WHERE m.seq IN ({marks(seqs)})",
            [self._conn.sql.listed(sorted(words)), cap, *seqs]).fetchall()
        return [WordOverlap(*row) for row in rows]
