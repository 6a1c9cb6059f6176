"""EPUB (.epub) loader: the chapters in the spine's reading order, each read by the HTML loader.

An EPUB is a zip: ``META-INF/container.xml`` names the package document (OPF), whose manifest lists
the files and whose spine gives the reading order. Each chapter (XHTML) goes through
``html.extract``, so the main-content rules, sections, anchors and tables are the HTML loader's.
Spine items marked ``linear="no"`` are left out: they are what a reader skips (Sphinx's EPUB builder
puts a book's other translations there). A chapter is a level-1 section: when it opens with a
heading, that heading's level becomes 1 and the chapter's other headings move up with it; otherwise
its title from the table of contents (the EPUB 3 navigation document or the EPUB 2 NCX), or its own
``<title>``, is written above it. The book's title is the OPF's ``dc:title``.

The book's own headings come first; the table of contents fills in where they are weak. A place the TOC
links to (``chapter.xhtml#id``) that no heading marks becomes a section when the text there begins with the
TOC's label, nested by the TOC's depth below the chapter's entry: SiSU sets subsections as bold paragraphs
that only its NCX names. A page holding nothing but headings (a part's title page, a half-title) is left
out, since it would be a section with no text that repeats the chapter after it.

A chapter that cannot be read (missing from the zip, damaged there, not HTML) is left out and named in
``skipped_pages`` (number: its place in the reading order; label: its path in the package), and the rest of the
book is stored; so is a chapter read only in part: XHTML that is not well-formed XML, which the forgiving HTML
parser read instead, losing what the damage hid (an unescaped ``<name@example.org>`` reads as a tag).

Only zipfile and lxml are used: EbookLib, the usual library, is AGPL-licensed and reads no more than
this needs. DRM-protected books (``META-INF/encryption.xml`` encrypting anything but obfuscated fonts)
are refused, since their chapters are ciphertext.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from dataclasses import dataclass, replace
from urllib.parse import unquote

from lxml import etree

from sextant.kb.documents import LoadedDocument, LoadError, SectionSpan, SkippedPage, join_pages
from sextant.kb.loaders import html
from sextant.kb.loaders.builder import ZIP_ERRORS, Heading, clean_title, close_sections, stem

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "enc": "http://www.w3.org/2001/04/xmlenc#",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
}
_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html"})
# Font obfuscation (IDPF and Adobe) scrambles embedded fonts only; the text stays readable.
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_MAX_CHAPTER_BYTES = 64 * 1024 * 1024  # one chapter's XHTML, uncompressed; past this it is a zip bomb, not a book
_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


@dataclass(frozen=True, slots=True)
class _Entry:
    """One link in the book's table of contents; ``depth`` is its nesting (0 at the top)."""

    path: str
    fragment: str
    label: str
    depth: int


def load(data: bytes, name: str) -> LoadedDocument:
    """Load an EPUB 2 or 3 book: chapters in reading order, their headings as sections, no pages.

    Raises:
        LoadError: the file is not a readable EPUB, is DRM-protected, or holds no text.
    """
    try:
        book = zipfile.ZipFile(io.BytesIO(data))
    except ZIP_ERRORS as exc:
        raise LoadError(
            name, "not an EPUB (it is not a zip package); re-export it from the program that made it"
        ) from exc
    with book:
        _refuse_drm(book, name)
        opf_path = _package_path(book, name)
        opf = _xml(book, opf_path, name)
        chapters = _spine(opf, opf_path, name)
        entries = _toc_entries(book, opf, opf_path)
        read: list[LoadedDocument] = []
        skipped: list[SkippedPage] = []
        for number, (path, media_type) in enumerate(chapters, start=1):
            try:
                chapter, damage = _chapter(book, path, media_type, [e for e in entries if e.path == path], name)
            except LoadError as exc:
                skipped.append(SkippedPage(number, path, exc.reason))
                continue
            if damage:
                skipped.append(SkippedPage(number, path, damage))
            if chapter is not None:
                read.append(chapter)
    # A page holding nothing but its title (a part's or the book's title page) repeats what the table of
    # contents and the chapters after it say: it would be a section with no text of its own.
    parts: list[tuple[LoadedDocument, int | None]] = [(c, None) for c in read if not _title_only(c)] or [
        (c, None) for c in read
    ]
    if not parts:
        if skipped:
            named = "; ".join(f"chapter {s.label}: {s.reason}" for s in skipped[:5])
            raise LoadError(name, f"no chapter could be read: {named}")
        raise LoadError(name, "empty: no chapter in the book's reading order holds text")
    title = clean_title(" ".join(opf.xpath("string(opf:metadata/dc:title[1])", namespaces=_NS).split()))
    joined = join_pages(parts, title or "untitled")
    fallback = next((s.title for s in joined.sections if s.level == 1), "") or stem(name)
    return replace(joined, title=title or fallback, skipped_pages=tuple(skipped))


