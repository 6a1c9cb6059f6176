"""Excel workbooks: real files from other projects' test suites, and workbooks written by openpyxl."""

from __future__ import annotations

import datetime as dt
import io
import warnings
import zipfile

import openpyxl
import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import xlsx
from tests.kb.loaders.pdf_factory import assert_well_formed
from tests.kb.loaders.sheets_factory import FILES, SERVICES_HEADER, services_rows, xlsx_bytes


def _load(file: str) -> LoadedDocument:
    return xlsx.load((FILES / file).read_bytes(), file)


def _row_texts(doc: LoadedDocument, table: int = 0) -> list[str]:
    return [doc.text[r.start : r.end] for r in doc.tables[table].rows]


def test_the_kerberos_row_sits_under_its_header() -> None:
    data = xlsx_bytes({"Services": [SERVICES_HEADER, *services_rows()]})
    doc = xlsx.load(data, "services.xlsx")
    assert_well_formed(doc)
    (table,) = doc.tables
    assert (table.caption, table.header) == ("Services", "service | port | protocol | aliases | comment")
    assert "kerberos | 88 | tcp | kerberos5 krb5 kerberos-sec | Kerberos v5" in _row_texts(doc)


def test_each_sheet_of_a_real_workbook_is_a_section() -> None:
    doc = _load("xlsx2csv-sheets.xlsx")
    assert_well_formed(doc)
    assert doc.title == "Use Case description & register"  # from the workbook's properties
    assert [s.title for s in doc.sections] == ["Реестр", "Вариант использования"]
    register, use_case = doc.tables
    assert register.header == "№ | URL | Название | Вер. | Сост. | Аналитик | Заказчик"
    # Trailing spaces in "Фамилия " collapsed; a cell holding the text "1.0" stays text.
    assert _row_texts(doc)[0] == "1 | url | <<Шаблон сценария>> | 1.0 | Подп. | Фамилия | Фамилия"
    assert doc.sections[1].start == use_case.start


def test_dates_and_times_read_in_iso_form() -> None:
    doc = _load("pyexcel-date-field.xlsx")
    assert doc.tables[0].header == "Date | Time"
    assert _row_texts(doc)[:3] == ["2014-12-25 | 11:11:11", "2014-12-26 | 12:12:12", "2015-01-01 | 13:13:13"]


def test_numbers_read_as_the_sheet_shows_them() -> None:
    doc = _load("xlsx2csv-float2.xlsx")
    line = doc.text.splitlines()[0]
    # Integers stay whole; a 0.0% cell shows one place and a 0% cell none. Other number formats are not
    # applied: the 0.00 cell shows all 15 digits, not 20.41.
    assert (
        line == "48929 | 4892900240051 | 4.89290024005183e+17 | 30-06-2023 | 0.3% | 61% | STAGE1 | 20.4100614385744 | 0"
    )


def test_merged_cells_keep_their_value_in_the_top_left_only() -> None:
    doc = _load("pyexcel-merged-cell-sheet.xlsx")
    # A1:A3 is merged and holds 1; C4 is empty. Only the first sheet has values, and numbers over
    # numbers are no header.
    assert doc.tables[0].header == ""
    assert _row_texts(doc) == ["1 | 2 | 3", " | 5 | 6", " | 8 | 9", "10 | 11"]
    assert [s.title for s in doc.sections] == ["Sheet1"]


def test_hidden_sheets_are_left_out_and_named() -> None:
    doc = _load("pyexcel-hidden-sheets.xlsx")
    assert doc.text == "A | B"
    (hidden,) = doc.skipped_pages
    assert (hidden.number, hidden.label) == (2, "hidden")
    assert hidden.reason.startswith("hidden in the workbook")


def test_a_formula_gives_its_calculated_value_not_its_text() -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["item", "price"])
    sheet.append(["tea", 3])
    sheet.append(["total", "=SUM(B2:B2)"])
    out = io.BytesIO()
    workbook.save(out)
    # openpyxl saves no calculated value, as Excel would: put one in the cell's XML as Excel does.
    data = _with_cached_value(out.getvalue(), "<f>SUM(B2:B2)</f><v></v>", "<f>SUM(B2:B2)</f><v>3</v>")
    doc = xlsx.load(data, "prices.xlsx")
    assert _row_texts(doc) == ["tea | 3", "total | 3"]
    assert "SUM" not in doc.text


def _with_cached_value(data: bytes, old: str, new: str) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            body = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                assert old.encode() in body
                body = body.replace(old.encode(), new.encode())
            target.writestr(item, body)
    return out.getvalue()


def test_a_percent_format_shows_a_percentage() -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["metric", "share", "when"])
    sheet.append(["uptime", 0.9995, dt.datetime(2024, 3, 15, 8, 0)])
    sheet["B2"].number_format = "0.0%"
    out = io.BytesIO()
    workbook.save(out)
    assert _row_texts(xlsx.load(out.getvalue(), "uptime.xlsx")) == ["uptime | 100.0% | 2024-03-15 08:00"]


def test_the_row_bound_is_hit_and_named() -> None:
    data = xlsx_bytes({"Big": [("n", "double"), *((i, 2 * i) for i in range(50))], "Small": [("a", "b"), (1, 2)]})
    doc = xlsx.load(data, "big.xlsx", max_rows=21)
    assert len(doc.tables[0].rows) == 20
    assert doc.skipped_pages[0].label == "Big"
    assert doc.skipped_pages[0].reason == "rows from row 22 on left out: the workbook reached its bound of 21 rows"
    assert doc.skipped_pages[1].label == "Small" and len(doc.tables) == 1  # the bound is the workbook's


def test_a_stray_cell_far_away_does_not_make_a_million_rows() -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["a", "b"])
    sheet.append([1, 2])
    sheet.cell(row=50_000, column=1, value="end")
    out = io.BytesIO()
    workbook.save(out)
    assert _row_texts(xlsx.load(out.getvalue(), "sparse.xlsx")) == ["1 | 2", "end"]


def test_a_workbook_without_values_is_refused() -> None:
    with pytest.raises(LoadError, match="empty: no cell holds a value"):
        xlsx.load(xlsx_bytes({"Sheet1": []}), "empty.xlsx")


def test_a_workbook_whose_only_values_are_hidden_is_refused_saying_so() -> None:
    data = xlsx_bytes({"Shown": [], "Secret": [("a", "b")]}, hidden=["Secret"])
    with pytest.raises(LoadError, match="sheet 'Secret': hidden in the workbook"):
        xlsx.load(data, "secret.xlsx")


def test_a_legacy_xls_is_refused() -> None:
    with pytest.raises(LoadError, match=r"legacy Excel 97-2003 \(.xls\) workbook"):
        _load("msoffcrypto-plain.xls")


def test_a_password_protected_workbook_is_refused() -> None:
    with pytest.raises(LoadError, match="password-protected"):
        _load("msoffcrypto-example-password.xlsx")


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"\x00\xffgarbage" * 100, "not a zip package"), (b"PK\x03\x04broken", "not a zip package")],
)
def test_garbage_is_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason):
        xlsx.load(data, "garbage.xlsx")


def test_a_zip_that_is_not_a_workbook_is_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("hello.txt", "not a workbook")
    with pytest.raises(LoadError, match=r"not a readable \.xlsx"):
        xlsx.load(out.getvalue(), "other.xlsx")


def test_openpyxl_warnings_do_not_escape() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = _load("xlsx2csv-sheets.xlsx")
    assert doc.tables
