"""OpenDocument text (.odt) loader: paragraphs and tables in document order, headings as sections.

Like .docx: no pages (a flowing document's page breaks depend on the printer), ``text:h`` headings become
sections at their outline level, a paragraph in the "Title" style a level-1 section, and each table a
header line and one line per row (see ``opendocument`` for what is read and what is left out).
"""

from __future__ import annotations

from sextant.kb.documents import LoadedDocument, LoadError, TableSpan
from sextant.kb.loaders.builder import CAPTION_RE, Heading, TextBuilder, clean_title, close_sections, stem
from sextant.kb.loaders.opendocument import Paragraph, Table, blocks, open_package

MIMETYPES = ("application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text-template")
_CAPTION_STYLES = frozenset({"caption", "table"})  # LibreOffice's Insert > Caption style for tables is "Table"


def load(data: bytes, name: str) -> LoadedDocument:
    """Load an .odt file: no pages, sections from headings, one TableSpan per table.

    Raises:
        LoadError: the file is a legacy .doc, password-protected, not a readable .odt, holds no text, or has a
            table nested in a cell.
    """
    package = open_package(data, name, MIMETYPES, ".odt")
    out = TextBuilder()
    headings: list[Heading] = []
    tables: list[TableSpan] = []
    style_title = ""
    previous: Paragraph | None = None
    for block in blocks(package.body, package, name, [0]):
        if isinstance(block, Table):
            tables.append(out.table(block.header, block.rows, caption=_caption(previous)))
            previous = None
            continue
        start, _ = out.paragraph(block.text)
        previous = block
        level = 1 if block.style == "title" else block.level
        if level is not None:
            headings.append(Heading(start, clean_title(block.text), level))
            if block.style == "title" and not style_title:
                style_title = clean_title(block.text)
    if not len(out):
        raise LoadError(name, "empty: the document has no text in its paragraphs or tables")
    text = out.text()
    title = package.title or style_title or (headings[0].title if headings else "") or stem(name)
    return LoadedDocument(text=text, title=title, sections=close_sections(headings, len(text)), tables=tuple(tables))


def _caption(previous: Paragraph | None) -> str:
    if previous is None:
        return ""
    text = " ".join(previous.text.split())
    return text if previous.style in _CAPTION_STYLES or CAPTION_RE.match(text) else ""
