"""Finding source memories: full-text plus symbolic search, and symbolic-first recall.

Both look only in namespaces the caller may read, and by default only at settled
memories (active and valid now); `history` widens search to superseded and
forgotten ones, `as_of` answers as the store stood at an earlier time."""

from __future__ import annotations

import json
import re
from typing import Any

from ..clock import utc_now
from ..errors import InvalidArguments
from ..terms import call_prefix, continued_range, plain_call
from ..validation import require_text
from ..store.repository import FactPattern, SearchScope, Transaction
from ..store.repository.memory_search import MemorySearch
from .memories import KINDS, MemoryRecord, SourceMemories, check_instant
from ..access.namespaces import Namespace, readable_namespaces
from .projections import check_predicate, same_scalar
from .ranking import FTS_CANDIDATES, SYMBOLIC_WEIGHT, Lengths, Postings, Ranking, bm25, rank_by_index
from .reindex import ensure_terms
from .embedding import current_embedder
from .semantic import SEMANTIC_ONLY_FLOOR, SemanticIndex, index_of
from .words import Term, count_words, matched_forms, query_terms

MAX_QUERY_CHARS = 2048
MAX_TOKENS = 32
MAX_LIMIT = 200
PREVIEW_CHARS = 1000
_WORD = re.compile(r"\w+")
MODES = ("auto", "text", "symbolic", "exact")
# Ranking by meaning (modes auto and text, when an embedder is on): a memory's score is its word and projection
# score divided by the best one among the results, plus MEANING_WEIGHT x its cosine similarity to the query; the
# words' ranking is read this many times deeper than the limit so that meaning can lift a memory into it.
MEANING_WEIGHT = 1.5  # LoCoMo (docs/recall.md): 1.0 gives R@5 0.583, 1.5 0.587, 2.0 0.590 but a lower R@10
DEEPER = 3
MEANING_CANDIDATES = 20  # the nearest visible memories by meaning, at least, added to the words' candidates


def _limit(limit: object, default: int) -> int:
    limit = default if limit is None else limit
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArguments(f"'limit' must be an integer from 1 to {MAX_LIMIT}", argument="limit")
    return limit


def tokens(text: str) -> list[str]:
    return list(dict.fromkeys(_WORD.findall(text.casefold())))[:MAX_TOKENS]


def search(service: SourceMemories, query: str, scope: str = "all_visible", history: bool = False,
           limit: int | None = None, kind: str | None = None, as_of: str | None = None, mode: str = "auto") -> dict:
    """mode: auto (full text and symbolic), text, symbolic, or exact (the query as a literal substring)."""
    query = require_text("query", query, max_chars=MAX_QUERY_CHARS)
    limit = _limit(limit, 10)
    at = check_instant("as_of", as_of)
    if kind is not None and kind not in KINDS:
        raise InvalidArguments(f"'kind' must be one of {', '.join(KINDS)}", argument="kind")
    if mode not in MODES:
        raise InvalidArguments(f"'mode' must be one of {', '.join(MODES)}", argument="mode")
    service.require_read()
    words = tokens(query)
    analyzed = query_terms(" ".join(words))  # the words MAX_TOKENS kept, analyzed (stemmed, paired, joined)
    terms = [t.term for t in analyzed]
    embedder = current_embedder() if mode in ("auto", "text") else None
    index = None if embedder is None else index_of(service.store, embedder)
    if mode != "symbolic":
        ensure_terms(service.repository, service.context.principal)
    # Vectors for what has none yet (memories another process stored, or embedded by another model).
    indexing = index is not None and index.refresh(service.context.principal)
    semantic = None if embedder is None else embedder.name
    with service.store.read() as conn:
        spaces = readable_namespaces(conn, service.context, scope)
        if not spaces or (not words and mode != "exact"):
            return _search_result(query, scope, history, at, [], 0, limit, semantic, indexing)
        moment = at or utc_now(conn.clock)
        covered = SearchScope(moment, tuple(spaces), history, past=at is not None, kind=kind)
        reads = Transaction(conn).memory_search
        depth = limit * DEEPER if index is not None else limit
        ranking = None if mode == "exact" else rank_by_index(reads, words, terms, covered, mode, depth)
        if ranking is None:
            ranking = rank_in_python(reads, query, words, terms, covered, mode, depth)
        if index is not None:
            ranking = _with_meaning(conn, reads, index, query, ranking, covered, limit)
        results = []
        found = reads.with_statements([seq for seq, _ in ranking.top])
        for seq, score in ranking.top:
            row, statements = found[seq]
            record = MemoryRecord(*row)
            reasons = (_text_reasons(record.text, statements, analyzed) if mode in ("auto", "text") else []) \
                + ranking.why.get(seq, [])
            if not reasons:  # cannot happen while the index holds what the texts give; said rather than left empty
                reasons = [f"indexed terms match {', '.join(terms)}"]
            text = record.text or ""
            results.append({**service.describe(conn, record, at, moment=moment), "memory": text[:PREVIEW_CHARS],
                            "text_truncated": len(text) > PREVIEW_CHARS, "scope": record.ns.type,
                            "score": round(score, 6), "why": reasons})
    return _search_result(query, scope, history, at, results, ranking.total, limit, semantic, indexing)


