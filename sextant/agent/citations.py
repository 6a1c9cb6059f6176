"""Citation markers in an answer: find them, check them against the passages shown, strip the dangling.

A marker is ``[n]`` or ``[n, m]``. A label that names no passage the model was shown is removed from
the answer and reported; a claim (sentence) counts as cited when it carries at least one valid label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MARKER = re.compile(r"\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]")
# A marker glued to a word or a link text is not a citation: "[3](http://...)" is a Markdown link.
_NOT_LINK = r"(?!\()"
CITATION = re.compile(MARKER.pattern + _NOT_LINK)
_SENTENCE_END = re.compile(r"(?<=[.!?])(?:\s*(?:\[\d{1,4}(?:\s*,\s*\d{1,4})*\]))*\s+|\n+")


# Phrases by which an answer says the documents do not answer the question.
_NOT_ANSWERED = re.compile(
    r"\b(?:(?:do(?:es)?|did) not|don't|doesn't|cannot|can't|could not|no)\b[^.]{0,60}?"
    r"\b(?:answer|mention|cover|contain|say|state|include|information|passage|document)",
    re.IGNORECASE,
)


def says_not_answered(text: str) -> bool:
    """Whether ``text`` says the documents do not answer the question."""
    return bool(_NOT_ANSWERED.search(text))


@dataclass(frozen=True)
class CitationReport:
    text: str
    claims: int
    claims_cited: int
    labels_total: int
    labels_valid: int
    cited: tuple[int, ...]
    dangling: tuple[int, ...]

    @property
    def validity(self) -> float:
        return self.labels_valid / self.labels_total if self.labels_total else 1.0


def labels_in(text: str) -> list[int]:
    """Every label cited in ``text``, in order, repeats kept."""
    return [int(n) for match in CITATION.finditer(text) for n in match.group(1).split(",")]


def claims_in(text: str) -> list[str]:
    """The answer's sentences and list items, each with the markers that follow it."""
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        pieces.append(text[start:end].strip())
        start = end
    pieces.append(text[start:].strip())
    return [p for p in pieces if re.search(r"\w", MARKER.sub("", p).strip("#*-> \t"))]


def check(text: str, valid: Iterable[int]) -> CitationReport:
    """Drop dangling labels from ``text`` and count what remains."""
    valid_set = set(valid)
    cited: list[int] = []
    dangling: list[int] = []

    def keep_valid(match: re.Match[str]) -> str:
        labels = [int(n) for n in match.group(1).split(",")]
        good = [n for n in labels if n in valid_set]
        cited.extend(good)
        dangling.extend(n for n in labels if n not in valid_set)
        return "".join(f"[{n}]" for n in good)

    cleaned = CITATION.sub(keep_valid, text)
    cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned)
    claims = claims_in(cleaned)
    return CitationReport(
        text=cleaned,
        claims=len(claims),
        claims_cited=sum(1 for claim in claims if labels_in(claim)),
        labels_total=len(cited) + len(dangling),
        labels_valid=len(cited),
        cited=tuple(dict.fromkeys(cited)),
        dangling=tuple(dict.fromkeys(dangling)),
    )


class MarkerScanner:
    """Finds markers in streamed text as they complete, across delta boundaries."""

    def __init__(self) -> None:
        self._tail = ""

    def feed(self, delta: str) -> list[int]:
        text = self._tail + delta
        found: list[int] = []
        last = 0
        for match in MARKER.finditer(text):
            found.extend(int(n) for n in match.group(1).split(","))
            last = match.end()
        rest = text[last:]
        open_at = rest.rfind("[")
        # Keep an unclosed "[12" for the next delta; anything longer cannot be a marker.
        self._tail = rest[open_at:] if open_at != -1 and len(rest) - open_at <= 24 else ""
        return found
