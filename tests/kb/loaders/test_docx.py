"""Word documents written with python-docx: order, headings, tables as rows, and refusals."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

import docx
import pytest
from docx.document import Document

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import docx as docx_loader
from sextant.kb.loaders import load_bytes
from tests.kb.loaders.pdf_factory import assert_well_formed


def _table(document: Document, rows: Sequence[Sequence[str]]) -> None:
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for r, cells in enumerate(rows):
        for c, value in enumerate(cells):
            table.cell(r, c).text = value


def _save(document: Document) -> bytes:
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _handbook() -> bytes:
    document = docx.Document()
    document.add_paragraph("Staff Handbook", style="Title")
    document.add_heading("Arrival", level=1)
    document.add_paragraph("Collect your badge at reception.")
    document.add_paragraph("Table 1: Opening hours", style="Caption")
    _table(
        document,
        [["Day", "Opens", "Closes"], ["Monday", "08:00", "18:00"], ["", "", ""], ["Friday", "08:00", "\n16:00 "]],
    )
    document.add_heading("Parking", level=2)
    document.add_paragraph("Bays are numbered.")
    document.add_paragraph("Table 2. Bays per floor")
    _table(document, [["Floor", "Bays"], ["B1", "40"]])
    document.add_paragraph("A plain paragraph, not a caption.")
    _table(document, [["Key", "Holder"], ["K1", "Ada"]])
    document.add_heading("Leaving", level=1)
    document.add_paragraph("Return the badge.")
    return _save(document)


@pytest.fixture(scope="module")
def handbook() -> LoadedDocument:
    return docx_loader.load(_handbook(), "handbook.docx")


def test_paragraphs_and_tables_come_in_document_order(handbook: LoadedDocument) -> None:
    text = handbook.text
    order = ["Staff Handbook", "Collect your badge", "Table 1:", "Monday | 08:00", "Parking", "B1 | 40", "Leaving"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert handbook.pages == ()
    assert handbook.title == "Staff Handbook"
    assert_well_formed(handbook)


def test_heading_styles_become_nested_sections(handbook: LoadedDocument) -> None:
    found = [(s.title, s.level) for s in handbook.sections]
    assert found == [("Staff Handbook", 1), ("Arrival", 1), ("Parking", 2), ("Leaving", 1)]
    parking = handbook.sections[2]
    assert handbook.text[parking.start : parking.end].startswith("Parking")
    assert parking.end == handbook.text.index("Leaving")


def test_each_table_is_a_header_line_and_one_line_per_row(handbook: LoadedDocument) -> None:
    hours, bays, keys = handbook.tables
    assert hours.header == "Day | Opens | Closes"
    # The empty row is dropped and whitespace inside a cell is collapsed.
    assert [handbook.text[r.start : r.end] for r in hours.rows] == ["Monday | 08:00 | 18:00", "Friday | 08:00 | 16:00"]
    assert (
        handbook.text[hours.start : hours.end] == "Day | Opens | Closes\nMonday | 08:00 | 18:00\nFriday | 08:00 | 16:00"
    )
    assert (hours.caption, bays.caption, keys.caption) == ("Table 1: Opening hours", "Table 2. Bays per floor", "")


def test_leading_empty_rows_do_not_make_an_empty_header() -> None:
    document = docx.Document()
    _table(document, [["", ""], ["Name", "Role"], ["Ada", "Engineer"]])
    _table(document, [["Only", "a header"]])
    loaded = docx_loader.load(_save(document), "sparse.docx")
    first, second = loaded.tables
    assert (first.header, [loaded.text[r.start : r.end] for r in first.rows]) == ("Name | Role", ["Ada | Engineer"])
    assert (second.header, second.rows) == ("Only | a header", ())
    assert loaded.title == "sparse"
    assert_well_formed(loaded)


def test_core_properties_title_wins_and_the_dispatcher_routes_docx() -> None:
    document = docx.Document()
    document.core_properties.title = "Quarterly Review"
    document.add_heading("Summary", level=1)
    document.add_paragraph("Numbers went up.")
    assert load_bytes(_save(document), "q3.DOCX").title == "Quarterly Review"


def test_horizontally_merged_cells_are_refused_naming_the_table() -> None:
    document = docx.Document()
    document.add_paragraph("Two tables follow.")
    _table(document, [["a", "b"], ["1", "2"]])
    merged = document.add_table(rows=2, cols=3)
    merged.cell(0, 0).merge(merged.cell(0, 1))
    with pytest.raises(LoadError, match=r"table 2 has merged cells; split them"):
        docx_loader.load(_save(document), "merged.docx")


def test_vertically_merged_cells_are_refused() -> None:
    document = docx.Document()
    merged = document.add_table(rows=3, cols=2)
    merged.cell(0, 0).merge(merged.cell(1, 0))
    with pytest.raises(LoadError, match=r"table 1 has merged cells"):
        docx_loader.load(_save(document), "vmerge.docx")


def test_nested_tables_are_refused() -> None:
    document = docx.Document()
    outer = document.add_table(rows=2, cols=2)
    outer.cell(1, 1).add_table(rows=1, cols=1)
    with pytest.raises(LoadError, match=r"table 1 has a table nested inside a cell"):
        docx_loader.load(_save(document), "nested.docx")


def test_a_document_without_text_is_refused() -> None:
    document = docx.Document()
    document.add_paragraph("   ")
    with pytest.raises(LoadError, match="empty"):
        docx_loader.load(_save(document), "blank.docx")


def _zip_without_word_parts() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"plain bytes, no zip", "not a zip package"),
        (_zip_without_word_parts(), "not a readable .docx"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64, "legacy Word 97-2003"),
        (_handbook()[:2000], "not a"),
    ],
)
def test_corrupt_files_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason) as caught:
        docx_loader.load(data, "broken.docx")
    assert caught.value.name == "broken.docx"
