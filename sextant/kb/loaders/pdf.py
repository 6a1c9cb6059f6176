"""PDF loader: text in reading order with page, section and table spans.

PyMuPDF reads the file; pypdf takes over when PyMuPDF cannot open or parse it (plain text per
page, labels and outline, no columns or tables). Text is NFKC-normalised as it is read, so
offsets count the characters people type. Running heads, feet and page numbers are dropped (see
``pdf_furniture``); each page's blocks are put in reading order (see ``pdf_layout``), with words
hyphenated across a line break mended as the document's own words decide (see ``pdf_hyphens``);
tables are written as one line per row (see ``pdf_tables``) in place of the words they cover, and
pages are separated by a blank line.

A scanned page is read by OCR (``ocr.py``, Tesseract) and goes through the same steps, its words' boxes
standing in for the text layer's: a page with no text layer and an image on it, or one whose text layer is
under 200 characters while images cover at least half of it (a scanner's stamp over a scan; ``ocr.is_scan``).
Every page of the four real PDFs in learning/ocr.md has at least 72 characters and images over at most 13 %
of it, so none of their 134 born-digital pages is OCR'd. When OCR is off or Tesseract is missing, such a
page is skipped and named (a page with a little text keeps it); a PDF with nothing else is refused with the
package to install.

A page is unreadable when its reader reports a problem with it (a damaged content stream, a missing
object) and gets no text from it. Such a page is left out and named in ``skipped_pages`` with the
reader's words; the rest of the document is stored. A page the reader recovers text from despite a
problem is kept. Only a PDF with no readable page is refused.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pymupdf

from sextant.kb.documents import LoadedDocument, LoadError, OcrPage, PageSpan, SkippedPage, TableSpan
from sextant.kb.loaders import ocr
from sextant.kb.loaders.builder import Heading, TextBuilder, clean_title, close_sections, stem
from sextant.kb.loaders.pdf_furniture import PageBlocks, without_furniture
from sextant.kb.loaders.pdf_hyphens import Vocabulary
from sextant.kb.loaders.pdf_layout import Block, normalise, page_height, page_width, read_blocks, reading_order
from sextant.kb.loaders.pdf_sections import PlacedBlock, font_headings, largest_line, outline_headings
from sextant.kb.loaders.pdf_tables import FoundTable, Word, find_tables

# Without its optional layout package, PyMuPDF's table finder prints an advertisement for it to
# stdout, which in a stdio MCP server would corrupt the protocol stream. Read at call time.
os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")

# MuPDF expands ligatures ("ﬁ" -> "fi") unless asked to preserve them; ``normalise`` (NFKC) then
# catches what it leaves, so that words match what people type.
_TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
_NO_TEXT = (
    "no text: its pages have no text layer and no scanned image to read; they may be blank, or their "
    "letters drawn as shapes: export it again with its text, or print it to an image and add that"
)
_NO_OCR_TEXT = (
    "scanned, no text layer, and OCR found no words on its {pages} scanned page(s): if it is a scan of text, "
    "scan it again at 300 dpi, or set SEXTANT_OCR_LANG to its language"
)
_NO_PAGES = "the PDF has no pages; it may be truncated or damaged, so export or download it again"
_ENCRYPTED = "encrypted: it needs a password to open; save a copy without the password and add that"
_NAMED_PAGES = 5  # a refusal names the first few unreadable pages, not hundreds
# Metadata titles that converters write when the author set none.
_PLACEHOLDER_TITLES = frozenset({"untitled", "title", "document", "slide 1"})
_CONVERTER_PREFIXES = ("microsoft word - ", "microsoft powerpoint - ")
_FILE_SUFFIXES = (".doc", ".docx", ".dvi", ".tex", ".pdf", ".ps", ".indd", ".rtf", ".odt")


def load(data: bytes, name: str, *, max_pages: int | None = None) -> LoadedDocument:
    """Load a PDF; with ``max_pages``, one with more pages is refused before any page is read.

    Raises:
        LoadError: the PDF is encrypted, has no text (a scan OCR cannot read, or OCR is off or not
            installed), has no pages or too many, or neither PyMuPDF nor pypdf can read it.
    """
    try:
        document = pymupdf.open(stream=data, filetype="pdf")
    # MuPDF reports a damaged file through several unrelated exception types.
    except Exception as exc:
        return _load_with_pypdf(data, name, f"PyMuPDF: {exc}", max_pages)
    with document:
        try:
            # Even the page count can fail on a damaged page tree (fuzz corpus: "Invalid number of pages").
            if document.needs_pass:
                raise LoadError(name, _ENCRYPTED)
            if document.page_count == 0:
                raise LoadError(name, _NO_PAGES)
            _check_pages(document.page_count, max_pages, name)
            return _load_with_pymupdf(document, name)
        except LoadError:
            raise
        except MemoryError:
            raise
        except Exception as exc:
            return _load_with_pypdf(data, name, f"PyMuPDF: {exc}", max_pages)


def _check_pages(count: int, max_pages: int | None, name: str) -> None:
    if max_pages is not None and count > max_pages:
        limit = f"SEXTANT_MAX_PDF_PAGES={max_pages}"
        raise LoadError(name, f"the PDF has {count} pages, more than {limit}; split it, or raise the limit")


def _load_with_pymupdf(document: pymupdf.Document, name: str) -> LoadedDocument:
    # Two passes: running heads and hyphenated words are judged against the whole document.
    read: list[PageBlocks] = []
    words_of: list[list[Word]] = []
    skipped: list[SkippedPage] = []
    ocr_pages: list[OcrPage] = []
    no_ocr: list[str] = []  # why scanned pages were not read, when they were not
    for page in document.pages():
        label = page.get_label()
        number = page.number + 1
        page_dict, words, problem = _read_page(page)
        blocks = read_blocks(page_dict)
        if problem and not blocks:
            skipped.append(SkippedPage(number, label or str(number), _damaged("MuPDF", problem)))
        elif ocr.is_scan(page, _chars(blocks)):
            try:
                result = ocr.ocr_page(page, ocr.options())
            except (ocr.OcrUnavailable, ocr.OcrFailed) as exc:
                if not blocks:
                    skipped.append(SkippedPage(number, label or str(number), f"scanned, not read: {exc.reason}"))
                    no_ocr.append(exc.reason)
            else:
                page_dict = ocr.page_dict(result)
                words = [_normalised(word) for word in ocr.page_words(result)]
                blocks = read_blocks(page_dict)
                ocr_pages.append(OcrPage(number, label or str(number), round(result.confidence, 1), len(words)))
        read.append(PageBlocks(blocks, page_height(page), label))
        words_of.append(words)
    unreadable = {page.number for page in skipped}
    kept_of = without_furniture(read)
    vocabulary = Vocabulary.of([line.text for line in block.lines] for blocks in kept_of for block in blocks)
    out = TextBuilder()
    pages: list[PageSpan] = []
    tables: list[TableSpan] = []
    placed: list[PlacedBlock] = []
    for page, blocks, words, page_read in zip(document.pages(), kept_of, words_of, read, strict=True):
        # A damaged page would only report its damage again to the table finder, which reads its drawings.
        found = [] if page.number + 1 in unreadable else find_tables(page, blocks, words)
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
                written = item.joined(vocabulary)
                at, _ = out.paragraph(written)
                placed.append(PlacedBlock(item, at, page.number, written))
            start = at if start is None else start
        number = page.number + 1
        label = page_read.label or str(number)
        pages.append(PageSpan(len(out) if start is None else start, len(out), number, label))
    text = out.text()
    if not text.strip() and no_ocr and len(no_ocr) == len(skipped):
        raise LoadError(name, f"scanned, no text layer: {no_ocr[0]}")
    if not text.strip() and ocr_pages and not skipped:
        raise LoadError(name, _NO_OCR_TEXT.format(pages=len(ocr_pages)))
    _check_text(text, skipped, name)
    toc = document.get_toc(simple=True)
    scanned = {page.number - 1 for page in ocr_pages}
    headings = outline_headings(toc, text, pages) if toc else font_headings(placed, scanned)
    title = _meta_title(document.metadata) or largest_line(placed) or _first_line(text) or stem(name)
    return replace(_document(text, title, pages, headings, tables, skipped), ocr_pages=tuple(ocr_pages))


def _chars(blocks: Sequence[Block]) -> int:
    return sum(len("".join(line.text.split())) for block in blocks for line in block.lines)


def _read_page(page: pymupdf.Page) -> tuple[dict[str, Any], list[Word], str]:
    """A page's text dict and normalised words, and the problem MuPDF reported reading them ("" when none).

    MuPDF reports most damage (a content stream that does not inflate, a missing object) as a warning
    and reads on; only the text that came out tells whether anything was recovered.
    """
    pymupdf.TOOLS.mupdf_warnings()  # reading the messages clears those of earlier pages
    try:
        textpage = page.get_textpage(flags=_TEXT_FLAGS)
        page_dict = page.get_text("dict", textpage=textpage)
        words = [_normalised(word) for word in page.get_text("words", textpage=textpage)]
    except MemoryError:
        raise  # the worker refuses the file by its memory limit
    # Like opening a damaged file, reading a damaged page raises several unrelated exception types.
    except Exception as exc:
        return {}, [], _problem(pymupdf.TOOLS.mupdf_warnings()) or f"{type(exc).__name__}: {exc}"
    return page_dict, words, _problem(pymupdf.TOOLS.mupdf_warnings())


def _problem(messages: str) -> str:
    """The first of a reader's messages, without MuPDF's ``library error:`` prefix."""
    return _first_line(messages).removeprefix("library error: ")


def _damaged(reader: str, problem: str) -> str:
    return f"damaged, {reader} got no text from it ({problem})"


def _check_text(text: str, skipped: Sequence[SkippedPage], name: str) -> None:
    """Refuse a PDF that yielded no text: its unreadable pages by name, else as scanned."""
    if text.strip():
        return
    if not skipped:
        raise LoadError(name, _NO_TEXT)
    named = "; ".join(f"page {page.label}: {page.reason}" for page in skipped[:_NAMED_PAGES])
    more = f"; and {len(skipped) - _NAMED_PAGES} more" if len(skipped) > _NAMED_PAGES else ""
    raise LoadError(name, f"no page could be read: {named}{more}; repair or re-export the PDF and add it again")


def _normalised(word: Sequence[Any]) -> Word:
    """A ``page.get_text("words")`` entry with its text normalised as block lines are."""
    x0, y0, x1, y1, text, block, line, number = word
    return (x0, y0, x1, y1, normalise(text), block, line, number)


def _weight(item: Block | FoundTable) -> int:
    if isinstance(item, FoundTable):
        return len(item.header) + sum(len(row) for row in item.rows)
    return len(item.text)


def _document(
    text: str,
    title: str,
    pages: Sequence[PageSpan],
    headings: Sequence[Heading],
    tables: Sequence[TableSpan],
    skipped: Sequence[SkippedPage],
) -> LoadedDocument:
    return LoadedDocument(
        text=text,
        title=clean_title(title),
        pages=tuple(pages),
        sections=close_sections(headings, len(text)),
        tables=tuple(tables),
        skipped_pages=tuple(skipped),
    )


def _meta_title(metadata: dict[str, Any] | None) -> str:
    """The metadata title, unless it is empty or a placeholder some tool wrote there."""
    title = clean_title(normalise(str((metadata or {}).get("title") or "")))
    lowered = title.lower()
    placeholder = lowered in _PLACEHOLDER_TITLES or lowered.startswith(_CONVERTER_PREFIXES)
    if len(title) < 3 or placeholder or lowered.endswith(_FILE_SUFFIXES):
        return ""
    return title


def _first_line(text: str) -> str:
    return next((clean_title(line) for line in text.splitlines() if line.strip()), "")


def _load_with_pypdf(data: bytes, name: str, first_error: str, max_pages: int | None = None) -> LoadedDocument:
    """Plain per-page text through pypdf, for files PyMuPDF cannot handle."""
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError(name, _ENCRYPTED)
        _check_pages(len(reader.pages), max_pages, name)
        read = [_pypdf_page(page) for page in reader.pages]
        labels = list(reader.page_labels)
        toc = _pypdf_outline(reader, reader.outline, 1)
        metadata = {"title": reader.metadata.title if reader.metadata else ""}
    except LoadError:
        raise
    # pypdf, like MuPDF, raises many exception types for a damaged file.
    except Exception as exc:
        raise LoadError(name, f"not a readable PDF ({first_error}; pypdf: {exc})") from exc
    if not read:
        raise LoadError(name, _NO_PAGES)
    out = TextBuilder()
    pages = []
    skipped = []
    for index, (page_text, problem) in enumerate(read):
        number = index + 1
        label = labels[index] if index < len(labels) and labels[index] else str(number)
        body = page_text.strip()
        if problem and not body:
            skipped.append(SkippedPage(number, label, _damaged("pypdf", problem)))
        start, end = out.paragraph(body) if body else (len(out), len(out))
        pages.append(PageSpan(start, end, number, label))
    text = out.text()
    _check_text(text, skipped, name)
    title = _meta_title(metadata) or _first_line(text) or stem(name)
    return _document(text, title, pages, outline_headings(toc, text, pages), [], skipped)


def _pypdf_page(page: Any) -> tuple[str, str]:
    """A page's text through pypdf, and the first problem pypdf logged or raised reading it ("" when none)."""
    with _pypdf_problems() as problems:
        try:
            text = normalise(page.extract_text() or "")
        except MemoryError:
            raise
        except Exception as exc:  # pypdf raises many types for a damaged page, too
            return "", f"{type(exc).__name__}: {exc}"
    return text, _problem("\n".join(problems.messages))


class _KeptMessages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _pypdf_problems() -> Iterator[_KeptMessages]:
    """The warnings pypdf logs meanwhile (it logs a damaged page's problems and reads on), kept out of the log."""
    handler = _KeptMessages()
    logger = logging.getLogger("pypdf")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


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
