"""OpenDocument spreadsheet (.ods) loader: each visible sheet a section holding one table (see ``sheets``).

``content.xml`` is streamed with lxml's ``iterparse`` and each row is freed once read, so memory stays
flat however long the sheet: odfpy builds the whole document as Python objects first (a 500,000-cell
sheet took 36 s and 1.2 GB under odfpy, learning/document-formats.md). Repeated rows and cells
(``table:number-rows-repeated``, ``number-columns-repeated``) are expanded only as far as a bound can
use them: LibreOffice writes the empty rest of a sheet as one row repeated a million times.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from collections.abc import Iterator
from typing import IO

from lxml import etree

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders.builder import ZIP_ERRORS, stem
from sextant.kb.loaders.sheets import MAX_CELLS, MAX_COLUMNS, MAX_ROWS, Bounds, Row, WorkbookBuilder, format_percent

_MIMETYPE = "application/vnd.oasis.opendocument.spreadsheet"
_TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE_NS = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_STYLE_NS = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_TABLE = f"{{{_TABLE_NS}}}table"
_ROW = f"{{{_TABLE_NS}}}table-row"
_CELL = f"{{{_TABLE_NS}}}table-cell"
_COVERED = f"{{{_TABLE_NS}}}covered-table-cell"
_STYLE = f"{{{_STYLE_NS}}}style"
_TABLE_PROPERTIES = f"{{{_STYLE_NS}}}table-properties"
_SPACE = f"{{{_TEXT_NS}}}s"
_BREAKS = {f"{{{_TEXT_NS}}}tab", f"{{{_TEXT_NS}}}line-break"}
_ANNOTATION = f"{{{_OFFICE_NS}}}annotation"
_PARAGRAPHS = {f"{{{_TEXT_NS}}}p", f"{{{_TEXT_NS}}}h"}
_DURATION_RE = re.compile(r"^(-)?P(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d*)?)S)?$")
_PERCENT_PLACES_RE = re.compile(r"[.,](\d+)\s*%")
# The most columns a sheet can have in LibreOffice and Excel; a repeat claiming more is damage.
_SHEET_COLUMNS = 16384


def _attr(ns: str, name: str) -> str:
    return f"{{{ns}}}{name}"


def load(
    data: bytes, name: str, *, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS, max_cells: int = MAX_CELLS
) -> LoadedDocument:
    """Load an .ods file: no pages, one section and one table per visible sheet with values.

    Raises:
        LoadError: the file is not a readable, unencrypted OpenDocument spreadsheet, or no sheet has a value.
    """
    package = _open(data, name)
    builder = WorkbookBuilder(name, Bounds(max_rows, max_columns, max_cells))
    try:
        content = package.open("content.xml")
    except ZIP_ERRORS as exc:
        package.close()
        raise LoadError(name, f"a damaged .ods package: content.xml cannot be unpacked ({exc}); re-save it") from exc
    with package, content:
        try:
            for title, hidden, rows in _sheets(content, max_rows, max_columns):
                if hidden:
                    builder.skip_sheet(title, "hidden in the workbook; show it (Sheet > Show Sheet) to include it")
                else:
                    builder.add_sheet(title, rows)
                for _ in rows:  # what the builder did not read, so that the stream reaches the next sheet
                    pass
        # content.xml is read as a stream: a damaged member shows only where the reading reaches it.
        except (etree.XMLSyntaxError, *ZIP_ERRORS) as exc:
            builder.skip_sheet("(the rest)", f"the file is damaged from here on ({exc}); re-save it")
        title = _meta_title(package)
    return builder.build(title or stem(name))


def _open(data: bytes, name: str) -> zipfile.ZipFile:
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise LoadError(name, "not an .ods file (it is not a zip package); re-save it as OpenDocument Spreadsheet")
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        names = set(package.namelist())
        mimetype = package.read("mimetype").decode("ascii", "replace").strip() if "mimetype" in names else _MIMETYPE
        manifest = package.read("META-INF/manifest.xml") if "META-INF/manifest.xml" in names else b""
    except ZIP_ERRORS as exc:
        raise LoadError(name, f"a damaged .ods package ({type(exc).__name__}: {exc}); re-save it") from exc
    if b"encryption-data" in manifest:
        raise LoadError(name, "password-protected; save a copy without a password (File > Properties) and add that")
    if mimetype != _MIMETYPE or "content.xml" not in names:
        raise LoadError(name, f"not an OpenDocument spreadsheet ({mimetype or 'no content'}); save it as .ods")
    return package


def _sheets(content: IO[bytes], max_rows: int, max_columns: int) -> Iterator[tuple[str, bool, Iterator[Row]]]:
    """Each sheet's name, whether it is hidden, and its rows, read from the one stream in document order."""
    hidden_styles: set[str] = set()
    # No entities are resolved and nothing is fetched: the file comes from anyone.
    events = etree.iterparse(content, events=("start", "end"), resolve_entities=False, no_network=True)
    for event, element in events:
        if event == "end" and element.tag == _STYLE:
            properties = element.find(_TABLE_PROPERTIES)
            if properties is not None and properties.get(_attr(_TABLE_NS, "display")) == "false":
                hidden_styles.add(element.get(_attr(_STYLE_NS, "name"), ""))
        elif event == "start" and element.tag == _TABLE:
            # The caller reads ``_rows`` to this sheet's end, tables nested in its cells included.
            title = element.get(_attr(_TABLE_NS, "name"), "")
            hidden = element.get(_attr(_TABLE_NS, "style-name")) in hidden_styles
            yield title, hidden, _rows(events, max_rows, max_columns)


