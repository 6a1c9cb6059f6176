"""HTML (.html, .htm, .xhtml) loader: a page's main content, headings as sections, tables as rows.

The page is parsed with lxml (libxml2's HTML parser; XHTML with its XML parser first) and walked once.
Only the main content is kept: the deepest ``<main>`` or ``role="main"`` element, else a lone
``<article>``, else ``<body>``. Inside it, navigation (``<nav>``, ARIA navigation, search, banner and
contentinfo roles), footers, scripts, styles, form controls, hidden elements and Sphinx's "¶" permalinks
are dropped; when the whole body is kept, page-level ``<header>`` and ``<aside>`` go too. Inside the
main content ``<aside>`` stays, since docutils sets footnotes in it.

Sphinx, MkDocs and javadoc mark their main element; DocBook XSL, Publican, Texinfo's makeinfo, Doxygen and
pandoc do not. For a page with none, navigation is found by structure, in this order: the landmarks above;
then class and id words that the generators and common themes give their bars (``navheader``/``navfooter``,
``docnav``, ``nav-panel``, ``navpath``, ``navbar``, ``breadcrumb``, ``toc``, ``menu``, ``banner``, ``footer``);
then link density, as a last resort: a short block (under 600 characters, no heading inside) whose text is
three quarters link text, or half when a link is marked as sequential navigation (``rel="next"``,
``accesskey``). A page that is nothing but links (a table of contents) keeps them rather than come out empty.
"sidebar" is not such a word: a DocBook sidebar is content. Where the author marked a main element, none of
this applies inside it.

Headings ``h1``-``h6`` are sections at their level, each with the anchor a link can name: the
heading's id, an id inside it (``<a name>``), or the id of the ``<section>``/``<div>`` it opens (Sphinx's
``<section id="...">``). ``<pre>`` is kept verbatim; other text has its whitespace collapsed as a
browser would. A table is a header line (its ``<thead>``, else its first row) and one line per body
row, cells joined with ``" | "`` as the DOCX loader does. Merged cells are flattened, not refused as
in DOCX: web pages merge cells often (the Python manual does), and a grid expansion keeps each row
whole: a ``rowspan`` cell is repeated on every row it covers, so each line still cites its own cells,
and a ``colspan`` cell is written once. A table with a table inside a cell is layout, not data, and
is read as ordinary blocks.

lxml rather than a content extractor: on the 530 pages of Debian's Python manual it leaks none of the
pages' navigation text and keeps 99.8% of the main content's words at about 4 ms a page (median), and it
adds nothing to the install (python-docx already needs it). trafilatura (71 MB with its dependencies)
leaked on 29 pages and kept 91%; jusText leaked on 144 and kept 47% (learning/document-formats.md). On
samples of 14 Debian documentation packages from seven generators, no page leaks navigation.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import lxml.html
from lxml import etree

from sextant.kb.documents import LoadedDocument, LoadError, SectionSpan, TableSpan
from sextant.kb.loaders import html_nav
from sextant.kb.loaders.builder import (
    CAPTION_RE,
    CELL_SEPARATOR,
    Heading,
    TextBuilder,
    clean_title,
    close_sections,
    stem,
)

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_DROPPED_TAGS = frozenset(
    {
        "head",
        "script",
        "style",
        "noscript",
        "template",
        "nav",
        "footer",
        "button",
        "select",
        "textarea",
        "input",
        "label",
    }
    | {"iframe", "object", "embed", "svg", "canvas", "audio", "video", "img", "map", "dialog"}
)
# Kept inside the main content (an article's own header holds its h1; docutils footnotes are asides).
_PAGE_LEVEL_TAGS = frozenset({"header", "aside"})
_DROPPED_ROLES = frozenset({"navigation", "search", "banner", "contentinfo", "complementary", "menu", "menubar"})
# Sphinx's and docutils' permalink and sidebar furniture, by class.
_DROPPED_CLASSES = frozenset({"headerlink", "sphinxsidebar", "related", "skip-link", "breadcrumbs", "breadcrumb"})
_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dir", "div", "dl", "dt"}
    | {"fieldset", "figcaption", "figure", "form", "header", "hgroup", "hr", "html", "legend", "li", "main"}
    | {"menu", "ol", "p", "section", "summary", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "caption"}
)
_SECTIONING_TAGS = ("section", "article", "div")
# A permalink sign a generator appends to a heading's text.
_PERMALINK_SIGNS = "¶§🔗"
# Past this depth a subtree is read as plain text: deep enough for real pages, shallow for the stack.
_MAX_DEPTH = 200
_MAX_SPAN = 1000  # HTML caps colspan at 1000; rowspan (65534) is capped here too, to bound the grid

_COLLAPSIBLE_RE = re.compile(r"[ \t\n\r\f]+")
_BR = "\x00"  # a line break inside a paragraph; NUL cannot survive decoding into the text otherwise
_META_CHARSET_RE = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.\-]+)", re.IGNORECASE)
_XML_DECLARATION_RE = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9_.\-]+)", re.IGNORECASE)
_XML_DECLARATION_TEXT_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# Browsers read these labels as windows-1252 (WHATWG Encoding), and so do pages written for them.
_WINDOWS_1252_ALIASES = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii", "l1"})
_SNIFF_BYTES = 4096
_UNDECLARED_ENTITY = etree.ErrorTypes.ERR_UNDECLARED_ENTITY


@dataclass(frozen=True, slots=True)
class Page:
    """One page's main content: what ``load`` returns, before the empty check and the title choice."""

    text: str
    sections: tuple[SectionSpan, ...]
    tables: tuple[TableSpan, ...]
    html_title: str  # the <title>, whitespace collapsed
    first_h1: str
    targets: dict[str, int] = field(default_factory=dict)  # asked-for element id -> where its text starts
    # Why XHTML (``extract(xml=True)``) was not well-formed XML, so that the forgiving HTML parser read it: text
    # around the damage may be missing. "" when it parsed as XML, or was not asked to.
    xml_error: str = ""


