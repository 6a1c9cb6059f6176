"""BM25's analyzer: the words of a text as the lexical index sees them, and the query's words a passage holds.

The same splitter, stopwords and stemmer as ``bm25s.tokenize(..., stopwords="en", stemmer=...)``, so scores
match bm25s run directly (and the published BEIR numbers it reproduces). ``TOKENIZER`` describes them and is
saved with an index: an index made by another analyzer is rebuilt rather than searched.
"""

from __future__ import annotations

import re
import threading

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

# bm25s splits with r"(?u)\b\w\w+\b"; a greedy \w\w+ finds the same maximal runs, a quarter faster.
_WORD = re.compile(r"\w\w+")
_STOPWORDS = frozenset(STOPWORDS_EN)
TOKENIZER = {
    "pattern": _WORD.pattern,
    "lowercase": True,
    "stopwords": sorted(_STOPWORDS),
    "stemmer": "snowball-english",
    "pystemmer": Stemmer.version(),  # a new Snowball release may stem differently: re-tokenize
}
_local = threading.local()  # PyStemmer objects must not be shared between threads


def stem_words(words: list[str]) -> list[str]:
    """Snowball stems of ``words``, in order."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    stems: list[str] = stemmer.stemWords(words)
    return stems


def content_words(text: str) -> list[str]:
    """The lowercased words of 2+ word characters in ``text`` that are not English stopwords, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def tokenize(text: str) -> list[str]:
    """Lowercase, split into words of 2+ word characters, drop English stopwords, Snowball-stem."""
    return stem_words(content_words(text))


def matched_terms(query: str, text: str) -> list[str]:
    """The query's content words, as the query spells them, whose stems occur in ``text``; no repeats."""
    in_text = set(tokenize(text))
    first: dict[str, str] = {}  # lowercased word -> its first spelling in the query
    for word in _WORD.findall(query):
        lower = word.lower()
        if lower not in _STOPWORDS:
            first.setdefault(lower, word)
    stems = stem_words(list(first))
    return [word for word, stem in zip(first.values(), stems, strict=True) if stem in in_text]
