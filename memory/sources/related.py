"""Which current memories a new one restates or contradicts: reported to the caller, never acted on.

Restates: near-duplicate text. The measure is the Jaccard index of the two texts' term sets (the terms search's
index holds, words.py: folded, stemmed, CJK character pairs, joined compounds), at least RESTATES_AT. Word sets ignore
order, so "Ann pays Bob" restates "Bob pays Ann" by this measure; the report says "may".

Contradicts: a projection with the same key and a different value. A projection's key is its predicate, its
arity and every argument but the last; its value is the last argument (`deploy_target(api, staging)` and
`deploy_target(api, production)` share the key `deploy_target(api, _)`). Projections with no arguments have
no value and are not compared. A key for which the visible current memories already hold MULTI_VALUED_AT or
more other values is taken for a many-valued relation (`topic(T)`, `tag(doc, T)`), where a new value adds to
the others rather than contradicting them, and is not reported.

Only memories the caller may read count (its namespaces, current, not erased): a hidden memory is never
reported, counted or let to change what is reported about the visible ones beyond which candidates are read.

Cost is bounded and indexed, whatever the store holds:
- text: a memory with Jaccard >= t shares at least ceil(t|A|) of the new text's |A| words, so it holds one of
  any |A| - ceil(t|A|) + 1 of them. The term index (memory_words by word) gives each term's newest visible current holders (up
  to RARITY_CAP: how rare it is); the probe words are the rarest, and their holders, rarest word first, are
  the candidates (at most TEXT_CANDIDATES), each compared through search's per-memory word index
  (memory_words, by primary key), reading at most |A|/t of its words. Texts of more than
  MAX_COMPARED_WORDS distinct words are not compared (a long document is rarely restated whole).
- projections: each projection's key is one range of the (predicate, fact) index, at most KEY_CANDIDATES rows
  kept per projection."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..store.repository import Transaction
from ..terms import Compound, call_prefix, continued_range, format_term, plain_call
from ..access.context import READ, CallerContext
from ..access.namespaces import CAPABILITY, Namespace, readable_namespaces
from .projections import Projection, same_scalar
from .words import analyze

RESTATES_AT = 0.7  # the Jaccard index of word sets from which a text counts as a restatement
TEXT_CANDIDATES = 64  # visible current memories compared per remember, newest first
MAX_COMPARED_WORDS = 128  # distinct words beyond which a new text is not compared
RARITY_CAP = TEXT_CANDIDATES + 1  # a word held by more visible memories than this counts as common
KEY_CANDIDATES = 20  # memories read per projection key
MULTI_VALUED_AT = 3  # other values of one key from which it is taken for a many-valued relation
MAX_RELATED = 10  # reported per remember
PREVIEW_CHARS = 120


@dataclass
class Related:
    """A current memory the new one may restate or contradict, and why."""

    id: str
    namespace: Namespace
    preview: str
    can_supersede: bool  # the caller may write its namespace
    relations: list[str] = field(default_factory=list)  # "restates", "contradicts"
    why: list[str] = field(default_factory=list)
    seq: int = 0

    def to_dict(self) -> dict:
        return {"id": self.id, "namespace": self.namespace.to_dict(), "relation": " and ".join(self.relations),
                "why": self.why, "preview": self.preview, "can_supersede": self.can_supersede}


@dataclass
class RelatedReport:
    related: list[Related]
    truncated: bool  # more than MAX_RELATED were found (all of them visible to the caller)

    def to_dict(self) -> dict:
        return {"related": [r.to_dict() for r in self.related], "related_truncated": self.truncated}


def _preview(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS] + "…"


def jaccard(a: set[str], b: set[str]) -> float:
    """The Jaccard index of two word sets (1.0 for two empty ones: nothing tells them apart)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def probe_words(words: set[str], threshold: float = RESTATES_AT, counts: dict[str, int] | None = None) -> list[str]:
    """Words of which every set with a Jaccard index >= threshold against `words` holds at least one: the
    |A| - ceil(t|A|) + 1 rarest by `counts` (then the longest, then alphabetical). Any that many would do."""
    need = math.ceil(threshold * len(words) - 1e-9)
    counts = counts or {}
    ordered = sorted(words, key=lambda w: (counts.get(w, 0), -len(w), w))
    return ordered[:len(words) - need + 1]


def visible_holders(tx: Transaction, words: set[str], now: str, spaces: list[str], least: int) -> dict[str, list[int]]:
    """The newest memories current at `now`, not erased and in the namespaces `spaces` (seqs, up to RARITY_CAP)
    holding each word in their text or statements and terms enough to share `least` of them (a text of n words
    has at most 2n - 1 terms, its joined forms included): how rare each word is, and who holds it. Read over what
    the caller may see only, so which memories are compared (and so what is reported) depends on nothing
    hidden."""
    return {word: tx.memory_words.newest_holders(word, now, spaces, least, RARITY_CAP) for word in sorted(words)}


