"""OpenDocument text: headings as sections, paragraphs and tables in order, real LibreOffice files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import odt
from tests.kb.loaders.pdf_factory import assert_well_formed
from tests.kb.loaders.slides_factory import ODT, opendocument

FILES = Path(__file__).parent / "files"

_HANDBOOK = """<office:text>
<text:p text:style-name="P1">Staff Handbook</text:p>
<text:h text:outline-level="1">Arrival</text:h>
<text:p>Collect<text:s text:c="2"/>your badge<text:note><text:note-body>
<text:p>A footnote.</text:p></text:note-body></text:note>.</text:p>
<text:p text:style-name="Table">Table 1: Opening hours</text:p>
<table:table><table:table-column table:number-columns-repeated="3"/>
<table:table-header-rows><table:table-row>
<table:table-cell><text:p>Day</text:p></table:table-cell><table:table-cell><text:p>Opens</text:p></table:table-cell>
<table:table-cell><text:p>Closes</text:p></table:table-cell></table:table-row></table:table-header-rows>
<table:table-row><table:table-cell table:number-rows-spanned="2"><text:p>Weekdays</text:p></table:table-cell>
<table:table-cell table:number-columns-spanned="2"><text:p>08:00 to 18:00</text:p></table:table-cell>
<table:covered-table-cell/></table:table-row>
<table:table-row><table:covered-table-cell/><table:table-cell><text:p>late</text:p></table:table-cell>
<table:table-cell/></table:table-row>
<table:table-row table:number-rows-repeated="500">
<table:table-cell table:number-columns-repeated="200"/></table:table-row>
</table:table>
<text:list><text:list-item><text:h text:outline-level="2">Parking</text:h></text:list-item></text:list>
<text:section><text:p>Bays are numbered.</text:p></text:section>
<text:table-of-content><text:index-body><text:p>Arrival 1</text:p></text:index-body></text:table-of-content>
<text:h text:outline-level="1">Leaving</text:h><text:p>Return the badge.</text:p>
</office:text>"""
_TITLE_STYLE = '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/>'


def test_headings_paragraphs_and_tables_in_document_order() -> None:
    loaded = odt.load(opendocument(ODT, _HANDBOOK, styles=_TITLE_STYLE), "handbook.odt")
    assert loaded.text.split("\n\n") == [
        "Staff Handbook",
        "Arrival",
        "Collect  your badge.",
        "Table 1: Opening hours",
        "Day | Opens | Closes\nWeekdays | 08:00 to 18:00 | \nWeekdays | late | ",
        "Parking",
        "Bays are numbered.",
        "Leaving",
        "Return the badge.",
    ]
    assert [(s.title, s.level) for s in loaded.sections] == [
        ("Staff Handbook", 1),
        ("Arrival", 1),
        ("Parking", 2),
        ("Leaving", 1),
    ]
    assert loaded.sections[2].end == loaded.text.index("Leaving")
    (table,) = loaded.tables
    assert (table.header, table.caption, len(table.rows)) == ("Day | Opens | Closes", "Table 1: Opening hours", 2)
    assert loaded.title == "Staff Handbook"
    assert loaded.pages == ()
    assert_well_formed(loaded)


def test_metadata_title_wins() -> None:
    body = "<office:text><text:h>Summary</text:h><text:p>Numbers went up.</text:p></office:text>"
    assert odt.load(opendocument(ODT, body, title="Quarterly Review"), "q3.odt").title == "Quarterly Review"


def test_a_nested_table_is_refused_naming_it() -> None:
    inner = "<table:table><table:table-row><table:table-cell/></table:table-row></table:table>"
    cell = f"<table:table-row><table:table-cell>{inner}</table:table-cell></table:table-row>"
    body = f"<office:text><table:table>{cell}</table:table></office:text>"
    with pytest.raises(LoadError, match="table 1 has a table nested inside a cell"):
        odt.load(opendocument(ODT, body), "nested.odt")


def test_real_libreoffice_file_headings_line_breaks_and_frames() -> None:
    loaded = odt.load((FILES / "idxexample.odt").read_bytes(), "idxexample.odt")
    assert [(s.title, s.level) for s in loaded.sections] == [("HEADING1", 1), ("HEADING11", 2), ("HEADING12", 2)]
    # Index marks and a trailing line break leave no stray whitespace; the all-empty table is no table.
    assert loaded.text.split("\n\n")[:3] == ["HEADING1", "ENTRY1", "HEADING11"]
    assert loaded.tables == ()
    assert_well_formed(loaded)


def test_real_odfpy_table() -> None:
    loaded = odt.load((FILES / "simpletable.odt").read_bytes(), "simpletable.odt")
    (table,) = loaded.tables
    assert loaded.text == "Cell 1 | Cell 2\nCell 3 (bold) | Cell 4 (italic)"
    assert table.header == "Cell 1 | Cell 2"
    assert loaded.title == "simpletable"


def test_an_external_entity_is_not_resolved() -> None:
    # odfpy's test file declares an entity pointing at a file on disk: nothing of it may come in.
    loaded = odt.load((FILES / "nasty.odt").read_bytes(), "nasty.odt")
    assert loaded.text == "Test:"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "legacy binary office file"),
        (b"garbage \x00\xff bytes", "not a zip package"),
        (opendocument("application/vnd.oasis.opendocument.spreadsheet", "<office:spreadsheet/>"), "its type is"),
        (opendocument(ODT, "<office:text/>", encrypted=True), "password-protected"),
        (opendocument(ODT, "<office:text><text:p> </text:p></office:text>"), "empty"),
    ],
)
def test_unreadable_files_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason):
        odt.load(data, "bad.odt")
