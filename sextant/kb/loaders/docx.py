"""Word (.docx) loader: paragraphs and tables in document order, headings as sections.

A table becomes a header line and one line per body row, cells joined with ``" | "``, so that
each row can be cited on its own. Tables whose rows do not map one-to-one onto lines (merged or
nested cells) are refused rather than flattened into rows that would cite the wrong cells.
"""

from __future__ import annotations

import io
import re

import docx
from docx.document import Document as DocxDocument
from docx.table import Table
from docx.text.paragraph import Paragraph

from sextant.kb.documents import LoadedDocument, LoadError, TableSpan
from sextant.kb.loaders.builder import (
    CAPTION_RE,
    CELL_SEPARATOR,
    Heading,
    TextBuilder,
    clean_title,
    close_sections,
    refuse_unless_office_zip,
    stem,
)

_HEADING_STYLE_RE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a .docx file: no pages, sections from Heading/Title styles, one TableSpan per table.

    Raises:
        LoadError: the file is not a readable .docx, holds no text, or has a table with merged or
            nested cells.
    """
    document = _open(data, name)
    out = TextBuilder()
    headings: list[Heading] = []
    tables: list[TableSpan] = []
    style_title = ""
    previous: Paragraph | None = None
    table_number = 0
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            table_number += 1
            header, rows = table_lines(block, table_number, name)
            if header:
                tables.append(out.table(header, rows, caption=_caption(previous)))
            previous = None
            continue
        text = block.text.strip()
        if not text:
            continue
        start, _ = out.paragraph(text)
        previous = block
        level = heading_level(block)
        if level is not None:
            headings.append(Heading(start, clean_title(text), level))
            if _style_name(block) == "title" and not style_title:
                style_title = clean_title(text)
    if not len(out):
        raise LoadError(name, "empty: the document has no text in its paragraphs or tables")
    text = out.text()
    title = clean_title(_core_title(document)) or style_title
    title = title or (headings[0].title if headings else "") or stem(name)
    return LoadedDocument(text=text, title=title, sections=close_sections(headings, len(text)), tables=tuple(tables))


def _open(data: bytes, name: str) -> DocxDocument:
    refuse_unless_office_zip(data, name, suffix=".docx", app="Word", legacy="Word 97-2003", kind="document")
    try:
        return docx.Document(io.BytesIO(data))
    # python-docx reports damage as whichever error its zip, XML or package layer hit first.
    except Exception as exc:
        raise LoadError(name, f"not a readable .docx ({type(exc).__name__}: {exc}); re-save it from Word") from exc


def _core_title(document: DocxDocument) -> str:
    try:
        return document.core_properties.title or ""
    # A damaged docProps/core.xml (fuzz corpus) is only metadata lost; python-docx raises what its XML layer hit.
    except Exception:
        return ""


def _style_name(paragraph: Paragraph) -> str:
    style = paragraph.style
    return (style.name or "").strip().lower() if style is not None else ""


def heading_level(paragraph: Paragraph) -> int | None:
    """1-9 for a "Heading N" paragraph, 1 for "Title", None for any other style."""
    style = _style_name(paragraph)
    if style == "title":
        return 1
    match = _HEADING_STYLE_RE.match(style)
    return int(match.group(1)) if match else None


def _caption(previous: Paragraph | None) -> str:
    if previous is None:
        return ""
    text = " ".join(previous.text.split())
    return text if _style_name(previous) == "caption" or CAPTION_RE.match(text) else ""


def table_lines(table: Table, number: int, name: str) -> tuple[str, list[str]]:
    """The header line (the first row) and body row lines of a table; empty rows are dropped.

    Raises:
        LoadError: the table (``number``, 1-based in document order) has merged or nested cells.
    """
    _refuse_irregular(table, number, name)
    lines = []
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells]
        if any(cells):
            lines.append(CELL_SEPARATOR.join(cells))
    return (lines[0], lines[1:]) if lines else ("", [])


def _refuse_irregular(table: Table, number: int, name: str) -> None:
    tbl = table._tbl
    if tbl.xpath("./w:tr/w:tc//w:tbl"):
        raise LoadError(name, f"table {number} has a table nested inside a cell; move the inner table out of the cell")
    merged = tbl.xpath(
        "./w:tr/w:tc/w:tcPr/w:gridSpan[number(@w:val) > 1] | ./w:tr/w:tc/w:tcPr/w:vMerge | ./w:tr/w:tc/w:tcPr/w:hMerge"
    )
    if merged:
        raise LoadError(name, f"table {number} has merged cells; split them or save the table as separate rows")
