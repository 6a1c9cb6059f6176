"""Tables on a PDF page, found three ways and read into rows of cells.

1. Ruled grids (horizontal and vertical lines): PyMuPDF's ``find_tables`` locates the grid.
2. Booktabs-style tables (horizontal rules of equal width, no vertical ones): the rules bound it.
3. Unruled tables under a caption ("Table 2: ..."): the blocks right below the caption whose lines
   split into several cells.

Cell text is read from the page's words, not from ``find_tables``' own extraction, which splits
a decimal point away from its number in some fonts. A grid whose body is one ruled row holding
several printed lines (a table ruled only around the outside) is split into one row per line.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pymupdf

from sextant.kb.loaders.builder import CAPTION_RE
from sextant.kb.loaders.pdf_layout import Block, Box, center_in, column_of, page_width

Word = tuple[float, float, float, float, str, int, int, int]  # ``page.get_text("words")``
Rows = list[list[str]]

CELL_SEPARATOR = " | "
_CAPTION_GAP = 36.0  # points between a caption and its table
_ROW_GAP = 24.0  # points between the blocks of one unruled table
_MIN_RULE = 10.0  # shorter strokes are glyph parts or bullets, not rules


@dataclass(frozen=True, slots=True)
class FoundTable:
    """A table on one page: where it is, its caption, header line and body row lines."""

    bbox: Box
    caption: str
    header: str
    rows: tuple[str, ...]


def find_tables(page: pymupdf.Page, blocks: Sequence[Block], words: Sequence[Word]) -> list[FoundTable]:
    """All tables on ``page`` that have a header and at least one body row."""
    horizontal, vertical = _rules(page)
    captions = [block for block in blocks if CAPTION_RE.match(block.text)]
    found: list[tuple[Box, Rows]] = []
    if len(horizontal) >= 2 and len(vertical) >= 2:
        for table in _grid_tables(page):
            rows = _grid_rows(table, words)
            if _plausible(rows):
                found.append((_box(table.bbox), rows))
    tables: list[FoundTable] = []
    used: set[int] = set()
    for box, rows in found:
        tables.append(_table(box, _caption_for(box, captions, used), rows))
    # Rules alone also frame algorithms, listings and abstracts: only a caption makes them a table.
    for box in _rule_regions(horizontal, captions):
        if any(_overlaps(box, table.bbox) for table in tables):
            continue
        rows = _text_rows(words, box)
        if _plausible(rows) and (caption := _caption_for(box, captions, used)):
            tables.append(_table(box, caption, rows))
    for index, block in enumerate(captions):
        if index in used:
            continue
        region = _region_below(block, blocks, words, page_width(page))
        if region is None or any(_overlaps(region, table.bbox) for table in tables):
            continue
        rows = _text_rows(words, region)
        if _plausible(rows):
            tables.append(_table(region, _one_line(block.text), rows))
    return tables


def _table(box: Box, caption: str, rows: Rows) -> FoundTable:
    lines = [CELL_SEPARATOR.join(cells) for cells in rows]
    return FoundTable(box, caption, lines[0], tuple(lines[1:]))


def _grid_tables(page: pymupdf.Page) -> list[Any]:
    # The ML layout analyser (pymupdf_layout, when installed) is slow and calls code listings and
    # tables of contents tables; the lines alone are what this step is for.
    try:
        return list(page.find_tables(use_layout=False).tables)
    except TypeError:  # PyMuPDF before 1.27 has no layout analyser and no such argument
        return list(page.find_tables().tables)


def _rules(page: pymupdf.Page) -> tuple[list[Box], list[Box]]:
    """Horizontal and vertical strokes (lines, thin rectangles, rectangle edges) on the page."""
    horizontal: list[Box] = []
    vertical: list[Box] = []
    for drawing in page.get_cdrawings():
        for item in drawing.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                edges = [(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))]
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                thin = x1 - x0 < 2 or y1 - y0 < 2  # a rule drawn as a filled sliver
                edges = [(x0, y0, x1, y1)]
                if not thin:
                    edges = [(x0, y0, x1, y0), (x0, y1, x1, y1), (x0, y0, x0, y1), (x1, y0, x1, y1)]
            else:
                continue
            for ex0, ey0, ex1, ey1 in edges:
                if ey1 - ey0 < 2 and ex1 - ex0 >= _MIN_RULE:
                    horizontal.append((ex0, ey0, ex1, ey1))
                elif ex1 - ex0 < 2 and ey1 - ey0 >= _MIN_RULE / 2:
                    vertical.append((ex0, ey0, ex1, ey1))
    return horizontal, vertical


def _rule_regions(horizontal: Sequence[Box], captions: Sequence[Block]) -> list[Box]:
    """Boxes bounded by two or more horizontal rules of the same extent, as booktabs draws them.

    A caption between two rules means they belong to different tables.
    """
    groups: list[list[Box]] = []
    for rule in sorted(horizontal, key=lambda r: r[1]):
        for group in groups:
            last = group[-1]
            same_extent = abs(last[0] - rule[0]) < 2 and abs(last[2] - rule[2]) < 2
            if same_extent and not any(last[1] < c.bbox[1] < rule[1] for c in captions):
                group.append(rule)
                break
        else:
            groups.append([rule])
    return [(g[0][0], g[0][1], g[0][2], g[-1][3]) for g in groups if len(g) >= 2 and g[-1][1] - g[0][1] > 4]


def _visual_lines(words: Sequence[Word]) -> list[list[Word]]:
    """Words grouped into printed lines by their vertical centre, each line left to right."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w[1] + w[3]) / 2):
        middle, height = (word[1] + word[3]) / 2, word[3] - word[1]
        if lines:
            last = lines[-1]
            last_middle = statistics.fmean((w[1] + w[3]) / 2 for w in last)
            if abs(middle - last_middle) <= 0.4 * max(height, 1.0):
                last.append(word)
                continue
        lines.append([word])
    return [sorted(line, key=lambda w: w[0]) for line in lines]


