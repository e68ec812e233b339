"""The terms search matches and scores, and the per-memory index of them (migrations 0011, 0014) written with
each memory.

Analysis, the same for a memory's text, its projection statements and a query:

1. case folded; accents removed (NFKD, combining marks dropped, then NFC so Hangul syllables stay whole; the
   kana voicing marks are kept, since が is not か);
2. split into words: runs of letters, digits and '_';
3. a run of Chinese, Japanese or Korean characters becomes its overlapping character pairs (北京大学: 北京,
   京大, 大学; a lone character stays itself), so a word matches inside text written without spaces;
4. any other alphabetic word is reduced to its Snowball stem (stemming.py): deploy, deploys, deployed and
   deployment are one term;
5. two neighbouring alphabetic words also give their joined form, the first stemmed and the whole stemmed
   again (roll back, rolled back and roll-back give rollback; data base gives database's stem), unless the first is a stop word or the second one other than a particle (set up, log in): a query for rollback finds "roll back" and the reverse. Joined
   terms count as occurrences but not in a memory's length.

A query then drops its stop words (stemming.ENGLISH_STOP_WORDS) unless nothing else is left. The analyzer's
tag (ANALYZER_VERSION and the language) is recorded in the database; a store whose terms were made otherwise
is re-indexed before it is searched (reindex.py)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from .stemming import ENGLISH_STOP_WORDS, language_setting, stem

ANALYZER_VERSION = 2  # 1: migration 0011's words (folded, not stemmed); 2: this analysis
_WORD = re.compile(r"\w+")
_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_KANA_MARKS = "\u3099\u309a"
MAX_JOINED_CHARS = 24  # a joined form longer than this is no compound anyone writes as one word
# Stop words that end compounds written either way (set up / setup, log in / login, check out / checkout).
PARTICLES = frozenset({"up", "out", "in", "on", "off", "down", "over"})


def fold(text: str | None) -> str:
    """Case and accents folded, as every term is made."""
    folded = (text or "").casefold()
    if folded.isascii():  # nothing to decompose (the common case, and per character the costly part)
        return folded
    decomposed = unicodedata.normalize("NFKD", folded)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c) or c in _KANA_MARKS)
    return unicodedata.normalize("NFC", kept)


def folded_words(text: str | None) -> list[str]:
    """Words after folding, before stemming (what a projection key or a plain word match compares)."""
    return _WORD.findall(fold(text))


class Term(NamedTuple):  # a tuple: made for every word of every memory written and of every result shown
    term: str  # what the index holds
    form: str  # the folded text it came from (a word, a character pair, or two words joined by a space)
    joined: bool  # made from two neighbouring words (not counted in a memory's length)


@cache
def _cjk_patterns() -> tuple[re.Pattern, re.Pattern]:
    """(runs of CJK or other characters, one CJK character): compiled when the first word that is not ASCII is
    analyzed, since the character classes take 5 ms to compile and most processes never meet such a word."""
    return re.compile(f"[{_CJK}]+|[^{_CJK}]+"), re.compile(f"[{_CJK}]")


def analyze(text: str | None, language: str | None = None) -> list[Term]:
    """Every term of `text`, in order, each with the form it came from."""
    language = language or language_setting()
    out: list[Term] = []
    previous: str | None = None  # the last alphabetic non-CJK word, for joined forms
    for word in folded_words(text):
        cjk_char = None
        parts = [word]
        if not word.isascii():
            runs, cjk_char = _cjk_patterns()
            if cjk_char.search(word):
                parts = runs.findall(word)
        for part in parts:
            if cjk_char is not None and cjk_char.match(part):
                previous = None
                if len(part) == 1:
                    out.append(Term(part, part, False))
                else:
                    out.extend(Term(part[i:i + 2], part[i:i + 2], False) for i in range(len(part) - 1))
                continue
            if not part.isalpha():  # digits, '_': kept as written (x1, 42, foo_bar)
                out.append(Term(part, part, False))
                previous = None
                continue
            out.append(Term(stem(part, language), part, False))
            if previous is not None and previous not in ENGLISH_STOP_WORDS \
                    and (part not in ENGLISH_STOP_WORDS or part in PARTICLES) \
                    and len(previous) + len(part) <= MAX_JOINED_CHARS:
                out.append(Term(stem(stem(previous, language) + part, language), f"{previous} {part}", True))
            previous = part
    return out


def query_terms(query: str, language: str | None = None) -> list[Term]:
    """A query's distinct terms, in order of first appearance, its stop words dropped unless only they are there
    (a joined form whose first word is a stop word was never made)."""
    terms = analyze(query, language)
    content = [t for t in terms if t.joined or t.form not in ENGLISH_STOP_WORDS]
    seen: dict[str, Term] = {}
    for t in content if any(not t.joined for t in content) else terms:
        seen.setdefault(t.term, t)
    return list(seen.values())


@dataclass(frozen=True)
class WordCounts:
    """A memory's terms as search ranks them: how often each occurs in the text and in the statements, and how
    many words each has (source_memories.text_words, statement_words; joined forms not counted)."""

    occurrences: list[tuple[str, int, int]]  # (term, in text, in statements)
    text_words: int
    statement_words: int


def count_words(text: str | None, statements: str | None, language: str | None = None) -> WordCounts:
    language = language or language_setting()
    in_text, in_statements = analyze(text, language), analyze(statements, language)
    counts_text = Counter(t.term for t in in_text)
    counts_statements = Counter(t.term for t in in_statements)
    return WordCounts([(w, counts_text[w], counts_statements[w]) for w in counts_text | counts_statements],
                      sum(1 for t in in_text if not t.joined), sum(1 for t in in_statements if not t.joined))


def matched_forms(text: str | None, terms: set[str], language: str | None = None) -> dict[str, list[str]]:
    """For each of `terms` found in `text`: the forms there that gave it, in order of first appearance."""
    found: dict[str, dict[str, None]] = {}
    for t in analyze(text, language):
        if t.term in terms:
            found.setdefault(t.term, {})[t.form] = None
    return {term: list(forms) for term, forms in found.items()}

