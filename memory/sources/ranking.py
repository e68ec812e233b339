"""How memory_search ranks: BM25 over the caller's visible full-text candidates plus a weight per symbolic
match, computed inside the store from the indexes migrations 0011 and 0014 keep (no text or projection JSON is
read).

Text matching is by term (words.py: stemmed words, CJK character pairs, joined compounds): the candidates are
the memories holding one of the query's terms in memory_words, on SQLite as on PostgreSQL, so both stores
find and rank alike.

The scores are those of the Python ranking in search.py (its general path, which reads the texts and analyzes
them again), to the last bit: the store does the same floating-point operations in the same order (constants
bound as the same Python floats, sums added left to right, never with SQLite's compensated sum(); a memory
whose symbolic hits fall in several projections has them added one by one in Python, as there), so order,
ties, totals and reported scores are equal. Every statistic comes from rows the caller may see, as there.
Where this ranking cannot be exact it answers None and the caller ranks the general way: a candidate without
word counts, a projection whose keys are not the words it matches (`plain` = 0) meeting a query word, more
than MAX_FOLDED_WORDS query terms, an SQLite without ln()."""

from __future__ import annotations

import json
from dataclasses import dataclass


FTS_CANDIDATES = 1000  # the newest visible full-text matches that are ranked (and counted)
SYMBOLIC_WEIGHT = 2.0  # per query word a projection matches
COLUMN_WEIGHTS = (1.0, 0.5)  # BM25 weight of the source text and of the projection statements
# BM25 saturation and length normalization. b is 0.3 rather than the textbook 0.75: memories are short and
# their length says little about what they are about (LoCoMo, docs/recall.md: +0.008 R@5, +0.018 MRR).
K1, K1_PLUS_1, B, ONE_MINUS_B = 1.2, 2.2, 0.3, 0.7
MAX_FOLDED_WORDS = 48


@dataclass
class Ranking:
    top: list[tuple[int, float]]  # (seq, score), best first, at most the limit
    total: int  # memories that matched
    why: dict[int, list[str]]  # symbolic reasons of the top memories, in projection order


def _in(values: list) -> str:
    return ", ".join("?" * len(values))


def term_match(terms: list[str]) -> tuple[str, list]:
    """SQL over `m` (source_memories) keeping the memories that hold one of the terms, and its parameters (the
    terms are one JSON parameter: data, never query syntax)."""
    return ("m.seq IN (SELECT seq FROM memory_words WHERE word IN (SELECT value FROM json_each(?)))",
            [json.dumps(terms)])


_LN: list[bool] = []  # whether this process's SQLite has ln() (math functions are a compile option)


def _has_ln(conn) -> bool:
    if not _LN:
        try:
            _LN.append(conn.execute("SELECT ln(1.0)").fetchone()[0] == 0.0)
        except Exception:  # no such function: this SQLite was built without the math functions
            _LN.append(False)
    return _LN[0]