def load(data: bytes, name: str) -> LoadedDocument:
    """Load an HTML or XHTML page: its main content, sections from h1-h6, one TableSpan per data table.

    Raises:
        LoadError: the file is not HTML text, or its main content holds no text.
    """
    page = extract(data, name, xml=name.lower().endswith((".xhtml", ".xht")))
    if not page.text:
        raise LoadError(name, "empty: the page's main content holds no text (it may be built by JavaScript)")
    title = choose_title(page) or stem(name)
    return LoadedDocument(text=page.text, title=title, sections=page.sections, tables=page.tables)


def choose_title(page: Page) -> str:
    """The <title>, or the first h1 when the <title> only adds the site's name to it."""
    if page.first_h1 and (not page.html_title or page.first_h1 in page.html_title):
        return clean_title(page.first_h1)
    return clean_title(page.html_title)


def extract(data: bytes, name: str, *, xml: bool = False, targets: frozenset[str] = frozenset()) -> Page:
    """The main content of one page; ``xml`` tries the XML parser first (XHTML), then the HTML one.

    ``targets``: element ids (or ``<a name>``s) whose place in the text is wanted, such as the fragments a
    book's table of contents links to; ``Page.targets`` has the offset of each one found in the text.

    Raises:
        LoadError: the bytes are not HTML text.
    """
    root, xml_error = _parse(data, name, xml=xml)
    main = _main_content(root)
    page_level = main.tag in ("body", "html")
    walker = _walk(main, targets, page_level=page_level, judge_links=page_level)
    if page_level and not walker.out:  # a page that is only links (an index) keeps them
        walker = _walk(main, targets, page_level=True, judge_links=False)
    if page_level and not walker.out:
        walker = _walk(main, targets, page_level=False, judge_links=False)
    text = walker.out.text()
    sections = close_sections(walker.headings, len(text))
    anchored = tuple(replace(s, anchor=a) for s, a in zip(sections, walker.anchors, strict=True))
    title_element = root.find(".//title")
    html_title = _collapse("".join(title_element.itertext())) if title_element is not None else ""
    first_h1 = next((h.title for h in walker.headings if h.level == 1), "")
    return Page(text, anchored, tuple(walker.tables), html_title, first_h1, walker.found, xml_error)


def _walk(main: etree._Element, targets: frozenset[str], *, page_level: bool, judge_links: bool) -> _Walker:
    walker = _Walker(targets, judge_links=judge_links)
    # With no main element marked, page-level headers, asides and navigation are the site's furniture.
    walker.block(main, depth=0, page_level=page_level)
    walker.flush()
    return walker


