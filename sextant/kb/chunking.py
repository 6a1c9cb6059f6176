"""Token-aware chunking with exact character offsets.

A prose chunk is ``text[start:end]`` of its document; a table chunk is a few rows under one copy
of the table's caption and header row, kept in ``prefix`` so ``chunk.text == prefix + text[start:end]``
still holds and the span points at the rows alone.

Prose is cut into windows of ``target`` tokens measured with the embedder's own tokenizer, with an
overlap of a fifth of the target. Each cut is moved back to the strongest boundary in the last 40%
of the window (a section start, then a paragraph, a sentence, a line, a word), so chunks end where
a reader would pause. No chunk spans two pages, so a page citation is always exact, and none
overlaps across a section start.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from sextant.kb.documents import LoadedDocument, PageSpan, TableSpan
from sextant.kb.embeddings import TokenSpans

ChunkKind = Literal["text", "table"]

_SENTENCE_END = re.compile(r"[.!?。][\"')\]]*\s+")
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_LINE = re.compile(r"\n\s*")
HARD_BREAK = 5.0


class Tokenizer(Protocol):
    """What chunking needs of an embedder."""

    def token_spans(self, text: str) -> TokenSpans: ...

    def count_tokens(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable passage and everything needed to cite it."""

    index: int
    start: int
    end: int
    text: str
    prefix: str
    kind: ChunkKind
    page: PageSpan | None
    pages: tuple[int, ...]
    section: str
    rows: tuple[int, ...] = ()
    anchor: str = ""  # where a link can point at the section: its heading's anchor


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    """Chunk size in tokens; the overlap is a fifth of it, as the knowledge-base issue fixes."""

    target: int = 200
    max_table_rows: int = 2  # learning/table-chunking.md

    @property
    def overlap(self) -> int:
        return self.target // 5


def chunk_document(doc: LoadedDocument, tokenizer: Tokenizer, config: ChunkingConfig) -> list[Chunk]:
    """Cut a document into prose and table chunks, in document order."""
    pieces: list[tuple[int, int, str, ChunkKind, tuple[int, ...]]] = []
    section_starts = [s.start for s in doc.sections]
    cursor = 0
    for table in doc.tables:
        pieces.extend(_prose(doc, cursor, table.start, tokenizer, config, section_starts))
        pieces.extend(_table_pieces(doc.text, table, tokenizer, config))
        cursor = max(cursor, table.end)
    pieces.extend(_prose(doc, cursor, len(doc.text), tokenizer, config, section_starts))
    pieces.sort(key=lambda piece: piece[0])
    return [_cite(doc, i, *piece) for i, piece in enumerate(pieces)]


def _cite(
    doc: LoadedDocument, index: int, start: int, end: int, prefix: str, kind: ChunkKind, rows: tuple[int, ...]
) -> Chunk:
    pages = tuple(p.number for p in doc.pages if p.start < end and start < p.end)
    section = doc.section_at(start)
    return Chunk(
        index=index,
        start=start,
        end=end,
        text=prefix + doc.text[start:end],
        prefix=prefix,
        kind=kind,
        page=doc.page_at(start),
        pages=pages,
        section=section.title if section else "",
        rows=rows,
        anchor=section.anchor if section else "",
    )


def _prose(
    doc: LoadedDocument, lo: int, hi: int, tokenizer: Tokenizer, config: ChunkingConfig, section_starts: list[int]
) -> Iterator[tuple[int, int, str, ChunkKind, tuple[int, ...]]]:
    """Prose between ``lo`` and ``hi``, cut at every page start."""
    cuts = [lo, *sorted(p.start for p in doc.pages if lo < p.start < hi), hi]
    for a, b in itertools.pairwise(cuts):
        yield from _prose_pieces(doc.text, a, b, tokenizer, config, section_starts)


def _prose_pieces(
    text: str, lo: int, hi: int, tokenizer: Tokenizer, config: ChunkingConfig, section_starts: list[int]
) -> Iterator[tuple[int, int, str, ChunkKind, tuple[int, ...]]]:
    region = text[lo:hi]
    if not region.strip():
        return
    spans = tokenizer.token_spans(region)
    n = len(spans)
    if n == 0:
        return
    score = _boundary_scorer(region, [b - lo for b in section_starts if lo < b < hi])
    first = 0
    while first < n:
        last = min(first + config.target, n)  # exclusive token index
        if last < n:
            last = _best_cut(spans, first, last, config.target, score)
        start, end = int(spans.starts[first]), int(spans.ends[last - 1])
        yield lo + start, lo + end, "", "text", ()
        if last >= n:
            break
        # No overlap across a section start: the next chunk begins with its heading.
        hard_cut = score(int(spans.starts[last])) >= HARD_BREAK
        first = last if hard_cut else _next_start(spans, first, last, config.overlap, score)


def _best_cut(spans: TokenSpans, first: int, last: int, target: int, score: Callable[[int], float]) -> int:
    """The exclusive token index to end a window at: the strongest boundary in its last 40%."""
    lowest = first + max(1, (target * 3) // 5)
    best, best_score = last, -1.0
    for cut in range(last, lowest - 1, -1):
        # A cut before token `cut` sits at the gap between the previous token's end and this start.
        s = score(int(spans.starts[cut]))
        if s > best_score:
            best, best_score = cut, s
    return best


def _next_start(spans: TokenSpans, first: int, last: int, overlap: int, score: Callable[[int], float]) -> int:
    """Where the next window starts: the strongest boundary between half and twice ``overlap`` back.

    Ties go to the candidate nearest ``overlap`` tokens back, so the overlap stays close to a fifth.
    """
    ideal = max(first + 1, last - overlap)
    lo = max(first + 1, last - 2 * overlap)
    hi = max(lo, last - max(1, overlap // 2))
    return max(range(lo, hi + 1), key=lambda cand: (score(int(spans.starts[cand])), -abs(cand - ideal)))


def _boundary_scorer(region: str, section_starts: list[int]) -> Callable[[int], float]:
    """Score how good a place offset ``pos`` (a token start) is to begin a chunk."""
    paragraph = {m.end() for m in _PARAGRAPH.finditer(region)}
    sentence = {m.end() for m in _SENTENCE_END.finditer(region)}
    line = {m.end() for m in _LINE.finditer(region)}
    hard = set(section_starts)

    def score(pos: int) -> float:
        if pos in hard:
            return HARD_BREAK
        if pos in paragraph:
            return 4.0
        if pos in sentence:
            return 3.0
        if pos in line:
            return 2.0
        return 1.0 if pos > 0 and region[pos - 1].isspace() else 0.0

    return score


def _table_pieces(
    text: str, table: TableSpan, tokenizer: Tokenizer, config: ChunkingConfig
) -> Iterator[tuple[int, int, str, ChunkKind, tuple[int, ...]]]:
    """Groups of rows that fit the target together with one copy of caption and header."""
    prefix = "".join(f"{line}\n" for line in (table.caption, table.header) if line)
    budget = config.target - tokenizer.count_tokens(prefix)
    rows = list(table.rows)
    if not rows:
        return
    row_tokens = np.array([tokenizer.count_tokens(text[r.start : r.end]) for r in rows])
    i = 0
    while i < len(rows):
        j = i + 1
        used = int(row_tokens[i])
        while j < len(rows) and j - i < config.max_table_rows and used + int(row_tokens[j]) <= budget:
            used += int(row_tokens[j])
            j += 1
        group = rows[i:j]
        yield group[0].start, group[-1].end, prefix, "table", tuple(r.index for r in group)
        i = j
