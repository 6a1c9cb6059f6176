"""Spreadsheets for the sheet loader tests: /etc/services as rows, and workbooks written from rows.

XLSX files are written by openpyxl; ODS files are written here as the few XML parts LibreOffice itself
writes (mimetype, manifest, content), so a test can set exactly the repeats and styles it is about.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import openpyxl
import pytest

FILES = Path(__file__).parent / "files"
SERVICES_HEADER = ("service", "port", "protocol", "aliases", "comment")


def services_rows() -> list[tuple[str, int, str, str, str]]:
    """/etc/services as (service, port, protocol, aliases, comment) rows; the test is skipped without it."""
    path = Path("/etc/services")
    if not path.is_file():
        pytest.skip("/etc/services is not on this machine")
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        entry, _, comment = line.partition("#")
        fields = entry.split()
        if len(fields) < 2 or "/" not in fields[1]:
            continue
        port, protocol = fields[1].split("/", 1)
        rows.append((fields[0], int(port), protocol, " ".join(fields[2:]), comment.strip()))
    return rows


def csv_bytes(rows: Sequence[Sequence[object]], *, delimiter: str = ",", encoding: str = "utf-8") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode(encoding)


def xlsx_bytes(sheets: Mapping[str, Sequence[Sequence[object]]], *, hidden: Sequence[str] = ()) -> bytes:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(list(row))
        if title in hidden:
            sheet.sheet_state = "hidden"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
)


def ods_cell(value: object = None, *, repeat: int = 1, covered: bool = False, display: str | None = None) -> str:
    """One cell's XML: a number, a string, or empty; ``display`` is the text shown when it differs."""
    repeated = f' table:number-columns-repeated="{repeat}"' if repeat > 1 else ""
    tag = "table:covered-table-cell" if covered else "table:table-cell"
    if value is None:
        return f"<{tag}{repeated}/>"
    if isinstance(value, int | float):
        shown = escape(display if display is not None else str(value))
        return f'<{tag}{repeated} office:value-type="float" office:value="{value}"><text:p>{shown}</text:p></{tag}>'
    return f'<{tag}{repeated} office:value-type="string"><text:p>{escape(str(value))}</text:p></{tag}>'


def ods_row(*cells: object, repeat: int = 1) -> str:
    """A row of values (each made with ``ods_cell`` unless it already is cell XML)."""
    xml = "".join(c if isinstance(c, str) and c.startswith("<table:") else ods_cell(c) for c in cells)
    repeated = f' table:number-rows-repeated="{repeat}"' if repeat > 1 else ""
    return f"<table:table-row{repeated}>{xml}</table:table-row>"


def ods_bytes(sheets: Mapping[str, Sequence[str]], *, hidden: Sequence[str] = (), encrypted: bool = False) -> bytes:
    """An .ods whose sheets hold the given row XML (see ``ods_row``)."""
    tables = "".join(
        f"<table:table table:name={quoteattr(title)}"
        + (' table:style-name="ta2"' if title in hidden else ' table:style-name="ta1"')
        + ">"
        + "".join(rows)
        + "</table:table>"
        for title, rows in sheets.items()
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS} office:version="1.3">'
        "<office:automatic-styles>"
        + "".join(
            f'<style:style style:name="{name}" style:family="table">'
            f'<style:table-properties table:display="{shown}"/></style:style>'
            for name, shown in (("ta1", "true"), ("ta2", "false"))
        )
        + "</office:automatic-styles>"
        f"<office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body></office:document-content>"
    )
    encryption = "<manifest:encryption-data/>" if encrypted else ""
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        f'<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">{encryption}'
        "</manifest:file-entry></manifest:manifest>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", zipfile.ZIP_STORED)
        package.writestr("META-INF/manifest.xml", manifest, zipfile.ZIP_DEFLATED)
        package.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
    return out.getvalue()
