"""The logic every spreadsheet loader shares: cell text, header detection, trimming, bounds, sections."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from decimal import Decimal

import numpy as np
import pytest

from sextant.kb.chunking import ChunkingConfig, chunk_document
from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.embeddings import TokenSpans
from sextant.kb.loaders.sheets import Bounds, WorkbookBuilder, first_row_is_header, format_cell, format_percent
from tests.kb.loaders.pdf_factory import assert_well_formed


class WordTokenizer:
    """One token per run of non-space characters: enough to drive the chunker without a model."""

    def token_spans(self, text: str) -> TokenSpans:
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        array = np.array(spans, dtype=np.int64).reshape(-1, 2)
        return TokenSpans(starts=array[:, 0].copy(), ends=array[:, 1].copy())

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _rows(*rows: Sequence[object]) -> list[tuple[int, list[object]]]:
    return [(number, list(row)) for number, row in enumerate(rows, start=1)]


def _book(sheets: dict[str, list[tuple[int, list[object]]]], bounds: Bounds | None = None) -> LoadedDocument:
    builder = WorkbookBuilder("book.xlsx", bounds or Bounds())
    for title, rows in sheets.items():
        builder.add_sheet(title, rows)
    return builder.build("book")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (88, "88"),
        (88.0, "88"),
        (0.1 + 0.2, "0.3"),
        (-1.5, "-1.5"),
        (1e20, "1e+20"),
        (Decimal("12.50"), "12.5"),
        (True, "TRUE"),
        (dt.datetime(2024, 3, 15), "2024-03-15"),
        (dt.datetime(2024, 3, 15, 14, 30), "2024-03-15 14:30"),
        (dt.datetime(2024, 3, 15, 14, 30, 5), "2024-03-15 14:30:05"),
        (dt.date(2024, 3, 15), "2024-03-15"),
        (dt.time(9, 5), "09:05"),
        (dt.timedelta(days=12), "288:00:00"),
        ("  two\n lines\tand  tabs ", "two lines and tabs"),
        (None, ""),
    ],
)
def test_cells_read_as_a_person_reads_them(value: object, text: str) -> None:
    assert format_cell(value) == text


def test_percentages_keep_the_places_the_sheet_shows() -> None:
    assert format_percent(0.25, 0) == "25%"
    assert format_percent(0.9995, 1) == "100.0%"
    assert format_percent(0.00261493408061246, 2) == "0.26%"


@pytest.mark.parametrize(
    ("rows", "header"),
    [
        ([["service", "port"], ["kerberos", "88"]], True),
        ([["kerberos", "88", "tcp"], ["kpasswd", "464", "udp"]], False),
        ([["Region", "2023", "2024"], ["North", "5.5", "6"]], True),
        ([["name", "note"], ["Ada", "first"]], True),
        ([["only one row"]], True),
    ],
)
def test_a_first_row_is_a_header_unless_it_holds_numbers_like_the_next(rows: list[list[str]], header: bool) -> None:
    assert first_row_is_header(rows) is header


def test_a_sheet_is_a_section_and_its_rows_a_table_under_its_header() -> None:
    doc = _book(
        {
            "Ports": _rows(["service", None, "port"], [], ["kerberos", None, 88.0], ["ssh", "", 22]),
            "Empty": _rows([], [None, None]),
            "Hosts": _rows(["host", "ip"], ["db1", "10.0.0.5"]),
        }
    )
    assert_well_formed(doc)
    # The empty middle column and the empty row are gone; the empty sheet adds nothing.
    assert [s.title for s in doc.sections] == ["Ports", "Hosts"]
    ports, hosts = doc.tables
    assert (ports.caption, ports.header) == ("Ports", "service | port")
    assert [doc.text[r.start : r.end] for r in ports.rows] == ["kerberos | 88", "ssh | 22"]
    first, second = doc.sections
    assert (first.start, first.end, second.end) == (ports.start, hosts.start, len(doc.text))
    assert doc.skipped_pages == ()


def test_the_chunker_repeats_sheet_name_and_header_above_each_row() -> None:
    doc = _book({"Ports": _rows(["service", "port"], ["kerberos", 88], ["ssh", 22], ["smtp", 25])})
    chunks = chunk_document(doc, WordTokenizer(), ChunkingConfig(target=200, max_table_rows=1))
    kerberos = next(c for c in chunks if "kerberos" in c.text)
    assert kerberos.text == "Ports\nservice | port\nkerberos | 88"
    assert (kerberos.kind, kerberos.section) == ("table", "Ports")


def test_title_rows_above_a_table_become_its_caption() -> None:
    doc = _book({"Q1": _rows(["Quarterly report"], [], ["region", "sales"], ["North", 10], ["South", 12])})
    (table,) = doc.tables
    assert (table.caption, table.header) == ("Q1: Quarterly report", "region | sales")
    assert doc.text.startswith("Quarterly report\n\nregion | sales")
    assert doc.sections[0].start == 0


# readxl's deaths.xlsx (r-cran-readxl), sheet "arts", as openpyxl reads it: free-text notes over and under a table.
_N = None
DEATHS_ARTS = _rows(
    ["Lots of people", _N, _N, _N, _N, _N],
    ["simply cannot resist writing", _N, _N, _N, _N, "some notes"],
    ["at", "the", "top", _N, "of", "their spreadsheets"],
    ["or", "merging", _N, _N, _N, "cells"],
    ["Name", "Profession", "Age", "Has kids", "Date of birth", "Date of death"],
    ["David Bowie", "musician", 69, True, dt.datetime(1947, 1, 8), dt.datetime(2016, 1, 10)],
    ["Carrie Fisher", "actor", 60, True, dt.datetime(1956, 10, 21), dt.datetime(2016, 12, 27)],
    ["Chuck Berry", "musician", 90, True, dt.datetime(1926, 10, 18), dt.datetime(2017, 3, 18)],
    ["Some", _N, _N, _N, _N, _N],
    [_N, "also like to write stuff", _N, _N, _N, _N],
    [_N, _N, "at the", "bottom,", _N, _N],
    [_N, _N, _N, _N, _N, "too!"],
)


def test_notes_over_and_under_a_table_are_paragraphs_and_the_header_is_the_first_full_row() -> None:
    doc = _book({"arts": DEATHS_ARTS})
    (table,) = doc.tables
    assert table.header == "Name | Profession | Age | Has kids | Date of birth | Date of death"
    rows = [doc.text[r.start : r.end] for r in table.rows]
    assert rows[0] == "David Bowie | musician | 69 | TRUE | 1947-01-08 | 2016-01-10"
    assert len(rows) == 3
    assert doc.text.startswith(
        "Lots of people\nsimply cannot resist writing some notes\nat the top of their spreadsheets\n"
        "or merging cells\n\nName | Profession"
    )
    assert doc.text.endswith("2017-03-18\n\nSome\nalso like to write stuff\nat the bottom,\ntoo!")
    assert (doc.sections[0].start, doc.sections[0].end) == (0, len(doc.text))
    assert_well_formed(doc)


@pytest.mark.parametrize(
    "rows",
    [
        # A header with an empty corner over full rows.
        _rows(["", "Q1", "Q2", "Q3"], ["North", 1, 2, 3], ["South", 4, 5, 6], ["East", 7, 8, 9]),
        # Gaps in the data: a row with numbers is data, never a note, wherever the full rows begin.
        _rows(["id", "name", "size", "note"], [1, "a", _N, _N], [2, "b", _N, _N], [3, "c", 5, "x"], [4, "d", 6, "y"]),
        # Sparse text-only rows under a header as full as any row: the header is still the first row.
        _rows(
            ["name", "city", "country", "email"],
            ["Ann", _N, _N, _N],
            ["Bob", "Oslo", "NO", "b@x"],
            ["Cy", "Rome", "IT", "c@x"],
            ["Di", "Kyiv", "UA", "d@x"],
        ),
    ],
)
def test_a_table_with_gaps_keeps_its_first_row_as_header(rows: list[tuple[int, list[object]]]) -> None:
    doc = _book({"S": rows})
    (table,) = doc.tables
    assert doc.text.startswith(table.header)
    assert len(table.rows) == len(rows) - 1


def test_a_lone_row_is_a_paragraph_not_a_table_without_rows() -> None:
    doc = _book({"Note": _rows(["See the other sheet"])})
    assert (doc.text, doc.tables) == ("See the other sheet", ())
    assert [s.title for s in doc.sections] == ["Note"]


def test_a_table_without_a_header_starts_at_its_first_row() -> None:
    doc = _book({"Dump": _rows(["kerberos", 88], ["kpasswd", 464])})
    (table,) = doc.tables
    assert table.header == ""
    assert [doc.text[r.start : r.end] for r in table.rows] == ["kerberos | 88", "kpasswd | 464"]
    assert table.start == 0
    assert_well_formed(doc)


def test_rows_past_the_workbooks_bound_are_left_out_and_named() -> None:
    rows = _rows(["n", "square"], *([i, i * i] for i in range(1, 11)))
    doc = _book({"Squares": rows, "Later": _rows(["a", "b"], [1, 2])}, Bounds(max_rows=4))
    (squares,) = doc.tables
    assert [doc.text[r.start : r.end] for r in squares.rows] == ["1 | 1", "2 | 4", "3 | 9"]
    cut, later = doc.skipped_pages
    assert (cut.number, cut.label) == (1, "Squares")
    assert cut.reason == "rows from row 5 on left out: the workbook reached its bound of 4 rows"
    assert (later.label, later.reason) == ("Later", "not read: the workbook reached its bound of 4 rows")


def test_columns_past_the_bound_are_left_out_and_named() -> None:
    doc = _book({"Wide": _rows(["a", "b", "c", "d"], [1, 2, 3, 4])}, Bounds(max_columns=2))
    assert doc.tables[0].header == "a | b"
    assert doc.skipped_pages[0].reason == "columns from column 3 on left out (the bound is 2)"


def test_the_cell_bound_spans_the_workbook_and_names_each_sheet_it_cuts() -> None:
    sheets = {"One": _rows(["a", "b"], [1, 2], [3, 4]), "Two": _rows(["c", "d"], [5, 6]), "Three": _rows(["e"])}
    doc = _book(sheets, Bounds(max_cells=8))
    assert [s.title for s in doc.sections] == ["One", "Two"]
    assert doc.text.endswith("\n\nc | d")
    assert [(s.number, s.label) for s in doc.skipped_pages] == [(2, "Two"), (3, "Three")]
    assert doc.skipped_pages[0].reason == "rows from row 2 on left out: the workbook reached its bound of 8 cells"
    assert doc.skipped_pages[1].reason == "not read: the workbook reached its bound of 8 cells"


def test_a_sheet_that_fails_to_read_is_named_and_the_rest_kept() -> None:
    builder = WorkbookBuilder("book.xlsx", Bounds())
    builder.add_sheet("Good", _rows(["a", "b"], [1, 2]))
    builder.add_sheet("Bad", _Raising())
    doc = builder.build("book")
    assert doc.skipped_pages[0].label == "Bad"
    assert doc.skipped_pages[0].reason == "could not be read (ValueError: bad XML in sheet2.xml)"
    assert doc.tables[0].header == "a | b"


class _Raising:
    def __iter__(self) -> _Raising:
        return self

    def __next__(self) -> tuple[int, list[object]]:
        raise ValueError("bad XML in sheet2.xml")


def test_a_workbook_without_values_is_refused_naming_what_was_left_out() -> None:
    builder = WorkbookBuilder("book.xlsx", Bounds())
    builder.add_sheet("Blank", _rows([None, ""]))
    builder.skip_sheet("Secret", "hidden in the workbook")
    with pytest.raises(LoadError, match=r"empty: no cell holds a value \(sheet 'Secret': hidden in the workbook\)"):
        builder.build("book")


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Bounds(max_rows=0)