def _read(book: zipfile.ZipFile, path: str, name: str) -> bytes:
    try:
        info = book.getinfo(path)
    except KeyError:
        raise LoadError(name, f"damaged EPUB: {path} is named in the package but missing; re-export it") from None
    if info.file_size > _MAX_CHAPTER_BYTES:
        raise LoadError(name, f"{path} unpacks to {info.file_size:,} bytes, too large for one chapter of a book")
    try:
        return book.read(info)
    except ZIP_ERRORS as exc:
        raise LoadError(name, f"damaged EPUB: {path} cannot be unpacked ({exc}); re-export it") from exc


def _xml(book: zipfile.ZipFile, path: str, name: str) -> etree._Element:
    try:
        return etree.fromstring(_read(book, path, name), _XML)
    except etree.XMLSyntaxError as exc:
        raise LoadError(name, f"damaged EPUB: {path} is not well-formed XML ({exc}); re-export it") from exc


def _refuse_drm(book: zipfile.ZipFile, name: str) -> None:
    if "META-INF/encryption.xml" not in book.namelist():
        return
    try:
        encryption = _xml(book, "META-INF/encryption.xml", name)
    except LoadError:
        raise LoadError(name, "DRM-protected or damaged: META-INF/encryption.xml cannot be read") from None
    encrypted = [
        str(data.xpath("string(enc:CipherData/enc:CipherReference/@URI)", namespaces=_NS))
        for data in encryption.iter(f"{{{_NS['enc']}}}EncryptedData")
        if data.xpath("string(enc:EncryptionMethod/@Algorithm)", namespaces=_NS) not in _FONT_OBFUSCATION
    ]
    if encrypted:
        raise LoadError(
            name,
            f"DRM-protected: META-INF/encryption.xml encrypts {len(encrypted)} file(s), such as {encrypted[0]}; "
            "only a DRM-free copy of the book can be read (many shops offer one)",
        )


def _package_path(book: zipfile.ZipFile, name: str) -> str:
    if "META-INF/container.xml" not in book.namelist():
        raise LoadError(name, "not an EPUB: META-INF/container.xml is missing; re-export the book as EPUB")
    container = _xml(book, "META-INF/container.xml", name)
    path = str(container.xpath("string(c:rootfiles/c:rootfile[1]/@full-path)", namespaces=_NS))
    if not path:
        raise LoadError(name, "damaged EPUB: META-INF/container.xml names no package document (OPF)")
    return path


def _resolve(base: str, href: str) -> str:
    """A manifest or TOC href (URL-encoded, relative to the file naming it) as a path in the zip, fragment dropped."""
    path = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), path))


def _spine(opf: etree._Element, opf_path: str, name: str) -> list[tuple[str, str]]:
    """``(path, media type)`` of each linear spine item in reading order, each file once."""
    manifest = {
        item.get("id"): (item.get("href") or "", item.get("media-type") or "")
        for item in opf.iterfind("opf:manifest/opf:item", _NS)
    }
    chapters: list[tuple[str, str]] = []
    seen: set[str] = set()
    for itemref in opf.iterfind("opf:spine/opf:itemref", _NS):
        if itemref.get("linear") == "no":
            continue
        idref = itemref.get("idref")
        if idref not in manifest:
            raise LoadError(name, f"damaged EPUB: the spine names {idref!r}, which the manifest does not list")
        href, media_type = manifest[idref]
        path = _resolve(opf_path, href)
        if media_type in _CHAPTER_TYPES and path not in seen:
            seen.add(path)
            chapters.append((path, media_type))
    return chapters


def _toc_entries(book: zipfile.ZipFile, opf: etree._Element, opf_path: str) -> list[_Entry]:
    """The table of contents (EPUB 3 nav, else EPUB 2 NCX) in its order, entries without a label left out."""
    items = list(opf.iterfind("opf:manifest/opf:item", _NS))
    spine = opf.find("opf:spine", _NS)
    toc_id = spine.get("toc") if spine is not None else None
    nav = next((i for i in items if "nav" in (i.get("properties") or "").split()), None)
    ncx = next((i for i in items if toc_id and i.get("id") == toc_id), None)
    found: list[tuple[str, str, str, int]] = []  # (toc file, href, label, depth) in TOC order
    try:
        if nav is not None:
            nav_path = _resolve(opf_path, nav.get("href") or "")
            toc = _xml(book, nav_path, nav_path)
            for link in toc.iterfind(".//xhtml:nav//xhtml:a[@href]", _NS):
                depth = sum(1 for a in link.iterancestors() if etree.QName(a).localname in ("ol", "ul")) - 1
                found.append((nav_path, link.get("href") or "", "".join(link.itertext()), depth))
        elif ncx is not None:
            ncx_path = _resolve(opf_path, ncx.get("href") or "")
            for point in _xml(book, ncx_path, ncx_path).iterfind(".//ncx:navPoint", _NS):
                depth = sum(1 for a in point.iterancestors() if etree.QName(a).localname == "navPoint")
                src = str(point.xpath("string(ncx:content/@src)", namespaces=_NS))
                label = str(point.xpath("string(ncx:navLabel/ncx:text)", namespaces=_NS))
                found.append((ncx_path, src, label, depth))
    # A damaged or missing table of contents costs chapter titles only; a chapter's own <title> stands in.
    except LoadError:
        return []
    entries: list[_Entry] = []
    for toc_path, href, label, depth in found:
        fragment = unquote(href.split("#", 1)[1]) if "#" in href else ""
        if " ".join(label.split()):
            entries.append(_Entry(_resolve(toc_path, href), fragment, " ".join(label.split()), max(0, depth)))
    return entries