def rank_in_sql(conn, words: list[str], terms: list[str], where: str, params: list, mode: str,
                limit: int) -> Ranking | None:
    """`words`: the query's folded words (symbolic matching); `terms`: its analyzed terms (text matching, distinct);
    `where`/`params`: SQL over `m` (source_memories) selecting what the caller may see and the read covers."""
    text_on, symbolic_on = mode in ("auto", "text"), mode in ("auto", "symbolic")
    if text_on and not _has_ln(conn):
        return None
    folded = terms
    if len(folded) > MAX_FOLDED_WORDS:
        return None
    if symbolic_on:
        # A projection that is not plain matches as search.py's symbolic scan decides; its keys (and the
        # '_'-parts of the words, which the predicate test reaches) find every one that could.
        lookups = list(dict.fromkeys([*words, *(part for w in words for part in w.split("_"))]))
        if conn.execute("SELECT 1 FROM memory_projection_keys AS k CROSS JOIN source_memories AS m "
                        f"ON m.seq = k.memory_seq WHERE k.key IN ({_in(lookups)}) AND NOT k.plain AND {where} LIMIT 1",
                        [*lookups, *params]).fetchone():
            return None
    ctes, values, parts = [], [], []
    if text_on:
        # The newest visible memories holding a query term, each with its word counts and how often each
        # query term occurs in its text (t) and statements (s): one pass over the terms' postings.
        ctes.append(
            "docs AS MATERIALIZED (SELECT m.seq, m.text_words AS l0, m.statement_words AS l1"
            + "".join(f", p.t{i}, p.s{i}" for i in range(len(folded)))
            + " FROM (SELECT seq"
            + "".join(f", max(CASE WHEN word = ? THEN in_text END) AS t{i}, "
                      f"max(CASE WHEN word = ? THEN in_statements END) AS s{i}" for i in range(len(folded)))
            + " FROM memory_words WHERE word IN (SELECT value FROM json_each(?)) GROUP BY seq) AS p "
            + f"CROSS JOIN source_memories AS m ON m.seq = p.seq WHERE {where} ORDER BY m.seq DESC LIMIT ?)")
        values += [*(t for t in folded for _ in (0, 1)), json.dumps(folded), *params, FTS_CANDIDATES]
        # Their statistics: how many, average lengths, and each word's inverse document frequency.
        ctes.append(
            "stats AS MATERIALIZED (SELECT count(*) - count(l0) AS unindexed, "
            "max(1.0, CAST(sum(l0) AS REAL) / count(*)) AS a0, max(1.0, CAST(sum(l1) AS REAL) / count(*)) AS a1"
            + "".join(f", ln(1 + (count(*) - count(t{i}) + 0.5) / (count(t{i}) + 0.5)) AS i{i}"
                      for i in range(len(folded))) + " FROM docs)")
        score = "0.0"
        for i in range(len(folded)):
            for column, (count, weight) in enumerate((("t", COLUMN_WEIGHTS[0]), ("s", COLUMN_WEIGHTS[1]))):
                tf = f"d.{count}{i}"
                score = (f"({score} + CASE WHEN {tf} > 0 THEN ? * x.i{i} * {tf} * ? "
                         f"/ ({tf} + ? * (? + ? * d.l{column} / x.a{column})) ELSE 0.0 END)")
                values += [weight, K1_PLUS_1, K1, ONE_MINUS_B, B]
        # A candidate's symbolic hits, looked up by its seq; `hits` holds 2 x (word, projection) hits, plus 1
        # when they fall in more than one projection (one subquery, evaluated once per candidate).
        coded_hits = "0"
        if symbolic_on:
            coded_hits = ("(SELECT count(*) * 2 + CASE WHEN min(k.position) <> max(k.position) THEN 1 ELSE 0 END "
                          "FROM memory_projection_keys "
                          f"AS k WHERE k.key IN ({_in(words)}) AND k.memory_seq = d.seq AND k.plain)")
        parts.append(f"SELECT d.seq, {score} AS text, {coded_hits} AS hits FROM docs AS d, stats AS x")
        values += words if symbolic_on else []
    if symbolic_on:
        # The other memories with a plain projection matching a query word, coded alike.
        parts.append(
            "SELECT k.memory_seq AS seq, CAST(NULL AS REAL) AS text, "
            "count(*) * 2 + CASE WHEN min(k.position) <> max(k.position) THEN 1 ELSE 0 END AS hits "
            "FROM memory_projection_keys AS k CROSS JOIN source_memories AS m ON m.seq = k.memory_seq "
            f"WHERE k.key IN ({_in(words)}) AND k.plain "
            + ("AND k.memory_seq NOT IN (SELECT seq FROM docs) " if text_on else "")
            + f"AND {where} GROUP BY k.memory_seq")
        # (CROSS JOIN keeps this order: each matched projection's memory looked up by seq, not every memory the
        # namespace filter admits scanned first.)
        values += [*words, *params]
    ctes.append(f"matched AS MATERIALIZED ({' UNION ALL '.join(parts)})")
    # Python adds a memory's text score and then SYMBOLIC_WEIGHT x hits per projection: one addition when the
    # hits are in one projection, the same here; several are added one by one by the caller.
    ctes.append("scored AS (SELECT seq, coalesce(text, 0.0) + ? * (hits / 2) AS score, text, hits % 2 AS several "
                "FROM matched)")
    values.append(SYMBOLIC_WEIGHT)
    unindexed = "(SELECT unindexed FROM stats)" if text_on else "0"
    sql = ("WITH " + ",\n".join(ctes)
           + f"\nSELECT 0, (SELECT count(*) FROM matched), {unindexed}"
           + "\nUNION ALL SELECT * FROM (SELECT 1, seq, score FROM scored WHERE several = 0 "
           + "ORDER BY score DESC, seq DESC LIMIT ?) AS top"
           + "\nUNION ALL SELECT 2, seq, text FROM scored WHERE several = 1")
    rows = conn.execute(sql, [*values, limit]).fetchall()
    (_, total, unindexed_count), rest = rows[0], rows[1:]
    if unindexed_count:
        return None
    top = [(seq, score) for kind, seq, score in rest if kind == 1]
    several = {seq: text or 0.0 for kind, seq, text in rest if kind == 2}
    if several:
        for seq, hits in _hits_by_projection(conn, words, list(several)):
            several[seq] += SYMBOLIC_WEIGHT * hits
        top = sorted(top + list(several.items()), key=lambda entry: (-entry[1], -entry[0]))[:limit]
    why: dict[int, list[str]] = {}
    if symbolic_on and top:
        seqs = [seq for seq, _ in top]
        keys_by_projection: dict[tuple[int, int], tuple[str, list[str]]] = {}
        for seq, position, fact, key in conn.execute(
                "SELECT k.memory_seq, k.position, p.fact, k.key FROM memory_projection_keys AS k "
                "CROSS JOIN source_memories AS m ON m.seq = k.memory_seq "
                "CROSS JOIN memory_projections AS p ON p.memory_id = m.id AND p.position = k.position "
                f"WHERE k.key IN ({_in(words)}) AND k.plain AND k.memory_seq IN ({_in(seqs)}) "
                "ORDER BY k.memory_seq, k.position", [*words, *seqs]):
            keys_by_projection.setdefault((seq, position), (fact, []))[1].append(key)
        for (seq, _), (fact, keys) in keys_by_projection.items():
            why.setdefault(seq, []).append(f"projection {fact} matches {', '.join(sorted(keys))}")
    return Ranking(top, total, why)


def _hits_by_projection(conn, words: list[str], seqs: list[int]) -> list[tuple[int, int]]:
    """(memory seq, hits) per matching plain projection of these memories, in projection order."""
    return conn.execute(
        f"SELECT memory_seq, count(*) FROM memory_projection_keys WHERE key IN ({_in(words)}) AND plain "
        f"AND memory_seq IN ({_in(seqs)}) GROUP BY memory_seq, position ORDER BY memory_seq, position",
        [*words, *seqs]).fetchall()
