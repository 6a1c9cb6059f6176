"""Passages as quotable sentences, and the sentences that best match a question.

A small model that must quote chooses among sentences the backend cut, rather than copying text freely;
it reads only the sentences that share most words with the question, which also makes its prompt shorter.
Excerpt mode (no model) answers with the same best sentences. A sentence that two overlapping passages
share is read once.

Sentences end at ``.``/``!``/``?`` before a capital, digit or opening mark (not after "i.e." or "e.g."),
and at paragraph breaks; Markdown headings, list items and table rows (lines of ``cell | cell``) are units
of their own. A single line break inside a paragraph (a PDF's hard wrap) does not end a sentence, and a
sentence that ends in a colon keeps what it introduces. A table row carries its table's header row (the
first row; the chunker repeats it in every chunk of a table): "| 2 | 13 km | 540 m |" says a total ascent
only under "| Stage | Distance | Total ascent |", for the ranking, the checks and the reader alike.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sextant.agent.evidence import MIN_QUOTE_CHARS

_BREAK = re.compile(
    r"\n[ \t]*\n"  # a paragraph break
    r"|\n(?=[ \t]*(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|\|))"  # a line that starts a heading, item or table row
    r"|\n(?=[^\n]*\s\|\s)"  # a table row ("cell | cell"), each row its own unit
    r"|(?<=[.!?])(?<!\b\w\.\w\.)[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])"  # a sentence end before a capital or digit,
    # not "i.e." or "e.g."
)
_HEADING = re.compile(r"^\s*#{1,6}\s")
_LIST = re.compile(r"^(?:[-*+]\s|\d{1,3}[.)]\s)")
_ROW = re.compile(r"^\||\s\|\s")
_SEPARATOR = re.compile(r"^[\s|:-]*-{3}[\s|:-]*$")
_ITEM_NUMBER = re.compile(r"^\d{1,3}[.)]$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TERM = re.compile(r"[^\W_]+|%", re.UNICODE)
# A unit written short or long, or spelt the other side of the Atlantic, is one word: "10 g" says "10 grams".
# Only abbreviations no common word shares ("m" is also "I'm", "s" "it's"), unless a number comes first.
_UNITS = {
    **dict.fromkeys(("g", "gram", "grams", "gramme", "grammes"), "gram"),
    **dict.fromkeys(("kg", "kilogram", "kilograms", "kilo", "kilos"), "kilogram"),
    **dict.fromkeys(("mg", "milligram", "milligrams"), "milligram"),
    **dict.fromkeys(("ml", "millilitre", "millilitres", "milliliter", "milliliters"), "millilitre"),
    **dict.fromkeys(("litre", "litres", "liter", "liters"), "litre"),
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers"), "kilometre"),
    **dict.fromkeys(("cm", "centimetre", "centimetres", "centimeter", "centimeters"), "centimetre"),
    **dict.fromkeys(("mm", "millimetre", "millimetres", "millimeter", "millimeters"), "millimetre"),
    **dict.fromkeys(("metre", "metres", "meter", "meters"), "metre"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "minute"),
    **dict.fromkeys(("hr", "hrs", "hour", "hours"), "hour"),
    **dict.fromkeys(("%", "percent", "pct"), "percent"),
}
# Abbreviations that are units only after a number: "540 m", "4.5 h", "30 s".
_AFTER_NUMBER = {"m": "metre", "h": "hour", "s": "second"}
# Words that say nothing about what a question asks for.
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """a an and are as at be been being but by can could did do does doing for from had has have how i if in
        into is it its may me might must my no nor not of on or our should so such than that the their them then
        there these they this those to too under until up very was we were what when where which while who whom
        why will with would you your about after again all also any before both each few more most other over
        own same some only out off once here just shall get got use used using one""",
    )
)
# Of those, the words that can be the whole of an answer ("evaluated only once", "not included", "the same
# key"): an answer is weighed against its evidence with them, though a question's vocabulary leaves them out.
_ANSWER_WORDS = frozenset(
    re.findall(r"\w+", "no not nor once only all both each few more most same before after over under off out up")
)
MAX_SENTENCE_CHARS = 400
MIN_WORDS = 2


@dataclass(frozen=True)
class Sentence:
    """``passage_text[start:end]`` of one passage, and that text with its whitespace reflowed."""

    label: int
    start: int
    end: int
    text: str
    header: str = ""  # a table row's header row, reflowed: a row's cells mean what their columns are called

    @property
    def said(self) -> str:
        """What the sentence says: a table row under its header ("| Total ascent |" … "| 540 m |")."""
        return f"{self.header}\n{self.text}" if self.header else self.text


def split(label: int, text: str) -> list[Sentence]:
    """The quotable sentences of one passage: headings, questions and one-word lines left out.

    A sentence that ends in a colon is one with what it introduces ("run venv with the directory path:" and
    the command under it), when the two fit in one sentence's length: apart, neither says what they say. A
    list or table it introduces stays rows of their own: the colon's sentence belongs to all of them.
    """
    sentences: list[Sentence] = []
    header = ""  # of the table the last unit was a row of
    row = False  # whether the last unit was a table row
    for start, end in _units(text):
        body = text[start:end]
        if _HEADING.match(body):
            row = False
            continue
        if _SEPARATOR.match(body):
            continue  # a Markdown table's "| --- | --- |"
        if _ROW.search(body):
            flat = " ".join(body.split())
            # The first row of a table is its header, quotable itself; the rows under it carry it.
            sentences.append(Sentence(label, start, end, flat, header if row else ""))
            header = header if row else flat
            row = True
            continue
        row = False
        last = sentences[-1] if sentences else None
        if (
            last is not None
            and last.text.endswith(":")
            and not _LIST.match(body)
            and end - last.start <= MAX_SENTENCE_CHARS
        ):
            sentences[-1] = Sentence(label, last.start, end, " ".join(text[last.start : end].split()))
        else:
            sentences.append(Sentence(label, start, end, " ".join(body.split())))
    return [s for s in sentences if _quotable(s.text)]


def _units(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each stripped piece of ``text`` between breaks."""
    units: list[tuple[int, int]] = []
    start = 0
    for match in [*_BREAK.finditer(text), None]:
        end = match.start() if match is not None else len(text)
        piece = text[start:end]
        body = piece.strip()
        if _ITEM_NUMBER.match(body) and match is not None:
            continue  # "1." of a numbered step stays with the step's text
        if body:
            lead = len(piece) - len(piece.lstrip())
            units.append((start + lead, start + lead + len(body)))
        if match is not None:
            start = match.end()
    return units