def find_related(conn, context: CallerContext, text: str, specs: list[Projection], now: str,
                 exclude: set[str]) -> RelatedReport:
    """The current memories visible to `context` that the text (with these projections) may restate or
    contradict, excluding the ids in `exclude` (the memory itself, the ones it already supersedes)."""
    if not context.can(READ):
        return RelatedReport([], False)
    spaces = readable_namespaces(conn, context)
    if not spaces:
        return RelatedReport([], False)
    found: dict[str, Related] = {}

    def entry(seq: int, ident: str, namespace: str, source_text: str | None) -> Related:
        if ident not in found:
            ns = Namespace.from_key(namespace)
            found[ident] = Related(ident, ns, _preview(source_text), context.can(CAPABILITY[ns.type]), seq=seq)
        return found[ident]

    tx = Transaction(conn)
    _contradictions(tx, specs, now, spaces, exclude, entry)
    _restatements(tx, text, now, spaces, exclude, entry)
    # Contradictions first (they need a decision), then the newest.
    ranked = sorted(found.values(), key=lambda r: ("contradicts" not in r.relations, -r.seq))
    return RelatedReport(ranked[:MAX_RELATED], len(ranked) > MAX_RELATED)


def _contradictions(tx: Transaction, specs: list[Projection], now: str, spaces: list[str], exclude: set[str],
                    entry) -> None:
    seen_keys = set()
    for spec in specs:
        arity = len(spec.arguments)
        if not arity or not plain_call(spec.predicate, arity) or not isinstance(spec.term, Compound):
            continue
        leading = spec.term.args[:-1]
        key = (spec.predicate, arity, format_term(Compound(spec.predicate, leading)) if leading else "")
        if key in seen_keys:
            continue
        seen_keys.add(key)
        prefix = call_prefix(spec.predicate, leading)
        # Facts of this predicate that go on from the leading arguments with one more argument (the arity check
        # below drops longer ones): `p(` .. `p)` for one argument, `p(a, ` .. `p(a,!` after a leading `a`.
        low, high = (prefix, prefix[:-1] + ")") if not leading else continued_range(prefix)
        values = [v for s in specs if s.predicate == spec.predicate and len(s.arguments) == arity
                  and all(same_scalar(x, y) for x, y in zip(s.arguments[:-1], spec.arguments[:-1]))
                  for v in [s.arguments[-1]]]
        others = []
        for held in tx.memory_projections.with_fact_in(spec.predicate, low, high, arity, now, spaces, KEY_CANDIDATES):
            old = held.arguments
            if held.memory_id in exclude or not all(same_scalar(x, y) for x, y in zip(old[:-1], spec.arguments[:-1])):
                continue
            if any(same_scalar(old[-1], v) for v in values):
                continue  # the same value: agreement, not a contradiction
            others.append((held.seq, held.memory_id, held.namespace, held.text, old[-1], held.fact))
        distinct: list = []
        for *_, value, _ in others:
            if not any(same_scalar(value, d) for d in distinct):
                distinct.append(value)
        if len(distinct) >= MULTI_VALUED_AT:
            continue  # a key already holding several values is a relation (tags, topics), not one value
        for seq, ident, namespace, source_text, _, fact in others:
            related = entry(seq, ident, namespace, source_text)
            if "contradicts" not in related.relations:
                related.relations.append("contradicts")
            related.why.append(f"{fact} there, {spec.fact} here")


def _restatements(tx: Transaction, text: str, now: str, spaces: list[str], exclude: set[str], entry) -> None:
    words = {t.term for t in analyze(text)}  # the terms the index holds for a memory's text (words.py)
    if not words or len(words) > MAX_COMPARED_WORDS:
        return
    need = math.ceil(RESTATES_AT * len(words) - 1e-9)
    cap = math.floor(len(words) / RESTATES_AT) + 1  # a memory with more distinct words is below the threshold
    holders = visible_holders(tx, words, now, spaces, need)
    # Every restatement holds one of the probe words; their holders, rarest word first, up to the budget.
    candidates: dict[int, None] = {}
    for word in probe_words(words, counts={w: len(h) for w, h in holders.items()}):
        candidates.update(dict.fromkeys(holders[word]))
        if len(candidates) >= TEXT_CANDIDATES:
            break
    seqs = list(candidates)[:TEXT_CANDIDATES]
    if not seqs:
        return
    for overlap in tx.memory_words.overlaps(seqs, words, cap):
        if overlap.memory_id in exclude or overlap.shared < need:
            continue
        score = overlap.shared / (len(words) + overlap.size - overlap.shared)
        if score < RESTATES_AT:
            continue
        source_text = tx.source_memories.source_text(overlap.source_id)
        related = entry(overlap.seq, overlap.memory_id, overlap.namespace, source_text)
        related.relations.insert(0, "restates")
        related.why.insert(0, "the same words" if score == 1 else
                           f"near-duplicate text ({score:.2f} of the words in either are in both)")
