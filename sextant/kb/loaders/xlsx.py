"""Excel (.xlsx, .xlsm) loader: each visible sheet a section holding one table (see ``sheets``).

openpyxl reads the workbook in read-only mode, which streams each sheet's XML instead of building every
cell as an object, so memory stays flat however long the sheet (learning/document-formats.md). A formula
cell gives the value Excel last calculated and saved (``data_only``), never the formula's text; a file
whose formulas were never calculated (written by a script, not saved by Excel) has empty cells there.

Hidden sheets are left out and named: they hold what the author chose not to show (lookup lists,
intermediate sums, data kept from readers), which would answer questions with numbers nobody reads.
Merged cells need nothing: the file keeps the value in the top-left cell only, the others are empty.
"""

from __future__ import annotations

import io
import re
import warnings
import zipfile
from collections.abc import Iterator

import openpyxl
from openpyxl.cell.read_only import EmptyCell, ReadOnlyCell
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet._read_only import ReadOnlyWorksheet

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders.builder import OLE_MAGIC, stem
from sextant.kb.loaders.sheets import MAX_CELLS, MAX_COLUMNS, MAX_ROWS, Bounds, Row, WorkbookBuilder, format_percent

# Excel 97-2003 workbooks and password-protected .xlsx files are both OLE compound files; an encrypted
# one names its "EncryptedPackage" stream (UTF-16 in the OLE directory).
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
# "0%", "0.00%", "#,##0.0%": the places after the point are those the sheet shows.
_PERCENT_RE = re.compile(r"0(?:\.([0#]+))?\s*%")


def load(
    data: bytes, name: str, *, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS
) -> LoadedDocument:
    """Load an .xlsx file: no pages, one section and one table per visible worksheet with values.

    Raises:
        LoadError: the file is a legacy .xls, password-protected, not a readable .xlsx, or no sheet has a value.
    """
    builder = WorkbookBuilder(name, Bounds(max_rows, max_columns, max_cells))
    # openpyxl warns about every part it does not keep (data validation, slicers, unknown extensions):
    # none of them is a value, so none concerns a reader of the text.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        workbook = _open(data, name)
        try:
            for sheet in workbook.worksheets:
                if sheet.sheet_state != "visible":
                    builder.skip_sheet(sheet.title, "hidden in the workbook; unhide it (Format > Sheet) to include it")
                elif isinstance(sheet, ReadOnlyWorksheet):
                    # The stored dimension may claim a million rows; read what the sheet holds instead.
                    sheet.reset_dimensions()
                    builder.add_sheet(sheet.title, _rows(sheet))
            title = workbook.properties.title or ""
        finally:
            workbook.close()
    return builder.build(title.strip() or stem(name))


def _open(data: bytes, name: str) -> Workbook:
    if data.startswith(OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise LoadError(name, "password-protected; save a copy without a password (File > Info) and add that")
        raise LoadError(name, "a legacy Excel 97-2003 (.xls) workbook, not .xlsx; open it and save it as .xlsx")
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise LoadError(name, "not an .xlsx file (it is not a zip package); re-save it from Excel as .xlsx")
    try:
        return openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    # openpyxl reports damage as whichever error its zip, XML or part reader hit first.
    except Exception as exc:
        raise LoadError(name, f"not a readable .xlsx ({type(exc).__name__}: {exc}); re-save it from Excel") from exc


def _rows(sheet: ReadOnlyWorksheet) -> Iterator[Row]:
    for number, row in enumerate(sheet.iter_rows(), start=1):
        yield number, [_value(cell) for cell in row]


def _value(cell: ReadOnlyCell | EmptyCell) -> object:
    value = cell.value
    if isinstance(value, int | float) and not isinstance(value, bool):
        percent = _PERCENT_RE.search(cell.number_format or "")
        if percent:
            return format_percent(value, len(percent.group(1) or ""))
    return value
