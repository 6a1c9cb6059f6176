"""Small PDFs drawn with PyMuPDF for loader tests, and the span invariants every loaded document keeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pymupdf

from sextant.kb.documents import LoadedDocument, PageSpan

WIDTH, HEIGHT = 612.0, 792.0
FILLER = "the quick brown fox jumps over the lazy dog " * 6


def new_page(doc: pymupdf.Document) -> pymupdf.Page:
    return doc.new_page(width=WIDTH, height=HEIGHT)


def paragraph(
    page: pymupdf.Page,
    rect: tuple[float, float, float, float],
    text: str,
    fontsize: float = 10,
    fontname: str = "helv",
    align: int = 0,
) -> None:
    """Write ``text`` wrapped into ``rect``; fails loudly if it does not fit."""
    spare = page.insert_textbox(pymupdf.Rect(*rect), text, fontsize=fontsize, fontname=fontname, align=align)
    assert spare >= 0, f"text does not fit in {rect}"


def grid_table(page: pymupdf.Page, top: float, rows: Sequence[Sequence[str]], left: float = 100.0) -> None:
    """A table ruled on every side of every cell, 120 points per column, 20 per row."""
    width, height = 120.0, 20.0
    right = left + width * len(rows[0])
    for r in range(len(rows) + 1):
        page.draw_line((left, top + r * height), (right, top + r * height))
    for c in range(len(rows[0]) + 1):
        page.draw_line((left + c * width, top), (left + c * width, top + height * len(rows)))
    for r, cells in enumerate(rows):
        for c, cell in enumerate(cells):
            page.insert_text((left + c * width + 4, top + r * height + 14), cell, fontsize=10)


def text_rows(page: pymupdf.Page, top: float, rows: Sequence[Sequence[str]], left: float = 100.0) -> None:
    """Cells set on a grid without any lines, 150 points per column, 16 per row."""
    for r, cells in enumerate(rows):
        for c, cell in enumerate(cells):
            page.insert_text((left + c * 150, top + r * 16), cell, fontsize=10)


def damage_page(doc: pymupdf.Document, index: int, how: Literal["inflate", "missing"] = "inflate") -> None:
    """Make page ``index`` unreadable as damaged files are: its content stream claims to be deflated but is not
    (``inflate``), or its contents name an object the file does not hold (``missing``)."""
    page = doc[index]
    if how == "inflate":
        (xref,) = page.get_contents()
        doc.update_stream(xref, b"these bytes were never deflated", compress=False)
        doc.xref_set_key(xref, "Filter", "/FlateDecode")
    else:
        doc.xref_set_key(page.xref, "Contents", f"{doc.xref_length() + 100} 0 R")


def to_bytes(doc: pymupdf.Document, **save: object) -> bytes:
    try:
        return doc.tobytes(**save)
    finally:
        doc.close()


def page_of(doc: LoadedDocument, offset: int) -> PageSpan:
    page = doc.page_at(offset)
    assert page is not None, f"offset {offset} is on no page"
    return page


def assert_well_formed(doc: LoadedDocument) -> None:
    """The invariants every loader promises: sorted spans that slice meaningful text."""
    for kind in (doc.pages, doc.sections, doc.tables):
        starts = [span.start for span in kind]
        assert starts == sorted(starts)
    for before, after in zip(doc.pages, doc.pages[1:], strict=False):
        assert before.end <= after.start
        assert after.number == before.number + 1
    for table in doc.tables:
        assert doc.text[table.start : table.end].startswith(table.header)
        assert [row.index for row in table.rows] == list(range(len(table.rows)))
        for row in table.rows:
            assert doc.text[row.start : row.end].strip(), "an empty row"
            assert "\n" not in doc.text[row.start : row.end]
    for section in doc.sections:
        assert section.start < section.end
        assert section.level >= 1
    assert doc.title and "\n" not in doc.title
