"""Tables on drawn pages: ruled grids, booktabs rules, captioned unruled tables, and non-tables."""

from __future__ import annotations

from collections.abc import Callable

import pymupdf

from sextant.kb.documents import LoadedDocument
from sextant.kb.loaders import pdf
from sextant.kb.loaders.pdf_layout import read_blocks
from sextant.kb.loaders.pdf_tables import find_tables
from tests.kb.loaders.pdf_factory import (
    FILLER,
    assert_well_formed,
    grid_table,
    new_page,
    paragraph,
    text_rows,
    to_bytes,
)

PRICES = [["Item", "Price"], ["Tea", "2.50"], ["Cake", "3.75"], ["Scone", "1.20"]]


def _rows(doc: LoadedDocument, index: int = 0) -> list[str]:
    return [doc.text[r.start : r.end] for r in doc.tables[index].rows]


def _page_with(draw: Callable[[pymupdf.Page], None]) -> bytes:
    """A page of prose with whatever ``draw`` puts between y=180 and y=590."""
    doc = pymupdf.open()
    page = new_page(doc)
    paragraph(page, (72, 60, 540, 140), "Opening prose. " + FILLER)
    draw(page)
    paragraph(page, (72, 600, 540, 700), "Closing prose. " + FILLER)
    return to_bytes(doc)


def test_a_ruled_grid_becomes_header_and_rows_in_place_of_its_words() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((100, 190), "Table 1: Prices at the cafe", fontsize=10)
        grid_table(page, 200, PRICES)

    doc = pdf.load(_page_with(draw), "grid.pdf")
    (table,) = doc.tables
    assert table.caption == "Table 1: Prices at the cafe"
    assert table.header == "Item | Price"
    assert _rows(doc) == ["Tea | 2.50", "Cake | 3.75", "Scone | 1.20"]
    assert doc.text.count("Scone") == 1  # written as a row, not again as prose
    # In reading order: after the opening prose and the caption, before the closing prose.
    assert doc.text.index("Opening prose") < doc.text.index("Table 1:") < table.start
    assert table.end < doc.text.index("Closing prose")
    assert_well_formed(doc)


def test_a_grid_ruled_only_outside_is_split_into_printed_rows() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((100, 190), "Table 7. Outer rules only", fontsize=10)
        page.draw_rect(pymupdf.Rect(96, 200, 340, 220))
        page.draw_rect(pymupdf.Rect(96, 220, 340, 280))
        page.draw_line((218, 200), (218, 280))
        text_rows(page, 214, [["Item", "Price"]], left=100)
        for i, (item, price) in enumerate(PRICES[1:]):
            page.insert_text((100, 236 + 16 * i), item, fontsize=10)
            page.insert_text((222, 236 + 16 * i), price, fontsize=10)

    doc = pdf.load(_page_with(draw), "outer.pdf")
    (table,) = doc.tables
    assert table.header == "Item | Price"
    assert _rows(doc) == ["Tea | 2.50", "Cake | 3.75", "Scone | 1.20"]


def test_wrapped_cells_in_a_fully_ruled_grid_stay_one_row() -> None:
    def draw(page: pymupdf.Page) -> None:
        for y in (200, 220, 240, 274):
            page.draw_line((96, y), (400, y))
        for x in (96, 245, 400):
            page.draw_line((x, 200), (x, 274))
        text_rows(page, 214, [["Symptom", "What to do"], ["Weak steam", "Soak the tip"]], left=100)
        text_rows(page, 253, [["Pump runs but", "Check the reservoir,"], ["no water", "then descale"]], left=100)

    doc = pdf.load(_page_with(draw), "wrapped.pdf")
    (table,) = doc.tables
    assert table.header == "Symptom | What to do"
    assert _rows(doc) == ["Weak steam | Soak the tip", "Pump runs but no water | Check the reservoir, then descale"]


def test_booktabs_rules_with_a_caption_make_a_table() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((100, 190), "TABLE 3: Rules above and below", fontsize=10)
        for y in (200, 222, 280):
            page.draw_line((96, y), (400, y), width=0.5)
        text_rows(page, 214, [PRICES[0]])
        text_rows(page, 238, PRICES[1:])

    doc = pdf.load(_page_with(draw), "booktabs.pdf")
    (table,) = doc.tables
    assert table.caption == "TABLE 3: Rules above and below"
    assert _rows(doc) == ["Tea | 2.50", "Cake | 3.75", "Scone | 1.20"]


def test_rules_without_a_caption_frame_prose_not_a_table() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.draw_line((96, 200), (400, 200))
        page.draw_line((96, 280), (400, 280))
        text_rows(page, 214, [["Algorithm 1", "Gauss-Seidel"], ["1.", "For k = 1 to n"]])

    doc = pdf.load(_page_with(draw), "algorithm.pdf")
    assert doc.tables == ()
    assert "Gauss-Seidel" in doc.text


def test_an_unruled_table_is_found_under_its_caption() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((100, 190), "Table 2. Staff on duty", fontsize=10)
        text_rows(page, 210, [["Name", "Role"], ["Ada", "Engineer"], ["Grace", "Admiral"]])

    doc = pdf.load(_page_with(draw), "unruled.pdf")
    (table,) = doc.tables
    assert (table.caption, table.header) == ("Table 2. Staff on duty", "Name | Role")
    assert _rows(doc) == ["Ada | Engineer", "Grace | Admiral"]
    # The prose below is not swallowed into the table.
    assert "Closing prose" not in doc.text[table.start : table.end]


def test_a_caption_over_prose_finds_no_table() -> None:
    def draw(page: pymupdf.Page) -> None:
        page.insert_text((100, 190), "Table 4: mentioned but set as prose", fontsize=10)
        paragraph(page, (100, 200, 500, 260), FILLER)

    assert pdf.load(_page_with(draw), "prose.pdf").tables == ()


def test_find_tables_on_a_page_directly() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    grid_table(page, 100, PRICES)
    blocks = read_blocks(page.get_text("dict"))
    (found,) = find_tables(page, blocks, page.get_text("words"))
    doc.close()
    assert found.caption == "" and found.header == "Item | Price" and len(found.rows) == 3
    assert found.bbox[0] <= 100 and found.bbox[2] >= 340
