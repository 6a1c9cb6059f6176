"""Quotes as evidence: find a statement's quote in the passage it names, deterministically.

A statement keeps a passage's label only when the words it quotes stand in that passage. "Stand in" is
exact after a normalisation that only undoes how text reached us, never what it says:

- Unicode NFKC (ligatures such as "ﬁ" and full-width forms), case folded;
- typographic quotes, apostrophes and dashes read as their ASCII forms, soft hyphens dropped;
- a word broken across a line by a hyphen ("descal-\\ning") read whole;
- every run of whitespace read as one space; quotes trimmed of surrounding spaces, quote marks and
  trailing punctuation, and "…" or "..." in a quote allowed to skip words (each piece must then be found,
  in order, within the same passage).

A model whose grammar caps a quote's length may stop it mid-word: ``locate_cut`` reads such a quote to its
last whole word. The span that travels with the citation is in the passage's own characters, so the browser
can mark it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# The shortest quote that counts as evidence once normalised: shorter pieces ("the", "3") match anywhere.
MIN_QUOTE_CHARS = 8
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
    return _locate(pieces, passage) if pieces else None


def locate_cut(quote: str, passage: str) -> Span | None:
    """Where ``quote`` stands in ``passage``, or, for a quote a length cap cut mid-word, its whole words do.

    A grammar that caps a quote's length stops it wherever the cap falls ("descale every two mon"). Such a
    quote is read to its last whole word when those words stand in the passage and the passage's next word
    there begins with the cut one. A wrong last whole word, or a cut piece no word there begins with, is not
    found; nor is a remainder of one word or shorter than ``MIN_QUOTE_CHARS``, which would stand anywhere.
    """
    span = locate(quote, passage)
    pieces = quote_pieces(quote)
    if span is not None or not pieces:
        return span
    head, _, cut = pieces[-1].rpartition(" ")
    whole = head.rstrip(_TRIM)
    remainder = [*pieces[:-1], whole]
    if not whole or not cut[-1].isalnum() or len(" ".join(remainder).split()) < 2:
        return None
    if sum(len(piece) for piece in remainder) < MIN_QUOTE_CHARS:
        return None
    return _locate([*pieces[:-1], f"{head} {cut}"], passage, keep=len(whole))


def _locate(pieces: list[str], passage: str, *, keep: int | None = None) -> Span | None:
    """Where ``pieces`` stand in ``passage`` in order, word-bounded; with ``keep``, the last ends inside a word
    and only its first ``keep`` characters belong to the span."""
    folded = _fold(passage)
    first, cursor = -1, 0
    for i, piece in enumerate(pieces):
        cut = keep is not None and i == len(pieces) - 1
        at = (_cut_word_find if cut else _word_bounded_find)(folded.text, piece, cursor)
        if at < 0:
            return None
        first = at if first < 0 else first
        cursor = at + (keep if cut and keep is not None else len(piece))
    return Span(folded.origin[first], folded.origin[cursor - 1] + 1)


def _cut_word_find(haystack: str, needle: str, start: int) -> int:
    """The first place ``needle`` begins a word in ``haystack`` from ``start`` and ends inside one."""
    at = haystack.find(needle, start)
    while at >= 0:
        before = haystack[at - 1] if at > 0 else " "
        after = haystack[at + len(needle)] if at + len(needle) < len(haystack) else " "
        if not (needle[0].isalnum() and before.isalnum()) and after.isalnum():
            return at
        at = haystack.find(needle, at + 1)
    return -1


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