def _quotable(flat: str) -> bool:
    """A claim can stand on it: not a question, not a bare heading line, not too long to read as one."""
    return (
        MIN_QUOTE_CHARS <= len(flat) <= MAX_SENTENCE_CHARS
        and not flat.endswith("?")
        and len(_WORD.findall(flat)) >= MIN_WORDS
    )


def terms(text: str) -> list[str]:
    """Content words, lower-cased and crudely stemmed, so 'descaling' meets 'descale'."""
    return _content_words(text, _STOPWORDS)


def answer_terms(text: str) -> list[str]:
    """``terms`` with the function words that can carry an answer ("once", "not", "only") kept."""
    return _content_words(text, _STOPWORDS - _ANSWER_WORDS)


def _content_words(text: str, dropped: frozenset[str]) -> list[str]:
    words = _TERM.findall(text.casefold())
    units = [
        _UNITS.get(word) or (_AFTER_NUMBER.get(word) if i and words[i - 1].isdigit() else None) or word
        for i, word in enumerate(words)
    ]
    return [_stem(word) for word in units if word not in dropped]


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "edly", "ed", "es", "s", "ly", "e"):
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    score: float  # summed weight of the question's terms the sentence holds
    coverage: float  # that weight as a share of all the question's term weight


def rank(question: str, sentences: Sequence[Sentence]) -> list[Scored]:
    """``sentences`` by how much of the question's vocabulary they hold, rarest words weighing most.

    Weights are inverse sentence frequencies over ``sentences`` themselves: a word every passage shares
    (the manual's subject) tells less than the one word that names what is asked.
    """
    asked = set(terms(question))
    if not asked or not sentences:
        return [Scored(s, 0.0, 0.0) for s in sentences]
    bags = [set(terms(s.said)) for s in sentences]
    frequency: Counter[str] = Counter(t for bag in bags for t in bag & asked)
    weight = {t: math.log(1 + (len(sentences) + 1) / (frequency[t] + 0.5)) for t in asked}
    total = sum(weight.values())
    scored = [
        Scored(s, sum(weight[t] for t in bag & asked), sum(weight[t] for t in bag & asked) / total)
        for s, bag in zip(sentences, bags, strict=True)
    ]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    return [scored[i] for i in order]


def distinct(passages: Iterable[tuple[int, str]]) -> list[Sentence]:
    """The sentences of ``(label, text)`` passages in reading order, each text once, under the first passage
    that holds it: neighbouring chunks overlap, and a repeated sentence would take a reader's place twice."""
    seen: set[str] = set()
    kept: list[Sentence] = []
    for label, text in passages:
        for sentence in split(label, text):
            if sentence.text not in seen:
                seen.add(sentence.text)
                kept.append(sentence)
    return kept


def readable(sentences: Iterable[Sentence]) -> list[str]:
    """The texts of ``sentences`` as a reader needs them: a table row after its header, each header once."""
    texts: list[str] = []
    for sentence in sentences:
        if sentence.header and sentence.header not in texts:
            texts.append(sentence.header)
        texts.append(sentence.text)
    return texts


def candidates(question: str, passages: Iterable[tuple[int, str]], limit: int) -> list[Sentence]:
    """The ``limit`` sentences that best match ``question``, each passage's best first, in reading order.

    Sentences sharing no content word with the question are left out, unless no sentence shares one.
    """
    every = distinct(passages)
    scored = rank(question, every)
    ranked = [r.sentence for r in scored if r.score > 0] or [r.sentence for r in scored]
    picked: list[Sentence] = []
    for sentence in ranked:
        if all(p.label != sentence.label for p in picked):
            picked.append(sentence)
    picked += [s for s in ranked if s not in picked]
    position = {s: i for i, s in enumerate(every)}
    return sorted(picked[: max(limit, 0)], key=position.__getitem__)
