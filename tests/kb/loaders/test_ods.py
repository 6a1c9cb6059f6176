"""OpenDocument spreadsheets: real files from other projects' test suites, and .ods files written here."""

from __future__ import annotations

import io
import zipfile

import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import ods
from tests.kb.loaders.pdf_factory import assert_well_formed
from tests.kb.loaders.sheets_factory import FILES, SERVICES_HEADER, ods_bytes, ods_cell, ods_row, services_rows


def _load(file: str) -> LoadedDocument:
    return ods.load((FILES / file).read_bytes(), file)


def _row_texts(doc: LoadedDocument, table: int = 0) -> list[str]:
    return [doc.text[r.start : r.end] for r in doc.tables[table].rows]


def test_the_kerberos_row_sits_under_its_header() -> None:
    rows = [ods_row(*SERVICES_HEADER), *(ods_row(*row) for row in services_rows())]
    doc = ods.load(ods_bytes({"Services": rows}), "services.ods")
    assert_well_formed(doc)
    (table,) = doc.tables
    assert (table.caption, table.header) == ("Services", "service | port | protocol | aliases | comment")
    assert "kerberos | 88 | tcp | kerberos5 krb5 kerberos-sec | Kerberos v5" in _row_texts(doc)


def test_typed_cells_of_a_real_file_read_as_the_sheet_shows_them() -> None:
    doc = _load("pyexcel-ods-formats.ods")
    assert_well_formed(doc)
    table = doc.tables[0]
    assert table.header == "Date | Time | Boolean | Float | Currency | Percentage | Int | Scientific | Fractions | Text"
    # Dates ISO, times h:mm:ss, booleans as Calc shows them, a percentage with the places shown ("200,00%"
    # in the author's locale); currencies as displayed.
    assert _row_texts(doc)[0] == "2014-11-11 | 11:12:12 | TRUE | 11.11 | £1 | 200.00% | 3 | 100000 | 1.25 | abc"
    assert _row_texts(doc)[3] == " | 27:17:54 |  |  |  |  | 11"  # a duration past a day


def test_each_sheet_is_a_section_and_an_empty_sheet_adds_nothing() -> None:
    doc = _load("pyexcel-file-with-an-empty-sheet.ods")
    assert [s.title for s in doc.sections] == ["Sheet1", "Sheet3"]
    assert doc.text == "1 | 2 | 3\n4 | 5 | 6\n\n7 | 8 | 9\n10 | 11 | 12"
    assert doc.sections[1].start == doc.tables[1].start


def test_a_million_repeated_empty_rows_and_columns_cost_nothing() -> None:
    rows = [
        ods_row("host", ods_cell(repeat=3), "ip", ods_cell(repeat=1020)),
        ods_row(ods_cell(repeat=1024), repeat=1_000_000),
        ods_row("db1", ods_cell(repeat=3), "10.0.0.5"),
        ods_row(ods_cell(repeat=1024), repeat=48_000),
    ]
    doc = ods.load(ods_bytes({"Hosts": rows}), "hosts.ods")
    assert doc.text == "host | ip\ndb1 | 10.0.0.5"


def test_repeated_values_are_expanded_up_to_the_bounds() -> None:
    rows = [ods_row("level", "score"), ods_row("base", ods_cell(7, repeat=2), repeat=30)]
    doc = ods.load(ods_bytes({"Flat": rows}), "flat.ods", max_rows=11)
    assert _row_texts(doc) == ["base | 7 | 7"] * 10
    assert doc.skipped_pages[0].reason == "rows from row 12 on left out: the workbook reached its bound of 11 rows"
    assert doc.tables[0].header == "level | score"


def test_columns_past_the_bound_are_named() -> None:
    rows = [ods_row("a", ods_cell(repeat=500), "far"), ods_row(1)]
    doc = ods.load(ods_bytes({"Wide": rows}), "wide.ods", max_columns=200)
    assert doc.text == "a\n1"
    assert doc.skipped_pages[0].reason == "columns from column 201 on left out (the bound is 200)"


def test_merged_cells_keep_their_value_in_the_top_left_only() -> None:
    merged = '<table:table-cell table:number-columns-spanned="2" office:value-type="string"><text:p>Q1</text:p>'
    rows = [
        ods_row("region", merged + "</table:table-cell>", ods_cell(covered=True)),
        ods_row("North", 10, 12),
    ]
    doc = ods.load(ods_bytes({"Sales": rows}), "sales.ods")
    assert doc.tables[0].header == "region | Q1"
    assert _row_texts(doc) == ["North | 10 | 12"]


def test_cell_text_keeps_its_spaces_and_drops_comments() -> None:
    cell = (
        '<table:table-cell office:value-type="string"><text:p>two<text:s text:c="3"/>words'
        "<office:annotation><text:p>a reviewer's note</text:p></office:annotation></text:p>"
        "<text:p>second <text:span>line</text:span></text:p></table:table-cell>"
    )
    doc = ods.load(ods_bytes({"Notes": [ods_row("note", "by"), ods_row(cell, "Ada")]}), "notes.ods")
    assert _row_texts(doc) == ["two words second line | Ada"]


def test_hidden_sheets_are_left_out_and_named() -> None:
    sheets = {"Shown": [ods_row("a", "b"), ods_row(1, "x")], "Lookup": [ods_row("k", "v"), ods_row("x", 1)]}
    doc = ods.load(ods_bytes(sheets, hidden=["Lookup"]), "book.ods")
    assert [s.title for s in doc.sections] == ["Shown"]
    (hidden,) = doc.skipped_pages
    assert (hidden.number, hidden.label) == (2, "Lookup")
    assert hidden.reason.startswith("hidden in the workbook")


def test_a_damaged_sheet_keeps_the_sheets_before_it() -> None:
    data = ods_bytes({"Good": [ods_row("a", "b"), ods_row(1, 2)], "Bad": [ods_row("c", "d")]})
    source = zipfile.ZipFile(io.BytesIO(data))
    content = source.read("content.xml").decode()
    cut = content[: content.index('table:name="Bad"') + 40]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for item in source.infolist():
            package.writestr(item, cut if item.filename == "content.xml" else source.read(item))
    doc = ods.load(out.getvalue(), "cut.ods")
    assert doc.text == "a | b\n1 | 2"
    assert doc.skipped_pages[0].label == "Bad"
    assert doc.skipped_pages[0].reason.startswith("could not be read (XMLSyntaxError")


def test_an_empty_real_file_is_refused() -> None:
    with pytest.raises(LoadError, match="empty: no cell holds a value"):
        _load("ezodf-empty.ods")


def test_a_password_protected_file_is_refused() -> None:
    with pytest.raises(LoadError, match="password-protected"):
        ods.load(ods_bytes({"S": [ods_row("a")]}, encrypted=True), "secret.ods")


def test_garbage_is_refused() -> None:
    with pytest.raises(LoadError, match="not a zip package"):
        ods.load(b"\x00\x01garbage" * 50, "garbage.ods")


def test_a_text_document_is_not_taken_for_a_spreadsheet() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", "<office:document-content/>")
    with pytest.raises(LoadError, match=r"not an OpenDocument spreadsheet \(application/vnd.oasis.opendocument.text\)"):
        ods.load(out.getvalue(), "letter.ods")
