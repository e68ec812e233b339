"""Which Snowball stemmer a word gets, and the stop words a question drops.

A word in Cyrillic, Greek, Arabic, Armenian, Devanagari or Tamil script is stemmed by that script's language;
every other word by the configured language (DATALOG_MEMORY_SEARCH_LANGUAGE, English by default), since
Latin-script languages cannot be told apart word by word. Stemmers come from the `snowballstemmer` package
(PyStemmer's C code when installed); a stemmer object is not thread-safe, so each thread has its own."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Mapping

import snowballstemmer

from ..errors import InvalidConfiguration

LANGUAGE_VARIABLE = "DATALOG_MEMORY_SEARCH_LANGUAGE"
DEFAULT_LANGUAGE = "english"
LANGUAGES = tuple(sorted(set(snowballstemmer.algorithms()) - {"porter", "dutch_porter"}))

# (first code point, last code point, language): scripts that name their language well enough.
_SCRIPTS = ((0x0370, 0x03FF, "greek"), (0x0400, 0x04FF, "russian"), (0x0530, 0x058F, "armenian"),
            (0x0600, 0x06FF, "arabic"), (0x0900, 0x097F, "hindi"), (0x0B80, 0x0BFF, "tamil"))

# Snowball's English stop word list (snowballstemmer.org/algorithms/english/stop.txt), folded as words are
# (no apostrophes: "don't" is the words don and t).
ENGLISH_STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing would should could ought a an the and but if or because as
until while of at by for with about against between into through during before after above below to from up
down in out on off over under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very s t can will just don shan ll re ve d m o y
""".split())


def language_setting(env: Mapping[str, str] | None = None) -> str:
    """The configured stemming language for Latin-script words; refused by name when Snowball has none."""
    text = (os.environ if env is None else env).get(LANGUAGE_VARIABLE, "").strip().lower()
    if not text:
        return DEFAULT_LANGUAGE
    if text not in LANGUAGES:
        raise InvalidConfiguration(f"invalid {LANGUAGE_VARIABLE}={text[:30]!r}: one of {', '.join(LANGUAGES)}")
    return text


def script_language(word: str) -> str | None:
    """The language a word's script names (its first letter decides), or None for Latin and the rest."""
    code = ord(word[0])
    for first, last, language in _SCRIPTS:
        if first <= code <= last:
            return language
    return None


_local = threading.local()


def _stemmer(language: str):
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    if language not in stemmers:
        stemmers[language] = snowballstemmer.stemmer(language)
    return stemmers[language]


@lru_cache(maxsize=65536)
def stem(word: str, language: str) -> str:
    """The Snowball stem of a folded alphabetic word (a word's own script's language wins over `language`)."""
    return _stemmer(script_language(word) or language).stemWord(word)