def decode(data: bytes, name: str) -> str:
    """The page's text: a BOM, else a declared charset (``<meta>``, XML declaration), else UTF-8 or windows-1252.

    Raises:
        LoadError: the bytes are binary or hold only whitespace.
    """
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    if encoding is None:
        if b"\x00" in data[:_SNIFF_BYTES]:
            raise LoadError(name, "binary content (NUL bytes), not an HTML page")
        encoding = _declared_encoding(data[:_SNIFF_BYTES])
    if encoding is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("windows-1252", errors="replace")
    else:
        text = data.decode(encoding, errors="replace")
    text = text.replace("\x00", "")  # NUL marks a line break while the page is walked
    if not text.strip():
        raise LoadError(name, "empty: the file holds no HTML")
    return text


def _declared_encoding(head: bytes) -> str | None:
    match = _XML_DECLARATION_RE.match(head) or _META_CHARSET_RE.search(head)
    if match is None:
        return None
    label = match.group(1).decode("ascii").lower()
    if label in _WINDOWS_1252_ALIASES:
        return "windows-1252"
    try:
        codec = codecs.lookup(label).name
    except LookupError:
        return None  # an unknown label: sniff as if none were given
    # A <meta> cannot truthfully declare UTF-16: the bytes that spell it are ASCII (WHATWG: read as UTF-8).
    return "utf-8" if codec.startswith("utf-16") else codec


def _parse(data: bytes, name: str, *, xml: bool) -> tuple[etree._Element, str]:
    """The page's root element, and why it did not parse as XML when ``xml`` asked for that ("" when it did)."""
    xml_error = ""
    if xml and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=False)
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError as exc:  # XHTML in name only (named entities, unclosed tags): the HTML parser copes
            xml_error = exc.msg if exc.code != _UNDECLARED_ENTITY else _damage_past_entities(data)
        else:
            for element in root.iter():
                if isinstance(element.tag, str) and element.tag.startswith("{"):
                    element.tag = etree.QName(element).localname
            return root, ""
    text = _XML_DECLARATION_TEXT_RE.sub("", decode(data, name), count=1)
    # huge_tree: text nodes over 10 MB and nesting past 256 levels (real pages reach both) are read, not cut.
    parser = lxml.html.HTMLParser(huge_tree=True)
    try:
        root = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise LoadError(name, f"not a readable HTML page ({exc})") from exc
    # Past libxml2's depth limit the parser stops and drops the rest of the page without raising.
    if any("Excessive depth" in error.message for error in parser.error_log):
        raise LoadError(name, "elements are nested too deeply to read (over 2048 levels); the page is damaged")
    return root, xml_error


