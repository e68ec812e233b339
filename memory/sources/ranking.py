"""How memory_search ranks: BM25 over the caller's visible full-text candidates plus a weight per symbolic
match, computed inside SQLite from the indexes migration 0011 keeps (no text or projection JSON is read).

The scores are those of the Python ranking in search.py (its general path, which reads the texts), to the
last bit: SQLite does the same floating-point operations in the same order (constants bound as the same
Python floats, sums folded left to right, never with SQLite's compensated sum()), so order, ties, totals
and reported scores are equal. Every statistic comes from rows the caller may see, as there. Where this
ranking cannot be exact it answers None and the caller ranks the general way: a candidate stored before
0011 (no word counts), a projection whose keys are not the words it matches (`plain` = 0) meeting a query
word, a memory with more than MAX_FOLDED_PROJECTIONS matching projections, more than MAX_FOLDED_WORDS
folded query words."""

from __future__ import annotations

from dataclasses import dataclass

from .words import folded_words

FTS_CANDIDATES = 1000  # the newest visible full-text matches that are ranked (and counted)
SYMBOLIC_WEIGHT = 2.0  # per query word a projection matches
COLUMN_WEIGHTS = (1.0, 0.5)  # BM25 weight of the source text and of the projection statements
K1, K1_PLUS_1, B, ONE_MINUS_B = 1.2, 2.2, 0.75, 0.25  # BM25 saturation and length normalization
MAX_FOLDED_WORDS = 48
MAX_FOLDED_PROJECTIONS = 8


@dataclass
class Ranking:
    top: list[tuple[int, float]]  # (seq, score), best first, at most the limit
    total: int  # memories that matched
    why: dict[int, list[str]]  # symbolic reasons of the top memories, in projection order


def _in(values: list) -> str:
    return ", ".join("?" * len(values))