def _chapter(
    book: zipfile.ZipFile, path: str, media_type: str, entries: list[_Entry], name: str
) -> tuple[LoadedDocument | None, str]:
    """One chapter as a document whose first section, at level 1, is the chapter (None if it holds no text), and
    what damage cost it ("" for none): XHTML that is not XML, read by the HTML parser.

    ``entries``: the table of contents' links into this chapter, the first one its label.

    Raises:
        LoadError: the chapter cannot be read; the reason says why.
    """
    targets = frozenset(e.fragment for e in entries if e.fragment)
    xhtml = media_type == "application/xhtml+xml"
    page = html.extract(_read(book, path, name), path, xml=xhtml, targets=targets)
    damage = ""
    if page.xml_error:
        damage = (
            f"read in part: its XHTML is not well-formed XML ({page.xml_error}), so the HTML parser read it and "
            "text around the damage may be missing; re-export the book"
        )
    return _chapter_document(page, path, entries), damage


def _chapter_document(page: html.Page, path: str, entries: list[_Entry]) -> LoadedDocument | None:
    if not page.text:
        return None
    label = entries[0].label if entries else ""
    sections = tuple(replace(s, anchor=f"{path}#{s.anchor}" if s.anchor else path) for s in page.sections)
    sections = _toc_sections(page, sections, entries)
    doc = LoadedDocument(text=page.text, title=path, sections=sections, tables=page.tables)
    if sections and sections[0].start == 0:
        lift = sections[0].level - 1
        return replace(doc, sections=tuple(replace(s, level=max(1, s.level - lift)) for s in sections))
    title = clean_title(label or page.html_title)
    if not title:
        return doc
    # The chapter's headings move to level 2 and below, inside the chapter's own section.
    lift = min((s.level for s in sections), default=2) - 2
    body = replace(doc, sections=tuple(replace(s, level=s.level - lift) for s in sections))
    joined = join_pages([(LoadedDocument(text=title, title=title), None), (body, None)], title)
    chapter = SectionSpan(0, len(joined.text), title, 1, path)
    return replace(joined, sections=(chapter, *joined.sections))


def _toc_sections(page: html.Page, sections: tuple[SectionSpan, ...], entries: list[_Entry]) -> tuple[SectionSpan, ...]:
    """The chapter's headings, plus a section for each place the table of contents links to that no heading
    marks (SiSU sets its subsections as bold paragraphs: only the NCX knows them), nested by the TOC's depth."""
    whole = next((e.depth for e in entries if not e.fragment), None)
    inner = [e for e in entries if e.fragment in page.targets]
    if not inner:
        return sections
    base = whole if whole is not None else min(e.depth for e in inner) - 1
    heads = {s.start for s in sections}
    added: list[tuple[Heading, str]] = []
    for entry in inner:
        start = page.targets[entry.fragment]
        line = page.text[start : start + len(entry.label) + 200].split("\n", 1)[0]
        # Only where the text there begins with the entry's label, so the section cites its own title.
        if start in heads or " ".join(line.split()).casefold() != entry.label.casefold():
            continue
        heads.add(start)
        added.append(
            (Heading(start, clean_title(line), max(2, 1 + entry.depth - base)), f"{entry.path}#{entry.fragment}")
        )
    if not added:
        return sections
    anchors = {(s.start, s.level): s.anchor for s in sections} | {(h.start, h.level): a for h, a in added}
    headings = [Heading(s.start, s.title, s.level) for s in sections] + [h for h, _ in added]
    return tuple(replace(s, anchor=anchors[(s.start, s.level)]) for s in close_sections(headings, len(page.text)))


def _title_only(chapter: LoadedDocument) -> bool:
    """The chapter's text is its headings and nothing else."""
    titles = {s.title for s in chapter.sections}
    return bool(titles) and all(piece in titles for piece in chapter.text.split("\n\n"))