def _damage_past_entities(data: bytes) -> str:
    """What keeps XHTML whose first fault is an HTML entity (``&nbsp;``, which the HTML parser reads) from being XML:
    its first other fault, "" when there is none."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=True)
    try:
        etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:  # past what even recovery reads
        return exc.msg
    fault = next((e for e in parser.error_log if e.type != _UNDECLARED_ENTITY), None)
    return f"{fault.message}, line {fault.line}, column {fault.column}" if fault is not None else ""


def _main_content(root: etree._Element) -> etree._Element:
    """The deepest main/role=main element, else the only <article>, else <body> (or the root)."""
    mains = [e for e in root.xpath("//main | //*[@role='main']") if not _dropped(e, page_level=False)]
    if mains:
        return max(mains, key=lambda e: sum(1 for _ in e.iterancestors()))
    articles = list(root.iter("article"))
    if len(articles) == 1:
        return articles[0]
    body = root.find(".//body")
    return body if body is not None else root


def _dropped(element: etree._Element, *, page_level: bool, judge_links: bool = False) -> bool:
    tag = element.tag
    if not isinstance(tag, str) or tag in _DROPPED_TAGS:
        return True
    if page_level and tag in _PAGE_LEVEL_TAGS and not any(True for _ in element.iterancestors("section", "article")):
        return True
    if element.get("role") in _DROPPED_ROLES or element.get("hidden") is not None:
        return True
    if element.get("aria-hidden") == "true":
        return True
    classes = element.get("class")
    if classes and not _DROPPED_CLASSES.isdisjoint(classes.split()):
        return True
    if page_level and html_nav.named_navigation(element):
        return True
    if judge_links and tag in html_nav.LINK_DENSE_TAGS and html_nav.link_dense(element):
        return True
    style = element.get("style")
    return bool(style and "none" in style and re.search(r"display\s*:\s*none", style))


def _collapse(text: str) -> str:
    return _COLLAPSIBLE_RE.sub(" ", text.replace("\xa0", " ").replace("\xad", "")).strip(" ")


def anchor_of(heading: etree._Element) -> str:
    """The fragment a link to ``heading`` would name, or "" when nothing on the page names it."""
    if own := heading.get("id"):
        return own
    for inner in heading.iterdescendants():
        inner_id = inner.get("id") or (inner.get("name") if inner.tag == "a" else None)
        if inner_id:
            return inner_id
    for ancestor in heading.iterancestors(*_SECTIONING_TAGS):
        if ancestor_id := ancestor.get("id"):
            first = next(ancestor.iter(*_HEADINGS), None)
            return ancestor_id if first is heading else ""
    return ""


class _Walker:
    """Walks the main content once, writing paragraphs, headings, code and tables into a TextBuilder."""

    def __init__(self, targets: frozenset[str], *, judge_links: bool) -> None:
        self.judge_links = judge_links  # drop link-dense blocks (only where no main element is marked)
        self.targets = targets
        self.found: dict[str, int] = {}
        self._pending: list[str] = []  # targets met, placed at the start of the next piece written
        self.out = TextBuilder()
        self.headings: list[Heading] = []
        self.anchors: list[str] = []
        self.tables: list[TableSpan] = []
        self._inline: list[str] = []
        self._previous = ""  # the last paragraph written, a caption candidate for a table after it
        self._collecting = 0  # > 0 inside a heading or a cell: blocks become spaces, not paragraphs

    def flush(self) -> None:
        lines = (_collapse(line) for line in "".join(self._inline).split(_BR))
        text = "\n".join(line for line in lines if line)
        self._inline.clear()
        if text:
            self._paragraph(text)
            self._previous = text

    def take_inline(self) -> str:
        text = _collapse("".join(self._inline).replace(_BR, " "))
        self._inline.clear()
        return text

    def _paragraph(self, piece: str) -> tuple[int, int]:
        start, end = self.out.paragraph(piece)
        self._place(start)
        return start, end

    def _place(self, start: int) -> None:
        for target in self._pending:
            self.found.setdefault(target, start)
        self._pending.clear()

    def _mark(self, element: etree._Element, tag: str) -> None:
        name = element.get("id") or (element.get("name") if tag == "a" else None)
        if name and name in self.targets:
            if (
                not self._collecting
                and tag != "a"
                and (tag in _BLOCK_TAGS or tag in _HEADINGS or tag in ("pre", "table"))
            ):
                self.flush()  # a block target starts a piece of its own, not the end of the one before
            self._pending.append(name)

    def block(self, element: etree._Element, *, depth: int, page_level: bool) -> None:
        """Write ``element``'s content; its tail is the caller's."""
        tag = element.tag
        if self.targets:
            self._mark(element, tag)
        if depth > _MAX_DEPTH:
            self._inline.append(" " + "".join(element.itertext()) + " ")
            return
        if self._collecting:
            self._children(element, depth, page_level, separator=" " if tag in _BLOCK_TAGS else "")
            return
        if tag in _HEADINGS:
            self._heading(element, depth, page_level)
        elif tag == "pre":
            self.flush()
            code = "".join(element.itertext()).replace("\r\n", "\n").strip("\n").rstrip()
            if code.strip():
                self._paragraph(code)
                self._previous = ""
        elif tag == "table" and element.find(".//table") is None:
            self.flush()
            self._table(element, depth, page_level)
        elif tag == "br":
            self._inline.append(_BR)
        elif tag in _BLOCK_TAGS or tag == "table":
            self.flush()
            self._children(element, depth, page_level, separator="")
            self.flush()
        else:
            self._children(element, depth, page_level, separator="")

    def _children(self, element: etree._Element, depth: int, page_level: bool, *, separator: str) -> None:
        self._inline.append(separator + (element.text or ""))
        for child in element:
            if not _dropped(child, page_level=page_level, judge_links=self.judge_links):
                self.block(child, depth=depth + 1, page_level=page_level)
            self._inline.append(child.tail or "")
        self._inline.append(separator)

    def _heading(self, element: etree._Element, depth: int, page_level: bool) -> None:
        self.flush()
        self._collecting += 1
        self._children(element, depth, page_level, separator="")
        self._collecting -= 1
        title = self.take_inline().rstrip(_PERMALINK_SIGNS + " ")
        if not title:
            return
        start, _ = self._paragraph(title)
        self._previous = ""
        self.headings.append(Heading(start, clean_title(title), _HEADINGS[element.tag]))
        self.anchors.append(anchor_of(element))

    def _cell(self, cell: etree._Element, depth: int, page_level: bool) -> _Cell:
        self._collecting += 1
        self._children(cell, depth + 2, page_level, separator="")
        self._collecting -= 1
        return _Cell(self.take_inline(), _span(cell, "rowspan"), _span(cell, "colspan"))

    def _table(self, table: etree._Element, depth: int, page_level: bool) -> None:
        caption_element = table.find("caption")
        caption = ""
        if caption_element is not None:
            self._collecting += 1
            self._children(caption_element, depth, page_level, separator="")
            self._collecting -= 1
            caption = self.take_inline()
            if caption:
                self._paragraph(caption)
        elif CAPTION_RE.match(self._previous):
            caption = self._previous
        head_rows = table.xpath("./thead/tr")
        body_rows = [tr for tr in table.xpath("./tr | ./tbody/tr | ./tfoot/tr | ./thead/tr") if tr not in head_rows]
        head_grid = _grid([[self._cell(c, depth, page_level) for c in _cells(tr)] for tr in head_rows])
        body_grid = _grid([[self._cell(c, depth, page_level) for c in _cells(tr)] for tr in body_rows])
        lines = [line for line in map(_line, body_grid) if line]
        header = _header_line(head_grid)
        if not header and lines:
            header, lines = lines[0], lines[1:]
        self._previous = ""
        if header:
            self.tables.append(self.out.table(header, lines, caption=caption))
            self._place(self.tables[-1].start)


@dataclass(eq=False, slots=True)
class _Cell:
    """A cell's text and spans; compared by identity, so a spanning cell is known wherever it reappears."""

    text: str
    rowspan: int  # 0: to the end of its row group, as HTML has it
    colspan: int


