"""Lines that lay an answer out and assert nothing: headings and a table's header row.

`verify` keeps them as they are, like "Here is what I found.", instead of stripping them for want
of a citation: a model's summary opens with "Incident summary:" or "## Timeline", and a markdown
table needs its header. Only labels count: a line is layout when it is a markdown heading (`#`…)
of at most six words, a line of at most four words ending in a colon, or a table row followed by
a separator row (`|---|---|`), and every word of it is claim-free, an entity type or one of
`lexicon.HEADING_WORDS`, with no entity, number, date, negation or citation. Anything else
("Breach confirmed:", "# account:mallory wiped host:db01") is judged as a claim."""

from __future__ import annotations

import re

from .claims import CLAIM_FREE, Claim, stem
from .lexicon import HEADING_WORDS
from .sentences import TAG

_HEADING = re.compile(r"^\s*#{1,6}\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LABEL = {stem(w) for w in HEADING_WORDS}
MAX_HEADING_WORDS, MAX_COLON_WORDS = 6, 4


def is_layout(unit: str, following: str | None, claim: Claim, words: list[str], types: set[str]) -> bool:
    """Whether the unit is a heading or a table header that asserts nothing (`following`: the next unit)."""
    if claim.entities or claim.numbers or claim.moments or claim.negation or claim.invalid or claim.ordering \
            or TAG.search(unit) or not words:
        return False
    if not all(_label(w.lower(), types) for w in words):
        return False
    if _HEADING.match(unit):
        return len(words) <= MAX_HEADING_WORDS
    if _TABLE_ROW.match(unit):
        return following is not None and _SEPARATOR.match(following) is not None
    return unit.rstrip().endswith(":") and len(words) <= MAX_COLON_WORDS


def _label(word: str, types: set[str]) -> bool:
    return word in CLAIM_FREE or stem(word) in _LABEL or any(k in types for k in (word, word[:-1], word[:-2]))