def _with_meaning(conn, reads: MemorySearch, index: SemanticIndex, query: str, ranking: Ranking,
                  scope: SearchScope, limit: int) -> Ranking:
    """The words' ranking fused with similarity of meaning (MEANING_WEIGHT), over visible memories only."""
    wanted = index.embedder.embed([query])[0]
    lexical = dict(ranking.top)
    near = index.similarities(conn, wanted, lambda seqs: reads.admitted(seqs, scope), max(limit, MEANING_CANDIDATES),
                              list(lexical))
    best = max(lexical.values(), default=0.0) or 1.0
    scores = {seq: score / best for seq, score in lexical.items()}
    added = 0
    for seq, cosine in near.items():
        if seq not in scores:
            if cosine < SEMANTIC_ONLY_FLOOR:
                continue
            scores[seq] = 0.0
            added += 1
        scores[seq] += MEANING_WEIGHT * cosine
    ranked = sorted(scores, key=lambda seq: (-scores[seq], -seq))[:limit]
    why = {seq: ranking.why.get(seq, []) + ([f"meaning is close to the query (similarity {near[seq]:.2f})"]
                                            if seq in near else []) for seq in ranked}
    return Ranking([(seq, scores[seq]) for seq in ranked], ranking.total + added, why)


def _text_reasons(text: str | None, statements: str | None, analyzed: list[Term]) -> list[str]:
    """Which query words the text and the projection statements match, each with the forms found there when
    they differ (`deployments as deployed`, `roll back as rollback`)."""
    wanted = {t.term for t in analyzed}
    reasons = []
    for label, found in (("text matches", matched_forms(text, wanted)),
                         ("projection statements match", matched_forms(statements, wanted))):
        said = []
        for t in analyzed:
            forms = found.get(t.term)
            if forms:
                said.append(t.form if forms == [t.form] else f"{t.form} as {', '.join(forms[:3])}")
        if said:
            reasons.append(f"{label} {', '.join(said)}")
    return reasons


def rank_in_python(reads: MemorySearch, query: str, words: list[str], terms: list[str], scope: SearchScope,
                   mode: str, limit: int) -> Ranking:
    """The general ranking: reads the candidates' texts and the projections' JSON. The reference the index
    ranking (ranking.rank_by_index) equals, and the answer wherever that one cannot be exact (mode exact, a
    projection that is not plain, a memory stored before 0011)."""
    scores: dict[int, float] = {}
    why: dict[int, list[str]] = {}
    word_set = set(words)
    if mode == "exact":  # the query, byte for byte, inside the source text; newest first
        for seq in reads.containing(query, scope, FTS_CANDIDATES):
            scores[seq] = 1.0
            why[seq] = ["text contains the query exactly"]
    if mode in ("auto", "text"):
        # The index only finds; ranking uses the visible matches alone. FTS5's bm25() weighs each
        # word by statistics of the whole table, hidden memories included, so its score (and which
        # candidates a ranked LIMIT keeps) would reveal them.
        scores.update(visible_text_scores(terms, reads.holding_terms(terms, scope, FTS_CANDIDATES)))
    # Symbolic: a projection whose predicate (or a word of it) or an argument is one of the words.
    for seq, predicate, arguments, fact in ([] if mode not in ("auto", "symbolic") else
                                            reads.projections_naming(words, scope)):
        hits = sorted((word_set & set(predicate.casefold().split("_")))
                      | {str(a).casefold() for a in json.loads(arguments)} & word_set)
        if hits:
            scores[seq] = scores.get(seq, 0.0) + SYMBOLIC_WEIGHT * len(hits)
            why.setdefault(seq, []).append(f"projection {fact} matches {', '.join(hits)}")
    ranked = sorted(scores, key=lambda s: (-scores[s], -s))
    top = ranked[:limit]
    # Reasons of the top memories only, as the index ranking gives them: both rankings are one answer.
    return Ranking([(seq, scores[seq]) for seq in top], len(ranked), {seq: why[seq] for seq in top if seq in why})


def visible_text_scores(terms: list[str], candidates: list[tuple[int, str | None, str | None]]) -> dict[int, float]:
    """BM25 (ranking.bm25) over the candidates the caller may see, their terms and lengths analyzed from the texts
    again (words.count_words: what memory_words holds)."""
    postings: Postings = {term: {} for term in terms}
    lengths: Lengths = {}
    for seq, text, statements in candidates:
        counts = count_words(text, statements)
        lengths[seq] = (counts.text_words, counts.statement_words)
        for word, in_text, in_statements in counts.occurrences:
            if word in postings:
                postings[word][seq] = (in_text, in_statements)
    return bm25(terms, postings, lengths)


