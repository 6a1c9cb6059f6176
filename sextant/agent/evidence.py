"""Quotes as evidence: find a statement's quote in the passage it names, deterministically.

A statement keeps a passage's label only when the words it quotes stand in that passage. "Stand in" is
exact after a normalisation that only undoes how text reached us, never what it says:

- Unicode NFKC (ligatures such as "ﬁ" and full-width forms), case folded;
- typographic quotes, apostrophes and dashes read as their ASCII forms, soft hyphens dropped;
- a word broken across a line by a hyphen ("descal-\\ning") read whole;
- every run of whitespace read as one space; quotes trimmed of surrounding spaces, quote marks and
  trailing punctuation, and "…" or "..." in a quote allowed to skip words (each piece must then be found,
  in order, within the same passage).

The span that travels with the citation is in the passage's own characters, so the browser can mark it.

``locate_run`` is a looser lookup for the quote check's ``facts`` tolerance: a small model copies a sentence
but changes a word of it ("Quillfeather Analytics Ltd. uses core hours: …" where the passage says "We use
core hours: …"). It finds the longest run of the quote's words that stands in the passage, if that run is
most of the quote.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

# The shortest quote that counts as evidence once normalised: shorter pieces ("the", "3") match anywhere.
MIN_QUOTE_CHARS = 8
# A run of a changed quote counts when it is this many words at least, and this share of the quote's words.
MIN_RUN_WORDS = 6
MIN_RUN_SHARE = 2 / 3
_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2032": "'",
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)
_ELLIPSIS = re.compile(r"\s*(?:\u2026|\.\.\.)\s*")
_TRIM = " \t\r\n\"'`.,;:!?()[]{}"


@dataclass(frozen=True)
class Span:
    """A quote found in a passage: ``text[start:end]`` of the passage."""

    start: int
    end: int


@dataclass(frozen=True)
class _Folded:
    text: str
    origin: tuple[int, ...]  # origin[i]: index in the original text of folded character i


def fold(text: str) -> str:
    """``text`` as the quote check compares it."""
    return _fold(text).text


def _fold(text: str) -> _Folded:
    chars: list[str] = []
    origin: list[int] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\u00ad":  # a soft hyphen is where a line may break, not a character
            i += 1
            continue
        if char == "-" and chars and chars[-1].isalpha():
            # "descal-\ning": a hyphen at a line end joins the word around the break.
            j = i + 1
            while j < n and text[j] in " \t\r":
                j += 1
            if j < n and text[j] == "\n":
                j += 1
                while j < n and text[j] in " \t\r\n":
                    j += 1
                if j < n and text[j].isalpha():
                    i = j
                    continue
        if char.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            i += 1
            continue
        for piece in unicodedata.normalize("NFKC", char.translate(_TRANSLATE)).casefold():
            if piece.isspace():
                if chars and chars[-1] != " ":
                    chars.append(" ")
                    origin.append(i)
            else:
                chars.append(piece)
                origin.append(i)
        i += 1
    return _Folded("".join(chars), tuple(origin))


def quote_pieces(quote: str) -> list[str]:
    """The folded pieces of a quote that must each be found; empty when the quote is too short to count."""
    pieces = [fold(piece).strip(_TRIM) for piece in _ELLIPSIS.split(quote)]
    pieces = [piece for piece in pieces if piece]
    if not pieces or sum(len(piece) for piece in pieces) < MIN_QUOTE_CHARS:
        return []
    return pieces


def locate(quote: str, passage: str) -> Span | None:
    """Where ``quote`` stands in ``passage``, in ``passage``'s characters; None when it does not."""
    pieces = quote_pieces(quote)
    if not pieces:
        return None
    folded = _fold(passage)
    first_start = -1
    cursor = 0
    last_end = 0
    for piece in pieces:
        at = _word_bounded_find(folded.text, piece, cursor)
        if at < 0:
            return None
        if first_start < 0:
            first_start = at
        cursor = at + len(piece)
        last_end = cursor
    start = folded.origin[first_start]
    end = folded.origin[last_end - 1] + 1
    return Span(start, end)


def locate_run(quote: str, passage: str) -> Span | None:
    """Where the longest run of ``quote``'s words that stands in ``passage`` is, if it is most of the quote."""
    words = fold(quote).split()
    folded = _fold(passage)
    shortest = max(MIN_RUN_WORDS, math.ceil(MIN_RUN_SHARE * len(words)))
    for length in range(len(words), shortest - 1, -1):
        for first in range(len(words) - length + 1):
            piece = " ".join(words[first : first + length]).strip(_TRIM)
            at = _word_bounded_find(folded.text, piece, 0) if len(piece) >= MIN_QUOTE_CHARS else -1
            if at >= 0:
                return Span(folded.origin[at], folded.origin[at + len(piece) - 1] + 1)
    return None


def _word_bounded_find(haystack: str, needle: str, start: int) -> int:
    """The first place ``needle`` stands in ``haystack`` from ``start`` that does not begin or end mid-word."""
    at = haystack.find(needle, start)
    while at >= 0:
        before = haystack[at - 1] if at > 0 else " "
        after = haystack[at + len(needle)] if at + len(needle) < len(haystack) else " "
        if not (needle[0].isalnum() and before.isalnum()) and not (needle[-1].isalnum() and after.isalnum()):
            return at
        at = haystack.find(needle, at + 1)
    return -1