def _rows(events: Iterator[tuple[str, etree._Element]], max_rows: int, max_columns: int) -> Iterator[Row]:
    """The rows of the sheet whose start ``events`` has just passed, up to its end."""
    number = 0
    nested = 0
    for event, element in events:
        tag = element.tag
        if tag == _TABLE:
            if event == "start":
                nested += 1
                continue
            if not nested:
                element.clear()
                return
            nested -= 1
        elif event == "end" and tag == _ROW and not nested:
            repeat = int(element.get(_attr(_TABLE_NS, "number-rows-repeated"), "1") or 1)
            cells = _cells(element, max_columns)
            _free(element)
            if not cells:
                number += repeat
                continue
            # A filled row repeated past the row bound cannot all be kept, so no more copies are made.
            for _ in range(min(repeat, max_rows + 1)):
                number += 1
                yield number, cells
            number += repeat - min(repeat, max_rows + 1)


def _free(row: etree._Element) -> None:
    row.clear()
    parent = row.getparent()
    while parent is not None and row.getprevious() is not None:
        del parent[0]


def _cells(row: etree._Element, max_columns: int) -> list[object]:
    """A row's values; empty cells repeated at its end are not expanded."""
    cells: list[object] = []
    pending = 0
    for cell in row:
        if cell.tag not in (_CELL, _COVERED):
            continue
        repeat = min(int(cell.get(_attr(_TABLE_NS, "number-columns-repeated"), "1") or 1), _SHEET_COLUMNS)
        value = _value(cell) if cell.tag == _CELL else None
        if value is None or value == "":
            pending += repeat
            continue
        if len(cells) + pending >= max_columns:
            # The builder only needs to see that something lies past the bound.
            cells.extend([None] * (max_columns - len(cells)))
            cells.append(value)
            break
        cells.extend([None] * pending)
        pending = 0
        cells.extend([value] * min(repeat, max_columns + 1))
    return cells


def _value(cell: etree._Element) -> object:
    kind = cell.get(_attr(_OFFICE_NS, "value-type"))
    value = cell.get(_attr(_OFFICE_NS, "value"))
    try:
        if kind == "float" and value is not None:
            return float(value)
        if kind == "percentage" and value is not None:
            # The places the cell shows, with a point: the display's decimal comma is the author's locale.
            places = _PERCENT_PLACES_RE.search(_display(cell))
            return format_percent(float(value), len(places.group(1)) if places else 0)
        if kind == "date":
            return _date(cell.get(_attr(_OFFICE_NS, "date-value"), ""))
        if kind == "time":
            return _time(cell.get(_attr(_OFFICE_NS, "time-value"), ""))
        if kind == "boolean":
            return cell.get(_attr(_OFFICE_NS, "boolean-value")) == "true"
    except ValueError:
        pass  # a malformed value: the text the cell displays is still right
    # Strings, and currencies, whose display ("€12.50") says more than the number.
    return _display(cell)


def _display(cell: etree._Element) -> str:
    return " ".join(_text(p) for p in cell if p.tag in _PARAGRAPHS)


def _date(value: str) -> dt.date | dt.datetime:
    return dt.datetime.fromisoformat(value) if "T" in value else dt.date.fromisoformat(value)


def _time(value: str) -> dt.time | dt.timedelta:
    match = _DURATION_RE.match(value)
    if not match:
        raise ValueError(value)
    sign, days, hours, minutes, seconds = match.groups()
    span = dt.timedelta(
        days=int(days or 0), hours=int(hours or 0), minutes=int(minutes or 0), seconds=float(seconds or 0)
    )
    if sign or span >= dt.timedelta(days=1):
        return -span if sign else span
    return (dt.datetime.min + span).time()


def _text(element: etree._Element) -> str:
    """A paragraph's text: ``text:s`` is one or more spaces, tabs and line breaks a space, comments left out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == _SPACE:
            parts.append(" " * int(child.get(_attr(_TEXT_NS, "c"), "1") or 1))
        elif child.tag in _BREAKS:
            parts.append(" ")
        elif child.tag != _ANNOTATION and isinstance(child.tag, str):
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _meta_title(package: zipfile.ZipFile) -> str:
    try:
        meta = etree.fromstring(package.read("meta.xml"), etree.XMLParser(resolve_entities=False, no_network=True))
    # meta.xml is optional and only gives the title: a missing or damaged one loses nothing else.
    except (KeyError, etree.XMLSyntaxError, *ZIP_ERRORS):
        return ""
    found = meta.find(".//{http://purl.org/dc/elements/1.1/}title")
    return (found.text or "").strip() if found is not None else ""
