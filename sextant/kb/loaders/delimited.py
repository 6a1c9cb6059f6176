"""Delimited text (.csv, .tsv) loader: the file is one sheet named after it (see ``sheets``).

The encoding is UTF-8 (with or without a byte-order mark), UTF-16 with a mark (Excel's "Unicode text"),
or else Windows-1252, which is what Excel on Windows writes as "CSV"; Latin-1 takes what is left, since
it can decode any byte. The delimiter is sniffed among ``, ; TAB |`` (a ``.tsv`` is tab-separated), or
named by Excel's ``sep=`` first line. Cells are kept as written: a CSV has no types, so ``88.0`` stays
``88.0``.

A CSV is often a program's dump with no header line; ``sheets.first_row_is_header`` decides, and a file
without one is a table with no header rather than one whose first record is repeated above every chunk
as if it named the columns.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator
from pathlib import PurePath

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders.builder import stem
from sextant.kb.loaders.sheets import MAX_CELLS, MAX_COLUMNS, MAX_ROWS, Bounds, Row, WorkbookBuilder

TAB_SUFFIXES = (".tsv", ".tab")
_SNIFF_CHARS = 64 * 1024
_DELIMITERS = ",;\t|"
_SEP_LINE_RE = re.compile(r"^sep=(.)\r?\n")
# Beyond this share of control characters the bytes are not text in any encoding tried here.
_MAX_CONTROL_SHARE = 0.01
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def load(
    data: bytes, name: str, *, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS
) -> LoadedDocument:
    """Load a .csv or .tsv file: no pages, one section holding one table.

    Raises:
        LoadError: the file is not text, a record cannot be parsed, or no cell holds a value.
    """
    text = decode(data, name)
    sep = _SEP_LINE_RE.match(text)
    if sep:
        text = text[sep.end() :]
        dialect: type[csv.Dialect] | csv.Dialect = _with_delimiter(sep.group(1))
    elif PurePath(name).suffix.lower() in TAB_SUFFIXES:
        dialect = csv.excel_tab
    else:
        dialect = sniff(text)
    title = stem(name)
    builder = WorkbookBuilder(name, Bounds(max_rows, max_columns, max_cells))
    builder.add_sheet(title, _rows(csv.reader(io.StringIO(text, newline=""), dialect), name))
    return builder.build(title)


def decode(data: bytes, name: str) -> str:
    """The file's text in the first encoding that reads it (see the module docstring).

    Raises:
        LoadError: the bytes are binary, not text.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        text = ""
        for encoding in ("utf-8-sig", "cp1252", "latin-1"):
            try:
                text = data.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
    if len(_CONTROL_RE.findall(text[:_SNIFF_CHARS])) > _MAX_CONTROL_SHARE * min(len(text), _SNIFF_CHARS):
        raise LoadError(name, "not a text file (it holds binary data); export the table as CSV and add that")
    return text


def sniff(text: str) -> type[csv.Dialect]:
    """The dialect of the first 64 KiB, cut at a line end; plain comma-separated when nothing is found."""
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    # One column, or one line: no delimiter is consistent, and a comma-separated reading is the same text.
    except csv.Error:
        return csv.excel


def _with_delimiter(delimiter: str) -> type[csv.Dialect]:
    class Named(csv.excel):
        pass

    Named.delimiter = delimiter
    return Named


def _rows(reader: Iterator[list[str]], name: str) -> Iterator[Row]:
    number = 0
    try:
        for number, record in enumerate(reader, start=1):
            yield number, record
    except csv.Error as exc:
        raise LoadError(name, f"record {number + 1} cannot be read as CSV ({exc}); fix it or re-export") from exc
