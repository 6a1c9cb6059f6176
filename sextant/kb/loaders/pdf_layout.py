"""PDF page layout: text blocks from PyMuPDF, column detection and reading order.

Reading order is decided per page from block geometry. A page is two-column when a fair share
of its text sits in column-wide blocks wholly left of the page's middle and some more wholly
right of it, side by side. On such a page the blocks that cross the middle (titles, wide figures and
their captions, running heads) cut the page into horizontal bands, and each band is read left
column first, then right column. Any other page is read top to bottom, left to right.

Line text is normalised as it is read (``normalise``: Unicode NFKC), before any offset is taken.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pymupdf

from sextant.kb.loaders.pdf_hyphens import SOFT_HYPHEN, Vocabulary, join_lines

Box = tuple[float, float, float, float]
Column = Literal["left", "right", "span"]

_BOLD_FLAG = 16  # pymupdf.TEXT_FONT_BOLD
_BOLD_FONT_RE = re.compile(r"bold|black|heavy|semibold|demi|-medi|\.b$", re.IGNORECASE)
# A block that reaches this far (as a share of page width) past the middle crosses the gutter.
_GUTTER_TOLERANCE = 0.03
# For a page to count as two-column, each column must hold this share of the page's text in
# blocks at least this share of the page wide.
_MIN_COLUMN_SHARE = 0.05
_MIN_COLUMN_WIDTH = 0.25


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of a block with the font facts the heading heuristics need."""

    text: str
    bbox: Box
    size: float
    bold: bool


@dataclass(frozen=True, slots=True)
class Block:
    """A block of lines as PyMuPDF groups them; usually a paragraph, heading or caption."""

    bbox: Box
    lines: tuple[TextLine, ...]

    @property
    def text(self) -> str:
        """The lines joined by newlines, with every word hyphenated across a line break rejoined."""
        return join_lines([line.text for line in self.lines])

    def joined(self, vocabulary: Vocabulary) -> str:
        """The lines joined as ``text`` does, a hyphen kept where ``vocabulary`` says it is a compound."""
        return join_lines([line.text for line in self.lines], vocabulary)

    @property
    def size(self) -> float:
        """The largest font size in the block."""
        return max(line.size for line in self.lines)

    @property
    def bold(self) -> bool:
        """True when every line is set in a bold face."""
        return all(line.bold for line in self.lines)

    def without(self, boxes: Sequence[Box]) -> Block | None:
        """This block less the lines whose centre lies in any of ``boxes``; None if nothing is left."""
        kept = tuple(line for line in self.lines if not any(center_in(line.bbox, box) for box in boxes))
        if len(kept) == len(self.lines):
            return self
        return Block(union(line.bbox for line in kept), kept) if kept else None


def page_width(page: pymupdf.Page) -> float:
    """The page's width in the unrotated space that text coordinates are given in."""
    return float(page.rect.height if page.rotation % 180 else page.rect.width)


def page_height(page: pymupdf.Page) -> float:
    """The page's height in the unrotated space that text coordinates are given in."""
    return float(page.rect.width if page.rotation % 180 else page.rect.height)


def _is_spacing_accent(char: str) -> bool:
    folded = unicodedata.normalize("NFKC", char)
    return len(folded) > 1 and folded[0] == " "


# The 50-odd characters ("´", "¸", "˜", ...) that NFKC turns into a space and a combining mark.
_SPACING_ACCENT_RE = re.compile(
    "([" + "".join(re.escape(c) for c in map(chr, range(0xA0, 0x10000)) if _is_spacing_accent(c)) + "])"
)


def normalise(text: str) -> str:
    """Unicode NFKC, so that ligatures ("ﬁ"), full-width letters and math italics read as typed.

    Spacing accents are left as printed: NFKC would make "G´erard" (as TeX sets it) "G ́erard",
    two words. Soft hyphens are dropped, except one ending the text: that marks a word broken at a
    line end.
    """
    # split() with a group puts the accents at the odd indices
    parts = _SPACING_ACCENT_RE.split(text)
    text = "".join(part if i % 2 else unicodedata.normalize("NFKC", part) for i, part in enumerate(parts))
    body = text.replace(SOFT_HYPHEN, "")
    return body + SOFT_HYPHEN if text.endswith(SOFT_HYPHEN) and body else body