def _search_result(query, scope, history, at, results, total, limit, semantic: str | None = None,
                   indexing: bool = False) -> dict:
    """`semantic`: the embedding model that also ranked by meaning; `indexing`: its vectors of some memories
    are still being written (those are found by their words only)."""
    found = {"query": query, "searched": scope, "history": history, "as_of": at, "results": results,
             "total": total, "limit": limit, "truncated": total > len(results), "semantic": semantic,
             "model_calls": 0}
    if indexing:
        found["semantic_indexing"] = True
    return found


def recall(service: SourceMemories, predicate: str, arguments: list | None = None, include_source: bool = False,
           limit: int | None = None, as_of: str | None = None, scope: str = "all_visible") -> dict:
    """Memories whose projections match predicate(arguments...) (None = any value), nearest namespace first;
    the exact source is attached when a projection is lossy or needs context, or when asked."""
    if arguments is not None and not isinstance(arguments, list):
        raise InvalidArguments("'arguments' must be a list of values (null = any)", argument="arguments")
    check_predicate(predicate, "'predicate'", len(arguments or []), "predicate")
    limit = _limit(limit, 20)
    at = check_instant("as_of", as_of)
    service.require_read()
    with service.store.read() as conn:
        spaces = readable_namespaces(conn, service.context, scope)
        covered = SearchScope(at or utc_now(conn.clock), tuple(spaces), past=at is not None)
        rows = Transaction(conn).memory_search.projected(predicate, _fact_range(predicate, arguments), covered)
        matches = []
        for row in rows:
            record, (projection_id, args_json, statement, quality, fact) = MemoryRecord(*row[:-5]), row[-5:]
            values = json.loads(args_json)
            if arguments is not None and (len(values) != len(arguments) or not all(
                    p is None or same_scalar(p, v) for p, v in zip(arguments, values))):
                continue
            matches.append((record, projection_id, values, statement, quality, fact))
        matches.sort(key=lambda m: Namespace.from_key(m[0].namespace).rank)  # stable: newest first within a rank
        memories = []
        for record, projection_id, values, statement, quality, fact in matches[:limit]:
            with_source = include_source or quality != "exact"
            entry: dict[str, Any] = {**service.describe(conn, record, at), "projection_id": projection_id,
                                     "predicate": predicate, "arguments": values, "fact": fact,
                                     "statement": statement, "quality": quality, "trust": record.trust,
                                     "source_context_included": with_source}
            if with_source:
                entry.update({"source_id": record.source_id, "source_text": record.text})
            memories.append(entry)
    pattern = f"{predicate}({', '.join('_' if a is None else json.dumps(a, ensure_ascii=False) for a in arguments)})" \
        if arguments else predicate
    return {"content": render_recall(memories, pattern), "predicate": predicate, "arguments": arguments,
            "pattern": pattern, "memories": memories, "total": len(matches), "limit": limit,
            "truncated": len(matches) > limit, "as_of": at, "derived": [], "model_calls": 0}


def _fact_range(predicate: str, arguments: list | None) -> FactPattern:
    """The facts of a projection that start with the pattern's leading string arguments, read through the
    (predicate, fact) index (a superset: the arguments are still compared one by one). A string
    prints the same whichever value it came from, so every match starts with that text; numbers are left to
    the comparison (1 matches 1.0, which prints otherwise)."""
    leading = []
    for value in arguments or ():
        if type(value) is not str:
            break
        leading.append(value)
    if not leading or not plain_call(predicate, len(arguments)):
        return FactPattern()
    prefix = call_prefix(predicate, tuple(leading))
    if len(leading) == len(arguments):
        return FactPattern(equals=prefix + ")")
    low, high = continued_range(prefix)
    return FactPattern(low=low, high=high)


def render_recall(memories: list[dict], pattern: str, derived: list[dict] | None = None) -> str:
    derived = derived or []
    if not memories and not derived:
        return f"# Recalled memory\n\nNo current memory matches {pattern}."
    lines = ["# Recalled memory"]
    if memories:
        lines.append("")
    for m in memories:
        state = "Current" if m["current"] else m["status"].capitalize()
        lines.append(f"- **{m['kind']} · {state} · source:{m['trust']}** — {m['statement']} "
                     f"(`{m['fact']}`) [{m['id']}]")
    if derived:
        lines += ["", "## Derived by rules", ""]
        lines += [f"- `{d['fact']}` by `{d['rule']}` from [{', '.join(m['id'] for m in d['memories'])}]"
                  for d in derived]
    context = [(m["id"], m.get("source_text")) for m in memories if m["source_context_included"]]
    seen = {ident for ident, _ in context}
    for d in derived:
        if d["source_context_included"]:
            context += [(m["id"], m.get("source_text")) for m in d["memories"] if m["id"] not in seen]
            seen |= {m["id"] for m in d["memories"]}
    if context:
        lines += ["", "## Source context"]
        for ident, text in context:
            lines += ["", f"[{ident}]"]
            lines += [f"> {line}" if line else ">" for line in (text or "(erased)").split("\n")]
    return "\n".join(lines)