def fts_expression(words: list[str]) -> str:
    """Every word quoted, so the query is data, never FTS syntax."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def rank_in_sql(conn, words: list[str], where: str, params: list, mode: str, limit: int) -> Ranking | None:
    """`where`/`params`: SQL over `m` (source_memories) selecting what the caller may see and the read covers."""
    text_on, symbolic_on = mode in ("auto", "text"), mode in ("auto", "symbolic")
    folded = list(dict.fromkeys(folded_words(" ".join(words))))
    if len(folded) > MAX_FOLDED_WORDS:
        return None
    if symbolic_on:
        # A projection that is not plain matches as search.py's symbolic scan decides; its keys (and the
        # '_'-parts of the words, which the predicate test reaches) find every one that could.
        lookups = list(dict.fromkeys([*words, *(part for w in words for part in w.split("_"))]))
        if conn.execute(f"SELECT 1 FROM memory_projection_keys AS k JOIN source_memories AS m ON m.seq = k.memory_seq "
                        f"WHERE k.key IN ({_in(lookups)}) AND NOT k.plain AND {where} LIMIT 1",
                        [*lookups, *params]).fetchone():
            return None
    ctes, values = [], []
    if text_on:
        ctes.append("candidates AS MATERIALIZED (SELECT m.seq FROM memory_fts JOIN source_memories AS m "
                    f"ON m.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND {where} "
                    "ORDER BY memory_fts.rowid DESC LIMIT ?)")
        values += [fts_expression(words), *params, FTS_CANDIDATES]
        ctes.append(
            "docs AS MATERIALIZED (SELECT c.seq, n.text_words AS l0, n.statement_words AS l1"
            + "".join(f", w{i}.in_text AS t{i}, w{i}.in_statements AS s{i}" for i in range(len(folded)))
            + " FROM candidates AS c LEFT JOIN memory_word_totals AS n ON n.seq = c.seq"
            + "".join(f" LEFT JOIN memory_words AS w{i} ON w{i}.seq = c.seq AND w{i}.word = ?"
                      for i in range(len(folded))) + ")")
        values += folded
        ctes.append(
            "counts AS MATERIALIZED (SELECT count(*) AS n, count(l0) AS indexed, "
            "max(1.0, CAST(sum(l0) AS REAL) / count(*)) AS a0, max(1.0, CAST(sum(l1) AS REAL) / count(*)) AS a1"
            + "".join(f", count(t{i}) AS h{i}" for i in range(len(folded))) + " FROM docs)")
        ctes.append("stats AS MATERIALIZED (SELECT n, indexed, a0, a1"
                    + "".join(f", ln(1 + (n - h{i} + 0.5) / (h{i} + 0.5)) AS i{i}" for i in range(len(folded)))
                    + " FROM counts)")
        score = "0.0"
        for i in range(len(folded)):
            for column, (count, weight) in enumerate((("t", COLUMN_WEIGHTS[0]), ("s", COLUMN_WEIGHTS[1]))):
                tf = f"d.{count}{i}"
                score = (f"({score} + CASE WHEN {tf} > 0 THEN ? * x.i{i} * {tf} * ? "
                         f"/ ({tf} + ? * (? + ? * d.l{column} / x.a{column})) ELSE 0.0 END)")
                values += [weight, K1_PLUS_1, K1, ONE_MINUS_B, B]
        ctes.append(f"text AS (SELECT d.seq, {score} AS score FROM docs AS d, stats AS x)")
    if symbolic_on:
        ctes.append("keyed AS (SELECT k.memory_seq AS seq, k.position, count(*) AS hits FROM memory_projection_keys "
                    f"AS k WHERE k.key IN ({_in(words)}) AND k.plain GROUP BY k.memory_seq, k.position)")
        values += words
        ctes.append("visible AS (SELECT k.seq, k.hits, row_number() OVER (PARTITION BY k.seq ORDER BY k.position) "
                    f"AS r FROM keyed AS k JOIN source_memories AS m ON m.seq = k.seq WHERE {where})")
        values += params
        ctes.append("symbolic AS (SELECT seq, count(*) AS projections, "
                    + ", ".join(f"max(CASE WHEN r = {j} THEN hits END) AS h{j}"
                                for j in range(1, MAX_FOLDED_PROJECTIONS + 1)) + " FROM visible GROUP BY seq)")
    matched = " UNION ".join(f"SELECT seq FROM {name}" for name, on in (("text", text_on), ("symbolic", symbolic_on))
                             if on)
    ctes.append(f"matched AS ({matched})")
    final = "coalesce(t.score, 0.0)" if text_on else "0.0"
    tail = []
    if symbolic_on:
        for j in range(1, MAX_FOLDED_PROJECTIONS + 1):  # one addition per projection, in order, as Python adds
            final = f"({final} + coalesce(? * f.h{j}, 0.0))"
            tail.append(SYMBOLIC_WEIGHT)
    sql = ("WITH " + ",\n".join(ctes) + f"\nSELECT a.seq, {final} AS score, count(*) OVER () AS total, "
           + ("coalesce(max(f.projections) OVER (), 0)" if symbolic_on else "0")
           + ", " + ("(SELECT n - indexed FROM stats)" if text_on else "0")
           + " FROM matched AS a"
           + (" LEFT JOIN text AS t ON t.seq = a.seq" if text_on else "")
           + (" LEFT JOIN symbolic AS f ON f.seq = a.seq" if symbolic_on else "")
           + " ORDER BY score DESC, a.seq DESC LIMIT ?")
    rows = conn.execute(sql, [*values, *tail, limit]).fetchall()
    if rows and (rows[0][3] > MAX_FOLDED_PROJECTIONS or rows[0][4]):
        return None
    top = [(seq, score) for seq, score, *_ in rows]
    why: dict[int, list[str]] = {}
    if symbolic_on and top:
        seqs = [seq for seq, _ in top]
        hits: dict[tuple[int, int], tuple[str, list[str]]] = {}
        for seq, position, fact, key in conn.execute(
                "SELECT k.memory_seq, k.position, p.fact, k.key FROM memory_projection_keys AS k "
                "JOIN source_memories AS m ON m.seq = k.memory_seq "
                "JOIN memory_projections AS p ON p.memory_id = m.id AND p.position = k.position "
                f"WHERE k.key IN ({_in(words)}) AND k.plain AND k.memory_seq IN ({_in(seqs)}) "
                "ORDER BY k.memory_seq, k.position", [*words, *seqs]):
            hits.setdefault((seq, position), (fact, []))[1].append(key)
        for (seq, _), (fact, keys) in hits.items():
            why.setdefault(seq, []).append(f"projection {fact} matches {', '.join(sorted(keys))}")
    return Ranking(top, rows[0][2] if rows else 0, why)
