"""PDF loader: text in reading order with page, section and table spans.

PyMuPDF reads the file; pypdf takes over when PyMuPDF cannot open or parse it (plain text per
page, labels and outline, no columns or tables). Each page's blocks are put in reading order
(see ``pdf_layout``), tables are written as one line per row (see ``pdf_tables``) in place of the
words they cover, and pages are separated by a blank line. A PDF without a text layer is refused
rather than stored empty: its pages are images and need OCR first.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any

import pymupdf

from sextant.kb.documents import LoadedDocument, LoadError, PageSpan, TableSpan
from sextant.kb.loaders.builder import Heading, TextBuilder, clean_title, close_sections, stem
from sextant.kb.loaders.pdf_layout import Block, page_width, read_blocks, reading_order
from sextant.kb.loaders.pdf_sections import PlacedBlock, font_headings, largest_line, outline_headings
from sextant.kb.loaders.pdf_tables import FoundTable, find_tables

# Without its optional layout package, PyMuPDF's table finder prints an advertisement for it to
# stdout, which in a stdio MCP server would corrupt the protocol stream. Read at call time.
os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")

# Ligatures are expanded ("ﬁ" -> "fi") so that words match what people type.
_TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
_NO_TEXT = (
    "scanned, no text layer: every page is an image; run OCR on it first "
    "(e.g. `ocrmypdf in.pdf out.pdf`) and add the OCR'd file"
)
_NO_PAGES = "the PDF has no pages; it may be truncated or damaged, so export or download it again"
_ENCRYPTED = "encrypted: it needs a password to open; save a copy without the password and add that"
# Metadata titles that converters write when the author set none.
_PLACEHOLDER_TITLES = frozenset({"untitled", "title", "document", "slide 1"})
_CONVERTER_PREFIXES = ("microsoft word - ", "microsoft powerpoint - ")
_FILE_SUFFIXES = (".doc", ".docx", ".dvi", ".tex", ".pdf", ".ps", ".indd", ".rtf", ".odt")


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a PDF.

    Raises:
        LoadError: the PDF is encrypted, has no text layer (scanned), has no pages, or neither
            PyMuPDF nor pypdf can read it.
    """
    try:
        document = pymupdf.open(stream=data, filetype="pdf")
    # MuPDF reports a damaged file through several unrelated exception types.
    except Exception as exc:
        return _load_with_pypdf(data, name, f"PyMuPDF: {exc}")
    with document:
        if document.needs_pass:
            raise LoadError(name, _ENCRYPTED)
        if document.page_count == 0:
            raise LoadError(name, _NO_PAGES)
        try:
            return _load_with_pymupdf(document, name)
        except LoadError:
            raise
        except Exception as exc:
            return _load_with_pypdf(data, name, f"PyMuPDF: {exc}")


def _load_with_pymupdf(document: pymupdf.Document, name: str) -> LoadedDocument:
    out = TextBuilder()
    pages: list[PageSpan] = []
    tables: list[TableSpan] = []
    placed: list[PlacedBlock] = []
    for page in document.pages():
        textpage = page.get_textpage(flags=_TEXT_FLAGS)
        blocks = read_blocks(page.get_text("dict", textpage=textpage))
        words = page.get_text("words", textpage=textpage)
        found = find_tables(page, blocks, words)
        table_boxes = [table.bbox for table in found]
        kept = [rest for block in blocks if (rest := block.without(table_boxes)) is not None]
        items: list[Block | FoundTable] = [*kept, *found]
        order = reading_order([item.bbox for item in items], [_weight(item) for item in items], page_width(page))
        start: int | None = None
        for index in order:
            item = items[index]
            if isinstance(item, FoundTable):
                span = out.table(item.header, item.rows, caption=item.caption)
                tables.append(span)
                at = span.start
            else:
                at, _ = out.paragraph(item.text)
                placed.append(PlacedBlock(item, at, page.number))
            start = at if start is None else start
        number = page.number + 1
        label = page.get_label() or str(number)
        pages.append(PageSpan(len(out) if start is None else start, len(out), number, label))
    text = out.text()
    if not text.strip():
        raise LoadError(name, _NO_TEXT)
    toc = document.get_toc(simple=True)
    headings = outline_headings(toc, text, pages) if toc else font_headings(placed)
    title = _meta_title(document.metadata) or largest_line(placed) or _first_line(text) or stem(name)
    return _document(text, title, pages, headings, tables)


def _weight(item: Block | FoundTable) -> int:
    if isinstance(item, FoundTable):
        return len(item.header) + sum(len(row) for row in item.rows)
    return len(item.text)


def _document(
    text: str, title: str, pages: Sequence[PageSpan], headings: Sequence[Heading], tables: Sequence[TableSpan]
) -> LoadedDocument:
    return LoadedDocument(
        text=text,
        title=clean_title(title),
        pages=tuple(pages),
        sections=close_sections(headings, len(text)),
        tables=tuple(tables),
    )


def _meta_title(metadata: dict[str, Any] | None) -> str:
    """The metadata title, unless it is empty or a placeholder some tool wrote there."""
    title = clean_title(str((metadata or {}).get("title") or ""))
    lowered = title.lower()
    placeholder = lowered in _PLACEHOLDER_TITLES or lowered.startswith(_CONVERTER_PREFIXES)
    if len(title) < 3 or placeholder or lowered.endswith(_FILE_SUFFIXES):
        return ""
    return title


def _first_line(text: str) -> str:
    return next((clean_title(line) for line in text.splitlines() if line.strip()), "")


def _load_with_pypdf(data: bytes, name: str, first_error: str) -> LoadedDocument:
    """Plain per-page text through pypdf, for files PyMuPDF cannot handle."""
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError(name, _ENCRYPTED)
        texts = [page.extract_text() or "" for page in reader.pages]
        labels = list(reader.page_labels)
        toc = _pypdf_outline(reader, reader.outline, 1)
        metadata = {"title": reader.metadata.title if reader.metadata else ""}
    except LoadError:
        raise
    # pypdf, like MuPDF, raises many exception types for a damaged file.
    except Exception as exc:
        raise LoadError(name, f"not a readable PDF ({first_error}; pypdf: {exc})") from exc
    if not texts:
        raise LoadError(name, _NO_PAGES)
    out = TextBuilder()
    pages = []
    for index, page_text in enumerate(texts):
        number = index + 1
        label = labels[index] if index < len(labels) and labels[index] else str(number)
        body = page_text.strip()
        start, end = out.paragraph(body) if body else (len(out), len(out))
        pages.append(PageSpan(start, end, number, label))
    text = out.text()
    if not text.strip():
        raise LoadError(name, _NO_TEXT)
    title = _meta_title(metadata) or _first_line(text) or stem(name)
    return _document(text, title, pages, outline_headings(toc, text, pages), [])


def _pypdf_outline(reader: Any, outline: Sequence[Any], level: int) -> list[list[object]]:
    """pypdf's nested outline flattened to PyMuPDF's ``[level, title, page_number]`` entries."""
    entries: list[list[object]] = []
    for item in outline:
        if isinstance(item, list):
            entries.extend(_pypdf_outline(reader, item, level + 1))
            continue
        page = reader.get_destination_page_number(item)
        if page is not None and page >= 0:
            entries.append([level, str(item.title), page + 1])
    return entries
