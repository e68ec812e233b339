"""memory_search's and memory_recall's reads: the candidates a query's terms, words or projection pattern find,
always through a `SearchScope` (which memories the read may return), so every statistic and every result comes
from memories the caller may see. memory/sources/search.py and ranking.py decide what to read and rank it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from .source_memories import COLUMNS, FROM, marks, settled


@dataclass(frozen=True)
class SearchScope:
    """The memories a search or recall may return: settled at `moment` (or with `history`, all recorded by then;
    `past`: a moment before now), in `namespaces`, of `kind` when given. Its SQL is built here, over `m`."""
    moment: str
    namespaces: tuple[str, ...]
    history: bool = False
    past: bool = False
    kind: str | None = None
    where: str = field(init=False)
    params: tuple = field(init=False)

    def __post_init__(self) -> None:
        where, params = settled(self.moment, self.history, self.past)
        where += f" AND m.namespace IN ({marks(list(self.namespaces))})"
        params = [*params, *self.namespaces]
        if self.kind is not None:
            where += " AND m.kind = ?"
            params.append(self.kind)
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "params", tuple(params))


@dataclass(frozen=True)
class FactPattern:
    """Which projections' facts a recall reads through the (predicate, fact) index: exactly `equals`, or those
    in [`low`, `high`), or (all None) every fact of the predicate."""
    equals: str | None = None
    low: str | None = None
    high: str | None = None

    def sql(self) -> tuple[str, list]:
        if self.equals is not None:
            return "p.fact = ?", [self.equals]
        if self.low is not None:
            return "p.fact >= ? AND p.fact < ?", [self.low, self.high]
        return "TRUE", []


class MemorySearch:
    def __init__(self, conn) -> None:
        self._conn = conn

    # --- which of these memories the scope admits, and the results' rows ---------------------------------
    def admitted(self, seqs: list[int], scope: SearchScope) -> set[int]:
        """The subset of `seqs` the scope admits."""
        if not seqs:
            return set()
        return {seq for (seq,) in self._conn.execute(
            f"SELECT m.seq FROM {FROM} WHERE m.seq IN ({marks(seqs)}) AND {scope.where}", [*seqs, *scope.params])}

    def with_statements(self, seqs: list[int]) -> dict[int, tuple[tuple, str | None]]:
        """{seq: (the memory's COLUMNS row, its projection statements as the full-text table holds them)}, in one
        read for all the results."""
        if not seqs:
            return {}
        rows = self._conn.execute(f"SELECT {COLUMNS}, f.statements FROM {FROM} LEFT JOIN memory_fts AS f "
                                  f"ON f.rowid = m.seq WHERE m.seq IN ({marks(seqs)})", seqs)
        return {row[0]: (row[:-1], row[-1]) for row in rows}

    # --- the general (re-analyzing) ranking's candidates ------------------------------------------------------
    def containing(self, text: str, scope: SearchScope, limit: int) -> list[int]:
        """The newest `limit` memories whose source text holds `text` byte for byte."""
        return [seq for (seq,) in self._conn.execute(
            f"SELECT m.seq FROM {FROM} WHERE instr(s.text, ?) > 0 AND {scope.where} ORDER BY m.seq DESC LIMIT ?",
            [text, *scope.params, limit])]

    def holding_terms(self, terms: list[str], scope: SearchScope, limit: int) -> list[tuple[int, str | None,
                                                                                         str | None]]:
        """(seq, text, statements) of the newest `limit` memories holding one of the terms (the terms are one JSON
        parameter: data, never query syntax)."""
        return self._conn.execute(
            "SELECT m.seq, memory_fts.text, memory_fts.statements FROM memory_fts JOIN source_memories AS m "
            f"ON m.seq = memory_fts.rowid WHERE m.seq IN (SELECT seq FROM memory_words WHERE "
            f"{self._conn.sql.in_list('word')}) AND {scope.where} ORDER BY memory_fts.rowid DESC LIMIT ?",
            [self._conn.sql.listed(terms), *scope.params, limit]).fetchall()

    def projections_naming(self, words: list[str], scope: SearchScope) -> Iterator[tuple[int, str, str, str]]:
        """(seq, predicate, arguments JSON, fact) of each projection whose predicate, a '_'-part of it, or an
        argument (folded) is one of the words, by memory and position."""
        return self._conn.execute(
            "SELECT m.seq, p.predicate, p.arguments, p.fact FROM memory_projections AS p "
            f"JOIN source_memories AS m ON m.id = p.memory_id WHERE {scope.where} AND (p.predicate IN "
            f"({marks(words)}) OR EXISTS (SELECT 1 FROM {self._conn.sql.elements('p.arguments', 'j')} WHERE "
            f"lower(CAST(j.value AS TEXT)) IN ({marks(words)})) OR "
            + " OR ".join(["instr('_' || p.predicate || '_', ?) > 0"] * len(words)) + ") ORDER BY m.seq, p.position",
            [*scope.params, *words, *words, *(f"_{w}_" for w in words)])

    # --- the index ranking's reads ---------------------------------------------------------------------------
    def any_unplain_key(self, keys: list[str], scope: SearchScope) -> bool:
        """Whether a projection that is not plain (its keys are not the words it matches) has one of the keys."""
        return self._conn.execute(
            f"SELECT 1 FROM memory_projection_keys AS k {self._conn.sql.ordered_join} source_memories AS m "
            f"ON m.seq = k.memory_seq WHERE k.key IN ({marks(keys)}) AND NOT k.plain AND {scope.where} LIMIT 1",
            [*keys, *scope.params]).fetchone() is not None

    def postings(self, terms: list[str], scope: SearchScope) -> Iterator[tuple[int, str, int, int, int | None,
                                                                              int | None]]:
        """(seq, term, in text, in statements, text words, statement words) of every admitted memory holding a
        term, newest first: one arm per term, each in its index's order, merged (SQLite: MERGE (UNION ALL), no
        sort), so the caller reads a common term only as far as it needs rather than sorted whole."""
        arm = ("SELECT w.seq, w.word, w.in_text, w.in_statements, m.text_words, m.statement_words "
               f"FROM memory_words AS w {self._conn.sql.ordered_join} source_memories AS m ON m.seq = w.seq "
               f"WHERE w.word = ? AND {scope.where}")
        return self._conn.execute(" UNION ALL ".join([arm] * len(terms)) + " ORDER BY 1 DESC",
                                  [value for wanted in terms for value in (wanted, *scope.params)])

    def plain_hits(self, words: list[str], scope: SearchScope) -> Iterator[tuple[int, int]]:
        """(seq, how many of the words are its keys) of each admitted plain projection holding one, in memory and
        projection order."""
        return self._conn.execute(
            f"SELECT k.memory_seq, count(*) FROM memory_projection_keys AS k {self._conn.sql.ordered_join} "
            f"source_memories AS m ON m.seq = k.memory_seq WHERE k.key IN ({marks(words)}) AND k.plain AND {scope.where} "
            "GROUP BY k.memory_seq, k.position ORDER BY k.memory_seq, k.position", [*words, *scope.params])

    def plain_keys(self, words: list[str], seqs: list[int]) -> Iterator[tuple[int, int, str, str]]:
        """(seq, position, fact, key) of the plain projections of these memories whose keys are among the words."""
        join = self._conn.sql.ordered_join
        return self._conn.execute(
            "SELECT k.memory_seq, k.position, p.fact, k.key FROM memory_projection_keys AS k "
            f"{join} source_memories AS m ON m.seq = k.memory_seq "
            f"{join} memory_projections AS p ON p.memory_id = m.id AND p.position = k.position "
            f"WHERE k.key IN ({marks(words)}) AND k.plain AND k.memory_seq IN ({marks(seqs)}) "
            "ORDER BY k.memory_seq, k.position", [*words, *seqs])

    # --- recall ------------------------------------------------------------------------------------------------
    def projected(self, predicate: str, facts: FactPattern, scope: SearchScope) -> list[tuple]:
        """Each admitted memory's projections of `predicate` whose fact the pattern admits, newest memory first:
        the memory's COLUMNS then the projection's id, arguments JSON, statement, quality and fact."""
        if not scope.namespaces:
            return []
        clause, params = facts.sql()
        return self._conn.execute(
            f"SELECT {COLUMNS}, p.id, p.arguments, p.statement, p.quality, p.fact FROM {FROM} "
            f"JOIN memory_projections AS p ON p.memory_id = m.id WHERE p.predicate = ? AND {clause} "
            f"AND {scope.where} ORDER BY m.seq DESC, p.position", [predicate, *params, *scope.params]).fetchall()