def read_blocks(page_dict: dict[str, Any]) -> list[Block]:
    """Text blocks from ``page.get_text("dict")``, lines normalised, images and blank lines dropped."""
    blocks: list[Block] = []
    for raw in page_dict.get("blocks", []):
        if raw.get("type") != 0:
            continue
        lines: list[TextLine] = []
        for raw_line in raw.get("lines", []):
            spans = [span for span in raw_line.get("spans", []) if span.get("text", "").strip()]
            if not spans:
                continue
            text = normalise("".join(span["text"] for span in raw_line["spans"])).strip()
            if not text:
                continue
            size = max(float(span.get("size", 0.0)) for span in spans)
            bold = all(_is_bold(span) for span in spans)
            lines.append(TextLine(text, _box(raw_line["bbox"]), size, bold))
        if lines:
            blocks.append(Block(union(line.bbox for line in lines), tuple(lines)))
    return blocks


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(int(span.get("flags", 0)) & _BOLD_FLAG) or bool(_BOLD_FONT_RE.search(span.get("font", "")))


def _box(raw: Sequence[float]) -> Box:
    return (float(raw[0]), float(raw[1]), float(raw[2]), float(raw[3]))


def union(boxes: Iterable[Box]) -> Box:
    """The smallest box holding all of ``boxes``."""
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return (min(x0s), min(y0s), max(x1s), max(y1s))


def center_in(inner: Box, outer: Box, pad: float = 1.0) -> bool:
    """True when the centre of ``inner`` lies inside ``outer`` grown by ``pad`` points."""
    cx, cy = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return outer[0] - pad <= cx <= outer[2] + pad and outer[1] - pad <= cy <= outer[3] + pad


def column_of(box: Box, width: float) -> Column:
    """Which side of the page's middle a box sits on; "span" when it crosses the gutter."""
    middle, tolerance = width / 2, width * _GUTTER_TOLERANCE
    if box[0] < middle - tolerance and box[2] > middle + tolerance:
        return "span"
    return "left" if (box[0] + box[2]) / 2 < middle else "right"


def is_two_column(boxes: Sequence[Box], weights: Sequence[int], width: float) -> bool:
    """True when both columns hold column-wide blocks with a fair share of the text, side by side.

    Only blocks at least ``_MIN_COLUMN_WIDTH`` of the page wide count, so that page numbers,
    margin notes and the cells of an undetected table do not make a page look two-column.
    """
    total = sum(weights) or 1
    sides: dict[Column, list[Box]] = {"left": [], "right": [], "span": []}
    shares: dict[Column, int] = {"left": 0, "right": 0, "span": 0}
    for box, weight in zip(boxes, weights, strict=True):
        if box[2] - box[0] < _MIN_COLUMN_WIDTH * width:
            continue
        side = column_of(box, width)
        sides[side].append(box)
        shares[side] += weight
    if min(shares["left"], shares["right"]) < _MIN_COLUMN_SHARE * total:
        return False
    return any(a[1] < b[3] and b[1] < a[3] for a in sides["left"] for b in sides["right"])


def reading_order(boxes: Sequence[Box], weights: Sequence[int], width: float) -> list[int]:
    """The indices of ``boxes`` in reading order (``weights`` are their text lengths)."""
    by_position = sorted(range(len(boxes)), key=lambda i: (boxes[i][1], boxes[i][0]))
    if not is_two_column(boxes, weights, width):
        return by_position
    sides = [column_of(box, width) for box in boxes]
    order: list[int] = []
    pending = [i for i in by_position if sides[i] != "span"]

    def flush(before: float) -> None:
        band = [i for i in pending if (boxes[i][1] + boxes[i][3]) / 2 < before]
        order.extend(i for i in band if sides[i] == "left")
        order.extend(i for i in band if sides[i] == "right")
        pending[:] = [i for i in pending if i not in band]

    for i in by_position:
        if sides[i] == "span":
            flush((boxes[i][1] + boxes[i][3]) / 2)
            order.append(i)
    flush(float("inf"))
    return order