def _split_cells(line: Sequence[Word]) -> list[str]:
    """Cells of one printed line: a gap wider than half the line height starts a new cell."""
    gap = 0.5 * statistics.median(w[3] - w[1] for w in line)
    cells: list[list[str]] = [[line[0][4]]]
    for before, word in itertools.pairwise(line):
        if word[0] - before[2] > gap:
            cells.append([])
        cells[-1].append(word[4])
    return [" ".join(cell) for cell in cells]


def _text_rows(words: Sequence[Word], box: Box) -> Rows:
    inside = [w for w in words if center_in(_box(w), box)]
    return [_split_cells(line) for line in _visual_lines(inside)]


def _grid_rows(table: Any, words: Sequence[Word]) -> Rows:
    """Rows of a grid; cells that wrap onto several printed lines are joined with spaces.

    A grid with a single body row has no rules between its body rows, so there each printed
    line of that row is a row of its own.
    """
    edges = sorted({round(cell[0], 1) for cell in table.cells if cell is not None})
    unruled_body = len(table.rows) <= 2
    rows: Rows = []
    for row in table.rows:
        lines = _visual_lines([w for w in words if center_in(_box(w), _box(row.bbox), pad=0.0)])
        # columns[c] holds one entry per printed line that has words in column c
        columns: list[list[str]] = [[] for _ in edges]
        for line in lines:
            parts: dict[int, list[str]] = {}
            for word in line:
                column = max(bisect.bisect_right(edges, (word[0] + word[2]) / 2) - 1, 0)
                parts.setdefault(column, []).append(word[4])
            for column, texts in parts.items():
                columns[column].append(" ".join(texts))
        filled = [column for column in columns if column]
        if unruled_body and len(filled) > 1 and all(len(column) == len(lines) for column in filled):
            rows.extend([column[i] if column else "" for column in columns] for i in range(len(lines)))
        elif filled:
            rows.append([" ".join(column) for column in columns])
    return rows


def _plausible(rows: Rows) -> bool:
    """A header and a body row, and at least two rows with two or more filled cells."""
    return len(rows) >= 2 and sum(1 for cells in rows if sum(1 for c in cells if c) >= 2) >= 2


def _caption_for(box: Box, captions: Sequence[Block], used: set[int]) -> str:
    """The nearest unused caption just above the table, else just below it."""
    best: tuple[float, int] | None = None
    for index, block in enumerate(captions):
        x0, y0, x1, y1 = block.bbox
        if index in used or x1 < box[0] or x0 > box[2]:
            continue
        above, below = box[1] - y1, y0 - box[3]
        if -2 <= above <= _CAPTION_GAP:
            score = above
        elif -2 <= below <= _CAPTION_GAP:
            score = below + _CAPTION_GAP
        else:
            continue
        if best is None or score < best[0]:
            best = (score, index)
    if best is None:
        return ""
    used.add(best[1])
    return _one_line(captions[best[1]].text)


def _region_below(caption: Block, blocks: Sequence[Block], words: Sequence[Word], width: float) -> Box | None:
    """The blocks right under a caption, in its column, whose lines read as table rows."""
    side = column_of(caption.bbox, width)
    low, high = {"left": (0.0, width / 2), "right": (width / 2, width), "span": (0.0, width)}[side]
    below = sorted(
        (b for b in blocks if b.bbox[1] >= caption.bbox[3] - 1 and low <= (b.bbox[0] + b.bbox[2]) / 2 <= high),
        key=lambda b: b.bbox[1],
    )
    region: Box | None = None
    bottom = caption.bbox[3]
    for block in below:
        if block.bbox[1] - bottom > _ROW_GAP or not _table_like(block, words):
            break
        region = block.bbox if region is None else _grow(region, block.bbox)
        bottom = max(bottom, block.bbox[3])
    return region


def _table_like(block: Block, words: Sequence[Word]) -> bool:
    lines = _visual_lines([w for w in words if center_in(_box(w), block.bbox)])
    return bool(lines) and 2 * sum(1 for line in lines if len(_split_cells(line)) >= 2) >= len(lines)


def _grow(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _box(raw: Sequence[Any]) -> Box:
    return (float(raw[0]), float(raw[1]), float(raw[2]), float(raw[3]))
