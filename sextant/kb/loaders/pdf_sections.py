"""Section headings of a PDF: from its outline when it has one, else from the fonts on the page.

An outline entry names a title and a page; the heading is placed where that title is printed on
that page (matched word by word, ignoring case and line breaks), or at the top of the page when
it is not printed there. Without an outline, a block is taken as a heading when it is short and
either set larger than the body text, or bold and numbered ("2.1 Methods") or a stock heading
("Abstract", "References"). Text repeated on several pages (running heads) is never a heading.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sextant.kb.documents import PageSpan
from sextant.kb.loaders.builder import Heading, clean_title
from sextant.kb.loaders.pdf_layout import Block, normalise

# "2", "2.1", "A.1", "IV." - a bare capital letter only with a dot, so "A note" is not numbered.
_NUMBERED_RE = re.compile(r"^((?:\d+|[A-Z](?=\.)|[IVX]+(?=\.))(?:\.\d+)*)\.?\s+\S")
_STOCK_HEADINGS = frozenset(
    {
        "abstract",
        "introduction",
        "background",
        "related work",
        "method",
        "methods",
        "results",
        "discussion",
        "conclusion",
        "conclusions",
        "acknowledgments",
        "acknowledgements",
        "references",
        "bibliography",
        "appendix",
    }
)
# Signs an equation has and a heading does not.
_MATH_RE = re.compile(r"[=+<>|^_\\~∑∫√≤≥±×÷∈→]")
_MAX_OCR_HEADING_WORDS = 12
_LARGER = 1.15  # a heading set this many times the body size stands out without being bold
_MAX_HEADING_CHARS = 100
_MAX_HEADING_LINES = 3
_RUNNING_HEAD_PAGES = 3


@dataclass(frozen=True, slots=True)
class PlacedBlock:
    """A block as it was written into the text: its text, where it starts, on which page (0-based)."""

    block: Block
    start: int
    page: int
    text: str


def outline_headings(toc: Sequence[Sequence[object]], text: str, pages: Sequence[PageSpan]) -> list[Heading]:
    """Headings for outline entries ``[level, title, page_number, ...]`` (page numbers 1-based)."""
    headings: list[Heading] = []
    cursor = 0
    for entry in toc:
        level, title, number = entry[0], entry[1], entry[2]
        if not isinstance(level, int) or not isinstance(title, str) or not isinstance(number, int):
            continue
        title = clean_title(normalise(title))
        if not title or not 1 <= number <= len(pages):
            continue
        page = pages[number - 1]
        start = max(cursor, page.start) if cursor <= page.end else page.start
        found = _find_loosely(text, title, start, page.end)
        at = found if found is not None else start
        headings.append(Heading(at, title, max(level, 1)))
        cursor = at
    return headings


def _find_loosely(text: str, title: str, start: int, end: int) -> int | None:
    """Where ``title`` is printed in ``text[start:end]``, ignoring case, spacing and punctuation.

    A match that fills its line (after an optional section number, maybe on the line above) wins
    over one in running text, where the same words are more likely a mention than the heading.
    """
    words = re.findall(r"\w+", title)
    if not words:
        return None
    loose = r"\W*".join(re.escape(word) for word in words)
    whole_line = rf"(?m)^(?:[\w.]{{1,8}}(?:[ \t]+|\n))?{loose}[^\w\n]*$"
    for pattern in (whole_line, loose):
        match = re.compile(pattern, re.IGNORECASE).search(text, start, end)
        if match:
            return match.start()
    return None


def body_size(blocks: Sequence[PlacedBlock]) -> float:
    """The font size that sets the most characters."""
    sizes: Counter[float] = Counter()
    for placed in blocks:
        for line in placed.block.lines:
            sizes[round(line.size, 1)] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def font_headings(blocks: Sequence[PlacedBlock], ocr_pages: Collection[int] = ()) -> list[Heading]:
    """Headings guessed from font size and weight, for PDFs without an outline.

    On pages read by OCR (``ocr_pages``, 0-based) sizes are estimated from word boxes and bold is unknown: a
    block there is judged against the OCR'd pages' own body size, and must read as words (``_word_like``).
    """
    typeset = [p for p in blocks if p.page not in ocr_pages]
    scanned = [p for p in blocks if p.page in ocr_pages]
    bodies = {False: body_size(typeset), True: body_size(scanned)}
    pages_with: dict[str, set[int]] = {}
    for placed in blocks:
        pages_with.setdefault(_compact(placed.text), set()).add(placed.page)
    candidates: list[tuple[PlacedBlock, str, float, bool]] = []
    for placed in blocks:
        block = placed.block
        title = _compact(placed.text)
        if len(pages_with[title]) >= _RUNNING_HEAD_PAGES or not _heading_shaped(block, title):
            continue
        read_by_ocr = placed.page in ocr_pages
        if read_by_ocr and not _word_like(title):
            continue
        body = bodies[read_by_ocr]
        larger = block.size >= body * _LARGER
        marked = block.bold and (_NUMBERED_RE.match(title) is not None or title.lower() in _STOCK_HEADINGS)
        if larger or marked:
            candidates.append((placed, title, block.size, larger))
    # Unnumbered headings set larger than the body are ranked by size: the largest is level 1.
    sizes = sorted({round(size, 1) for *_, size, larger in candidates if larger}, reverse=True)
    ranks = {size: rank + 1 for rank, size in enumerate(sizes)}
    headings = []
    for placed, title, size, _ in candidates:
        numbered = _NUMBERED_RE.match(title)
        level = numbered.group(1).count(".") + 1 if numbered else ranks.get(round(size, 1), 1)
        headings.append(Heading(placed.start, clean_title(title), min(level, 6)))
    return headings


def _heading_shaped(block: Block, title: str) -> bool:
    letters = sum(ch.isalpha() for ch in title)
    return (
        len(block.lines) <= _MAX_HEADING_LINES
        and letters >= 2
        and len(title) <= _MAX_HEADING_CHARS
        and not title.endswith((",", ";", ":"))
    )


def _word_like(title: str) -> bool:
    """Text a heading could be: mostly letters, in words of more than one letter, and no equation's signs.

    OCR reads an equation as letters, digits and stray symbols ("f(@@)=a? +2 (2)"), and its line boxes are
    tall; a heading's words are words.
    """
    chars = [ch for ch in title if not ch.isspace()]
    letters = sum(ch.isalpha() for ch in chars)
    words = re.findall(r"[^\W\d_]{2,}", title)
    return (
        not title.endswith(".")  # a sentence
        and len(title.split()) <= _MAX_OCR_HEADING_WORDS
        and letters >= 0.8 * len(chars)
        and not _MATH_RE.search(title)
        and sum(len(word) for word in words) >= 0.7 * letters
        and any(len(word) >= 4 for word in words)
    )


def _compact(text: str) -> str:
    return " ".join(text.split())


def largest_line(blocks: Sequence[PlacedBlock], page: int = 0) -> str:
    """The text set in the largest font on ``page``, if it stands out from the body; else ""."""
    on_page = [p.block for p in blocks if p.page == page]
    if not on_page:
        return ""
    body = body_size(blocks)
    top = max(on_page, key=lambda block: block.size)
    if top.size < body * _LARGER:
        return ""
    lines = [line.text for line in top.lines if line.size >= top.size - 0.5]
    return clean_title(" ".join(lines))
