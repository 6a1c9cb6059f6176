"""Running heads and feet: the text a PDF repeats in the top or bottom margin of its pages.

Only a block lying wholly in the top or bottom band of its page (``BAND`` of the page height) can
be furniture, and it is when

1. its text (digits read as ``#``, case and spacing ignored) in its font size recurs in the same
   band on at least half of the pages, or on half of the odd or of the even pages (books and
   journals alternate verso and recto heads), and in either case on at least ``MIN_PAGES`` pages;
2. it is a bare page number or label: ``12``, ``xiv``, ``Page 3 of 9``, ``- 4 -``, or the label
   the PDF gives the page; or
3. it is not on the first page, has at most two lines, and sits in a slot that 1 or 2 found
   furniture in on at least ``MIN_PAGES`` other pages: same band, same outer edge (top of a head,
   bottom of a foot) within ``SLOT_TOLERANCE`` points, same font size. This catches the heads that
   change with the chapter ("Chapter 5: Arrays and matrices 21") and heads on too few pages to
   count by rule 1. The first page is left to rules 1 and 2: its top is where a title or
   masthead stands, printed once.

A title printed once on the first page is kept, even when the running head repeats its words:
it is set larger, so neither its size nor its slot matches the heads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sextant.kb.loaders.pdf_layout import Block

Band = Literal["top", "bottom"]

BAND = 0.10
MIN_PAGES = 3
SLOT_TOLERANCE = 2.0  # points
_SIZE_TOLERANCE = 0.5  # points
_SLOT_MAX_LINES = 2

_DIGITS_RE = re.compile(r"\d+")
_PAGE_NUMBER_RE = re.compile(
    r"^(?:page\s+|p\.\s*)?[-–—]?\s*(?P<number>\d{1,4}|[ivxlcdm]{1,8})\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_ROMAN_RE = re.compile(r"^m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$")


@dataclass(frozen=True, slots=True)
class PageBlocks:
    """The blocks of one page with the page's height and printed label ("" when it has none)."""

    blocks: Sequence[Block]
    height: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class _Anchor:
    page: int
    band: Band
    edge: float
    size: float


def furniture(pages: Sequence[PageBlocks]) -> list[set[int]]:
    """For each page, the indices of its blocks that are running heads, feet or page numbers."""
    bands = [[band_of(block, page.height) for block in page.blocks] for page in pages]
    seen: dict[tuple[Band, str, float], set[int]] = defaultdict(set)
    for number, page in enumerate(pages):
        for block, band in zip(page.blocks, bands[number], strict=True):
            if band is not None:
                seen[(band, recurrence_key(block.text), _size_key(block))].add(number)
    found: list[set[int]] = [set() for _ in pages]
    anchors: list[_Anchor] = []
    for number, page in enumerate(pages):
        for index, (block, band) in enumerate(zip(page.blocks, bands[number], strict=True)):
            if band is None:
                continue
            recurring = _recurs(seen[(band, recurrence_key(block.text), _size_key(block))], len(pages))
            if recurring or is_page_number(block.text, page.label):
                found[number].add(index)
                anchors.append(_Anchor(number, band, _edge(block, band), block.size))
    for number, page in enumerate(pages):
        if number == 0:
            continue
        for index, (block, band) in enumerate(zip(page.blocks, bands[number], strict=True)):
            if band is None or index in found[number] or len(block.lines) > _SLOT_MAX_LINES:
                continue
            edge = _edge(block, band)
            slot_pages = {
                anchor.page
                for anchor in anchors
                if anchor.page != number
                and anchor.band == band
                and abs(anchor.edge - edge) <= SLOT_TOLERANCE
                and abs(anchor.size - block.size) <= _SIZE_TOLERANCE
            }
            if len(slot_pages) >= MIN_PAGES:
                found[number].add(index)
    return found


def without_furniture(pages: Sequence[PageBlocks]) -> list[list[Block]]:
    """Each page's blocks less its running heads, feet and page numbers."""
    dropped = furniture(pages)
    return [[b for i, b in enumerate(page.blocks) if i not in dropped[n]] for n, page in enumerate(pages)]


def band_of(block: Block, height: float) -> Band | None:
    """The margin band the block lies wholly inside, if any."""
    if block.bbox[3] <= height * BAND:
        return "top"
    if block.bbox[1] >= height * (1 - BAND):
        return "bottom"
    return None


def recurrence_key(text: str) -> str:
    """Text as compared across pages: digits as ``#``, lowercased, whitespace collapsed."""
    return " ".join(_DIGITS_RE.sub("#", text).lower().split())


def is_page_number(text: str, label: str = "") -> bool:
    """True for a bare page number or label, arabic or roman, with "Page" or "of N" around it."""
    compact = " ".join(text.split())
    if label and compact.lower() == label.lower():
        return True
    match = _PAGE_NUMBER_RE.match(compact)
    if match is None:
        return False
    number = match.group("number")
    return number.isdigit() or ((number.islower() or number.isupper()) and bool(_ROMAN_RE.match(number.lower())))


def _recurs(on: set[int], page_count: int) -> bool:
    if len(on) >= max(MIN_PAGES, page_count / 2):
        return True
    for parity in (0, 1):
        same = sum(1 for number in on if number % 2 == parity)
        of_parity = len(range(parity, page_count, 2))
        if same >= max(MIN_PAGES, of_parity / 2):
            return True
    return False


def _size_key(block: Block) -> float:
    return round(block.size * 2) / 2  # to the half point: 9.96 and 10.0 are one size


def _edge(block: Block, band: Band) -> float:
    return block.bbox[1] if band == "top" else block.bbox[3]