def _cells(tr: etree._Element) -> Iterator[etree._Element]:
    return (child for child in tr if child.tag in ("td", "th"))


def _span(cell: etree._Element, attribute: str) -> int:
    try:
        value = int((cell.get(attribute) or "1").strip())
    except ValueError:
        return 1
    return max(0, min(value, _MAX_SPAN))


def _grid(rows: list[list[_Cell]]) -> list[list[_Cell]]:
    """The cells on a grid: a cell spanning rows or columns fills every slot it covers (HTML's table model)."""
    grid: list[list[_Cell | None]] = [[] for _ in rows]
    for r, cells in enumerate(rows):
        column = 0
        for cell in cells:
            while column < len(grid[r]) and grid[r][column] is not None:
                column += 1
            rowspan = min(cell.rowspan or len(rows), len(rows) - r)
            colspan = max(cell.colspan, 1)
            for slots in grid[r : r + rowspan]:
                if len(slots) < column + colspan:
                    slots.extend([None] * (column + colspan - len(slots)))
                slots[column : column + colspan] = [cell] * colspan
            column += colspan
    return [[cell for cell in row if cell is not None] for row in grid]


def _line(row: list[_Cell]) -> str:
    """A grid row as one line; a cell spanning columns is written once."""
    values = [cell.text for i, cell in enumerate(row) if i == 0 or cell is not row[i - 1]]
    return CELL_SEPARATOR.join(values) if any(values) else ""


def _header_line(grid: list[list[_Cell]]) -> str:
    """Several header rows become one line, each column naming its header cells top-down ("Info O")."""
    if len(grid) <= 1:
        return _line(grid[0]) if grid else ""
    width = max(len(row) for row in grid)
    columns: list[tuple[_Cell, ...]] = []
    for c in range(width):
        stack = [row[c] for row in grid if c < len(row)]
        columns.append(tuple(cell for i, cell in enumerate(stack) if i == 0 or cell is not stack[i - 1]))
    kept = [column for i, column in enumerate(columns) if i == 0 or column != columns[i - 1]]
    values = [" ".join(cell.text for cell in column if cell.text) for column in kept]
    return CELL_SEPARATOR.join(values) if any(values) else ""
