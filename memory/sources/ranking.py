"""How memory_search ranks: BM25 over the caller's visible full-text candidates plus a weight per symbolic
match, from the indexes migrations 0011 and 0014 keep (no text or projection JSON is read).

Text matching is by term (words.py: stemmed words, CJK character pairs, joined compounds): the candidates are
the newest FTS_CANDIDATES visible memories holding one of the query's terms in memory_words, on SQLite as on
PostgreSQL, so both stores find and rank alike. The store (tx.memory_search) gives the candidates' postings (how often each query
term occurs in a memory's text and statements) and lengths in one indexed read; `bm25` scores them. It is the
one scoring function: search.py's general ranking, which analyzes the texts again, feeds it the same counts.
Every statistic comes from rows the caller may see.

A memory's symbolic hits are counted from memory_projection_keys (plain projections) and added to its text
score one projection at a time, in projection order, as the general ranking adds them. Where this cannot be
exact it answers None and the caller ranks the general way: a candidate without word counts (stored before
0011), or a projection whose keys are not the words it matches (`plain` = 0) meeting a query word."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from ..store.repository import SearchScope
from ..store.repository.memory_search import MemorySearch


FTS_CANDIDATES = 1000  # the newest visible full-text matches that are ranked (and counted)
SYMBOLIC_WEIGHT = 2.0  # per query word a projection matches
COLUMN_WEIGHTS = (1.0, 0.5)  # BM25 weight of the source text and of the projection statements
# BM25 saturation and length normalization. b is 0.3 rather than the textbook 0.75: memories are short and
# their length says little about what they are about (LoCoMo, docs/recall.md: +0.008 R@5, +0.018 MRR).
K1, K1_PLUS_1, B, ONE_MINUS_B = 1.2, 2.2, 0.3, 0.7

# The candidates' counts, as bm25 reads them: {term: {seq: (occurrences in the text, in the statements)}} and
# {seq: (text words, statement words)}; a candidate holds at least one term.
Postings = dict[str, dict[int, tuple[int, int]]]
Lengths = dict[int, tuple[int, int]]


@dataclass
class Ranking:
    top: list[tuple[int, float]]  # (seq, score), best first, at most the limit
    total: int  # memories that matched
    why: dict[int, list[str]]  # symbolic reasons of the top memories, in projection order


def bm25(terms: list[str], postings: Postings, lengths: Lengths) -> dict[int, float]:
    """BM25 of each candidate (text weighted 1.0, projection statements 0.5), every statistic (how many
    candidates hold a term, the average lengths) from these candidates only. A candidate's score adds its terms
    in query order, each term's text part before its statements part."""
    if not lengths:
        return {}
    count = len(lengths)
    text_average = max(1.0, sum(t for t, _ in lengths.values()) / count)
    statement_average = max(1.0, sum(s for _, s in lengths.values()) / count)
    norms = {seq: (K1 * (ONE_MINUS_B + B * t / text_average), K1 * (ONE_MINUS_B + B * s / statement_average))
             for seq, (t, s) in lengths.items()}
    text_weight, statement_weight = COLUMN_WEIGHTS
    scores = dict.fromkeys(lengths, 0.0)
    for w in terms:
        holding = postings.get(w)
        if not holding:
            continue
        idf = math.log(1 + (count - len(holding) + 0.5) / (len(holding) + 0.5))
        in_text_factor, in_statements_factor = text_weight * idf, statement_weight * idf
        for seq, (in_text, in_statements) in holding.items():
            text_norm, statement_norm = norms[seq]
            score = scores[seq]
            if in_text:
                score += in_text_factor * in_text * K1_PLUS_1 / (in_text + text_norm)
            if in_statements:
                score += in_statements_factor * in_statements * K1_PLUS_1 / (in_statements + statement_norm)
            scores[seq] = score
    return scores


def rank_by_index(search: MemorySearch, words: list[str], terms: list[str], scope: SearchScope, mode: str,
                  limit: int) -> Ranking | None:
    """`words`: the query's folded words (symbolic matching); `terms`: its analyzed terms (text matching, distinct);
    `scope`: what the caller may see and the read covers."""
    text_on, symbolic_on = mode in ("auto", "text"), mode in ("auto", "symbolic")
    if symbolic_on:
        # A projection that is not plain matches as search.py's symbolic scan decides; its keys (and the
        # '_'-parts of the words, which the predicate test reaches) find every one that could.
        lookups = list(dict.fromkeys([*words, *(part for w in words for part in w.split("_"))]))
        if search.any_unplain_key(lookups, scope):
            return None
    scores: dict[int, float] = {}
    if text_on and terms:
        # The visible memories holding a query term, newest first, read only as far as the newest FTS_CANDIDATES.
        postings: Postings = {term: {} for term in terms}
        lengths: Lengths = {}
        for seq, term, in_text, in_statements, text_words, statement_words in search.postings(terms, scope):
            if seq not in lengths:
                if len(lengths) == FTS_CANDIDATES:
                    break
                if text_words is None or statement_words is None:  # stored before 0011: no counts
                    return None
                lengths[seq] = (text_words, statement_words)
            postings[term][seq] = (in_text, in_statements)
        scores = bm25(terms, postings, lengths)
    if symbolic_on:
        # Each matching plain projection's hits (distinct query words among its keys), added in order.
        for seq, hits in search.plain_hits(words, scope):
            scores[seq] = scores.get(seq, 0.0) + SYMBOLIC_WEIGHT * hits
    # Best score first, the newer memory first among equal scores (as sorted by (-score, -seq), taken to the limit)
    top = [(seq, score) for score, seq in heapq.nlargest(limit, zip(scores.values(), scores))]
    why: dict[int, list[str]] = {}
    if symbolic_on and top:
        keys_by_projection: dict[tuple[int, int], tuple[str, list[str]]] = {}
        for seq, position, fact, key in search.plain_keys(words, [seq for seq, _ in top]):
            keys_by_projection.setdefault((seq, position), (fact, []))[1].append(key)
        for (seq, _), (fact, keys) in keys_by_projection.items():
            why.setdefault(seq, []).append(f"projection {fact} matches {', '.join(sorted(keys))}")
    return Ranking(top, len(scores), why)
