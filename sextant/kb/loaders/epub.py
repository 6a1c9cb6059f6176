"""EPUB (.epub) loader: the chapters in the spine's reading order, each read by the HTML loader.

An EPUB is a zip: ``META-INF/container.xml`` names the package document (OPF), whose manifest lists
the files and whose spine gives the reading order. Each chapter (XHTML) goes through
``html.extract``, so the main-content rules, sections, anchors and tables are the HTML loader's.
Spine items marked ``linear="no"`` are left out: they are what a reader skips (Sphinx's EPUB builder
puts a book's other translations there). A chapter is a level-1 section: when it opens with a
heading, that heading's level becomes 1 and the chapter's other headings move up with it; otherwise
its title from the table of contents (the EPUB 3 navigation document or the EPUB 2 NCX), or its own
``<title>``, is written above it. The book's title is the OPF's ``dc:title``.

Only zipfile and lxml are used: EbookLib, the usual library, is AGPL-licensed and reads no more than
this needs. DRM-protected books (``META-INF/encryption.xml`` encrypting anything but obfuscated fonts)
are refused, since their chapters are ciphertext.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from dataclasses import replace
from urllib.parse import unquote

from lxml import etree

from sextant.kb.documents import LoadedDocument, LoadError, SectionSpan, join_pages
from sextant.kb.loaders import html
from sextant.kb.loaders.builder import ZIP_ERRORS, clean_title, stem

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
        labels = _toc_labels(book, opf, opf_path)
        parts: list[tuple[LoadedDocument, int | None]] = []
        for path, media_type in chapters:
            chapter = _chapter(book, path, media_type, labels.get(path, ""), name)
            if chapter is not None:
                parts.append((chapter, None))
    if not parts:
        raise LoadError(name, "empty: no chapter in the book's reading order holds text")
    title = clean_title(" ".join(opf.xpath("string(opf:metadata/dc:title[1])", namespaces=_NS).split()))
    joined = join_pages(parts, title or "untitled")
    fallback = next((s.title for s in joined.sections if s.level == 1), "") or stem(name)
    return replace(joined, title=title or fallback)


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


def _toc_labels(book: zipfile.ZipFile, opf: etree._Element, opf_path: str) -> dict[str, str]:
    """Each chapter's first label in the table of contents (EPUB 3 nav, else EPUB 2 NCX), by path."""
    items = list(opf.iterfind("opf:manifest/opf:item", _NS))
    spine = opf.find("opf:spine", _NS)
    toc_id = spine.get("toc") if spine is not None else None
    nav = next((i for i in items if "nav" in (i.get("properties") or "").split()), None)
    ncx = next((i for i in items if toc_id and i.get("id") == toc_id), None)
    found: list[tuple[str, str]] = []  # (path, label) in TOC order
    try:
        if nav is not None:
            nav_path = _resolve(opf_path, nav.get("href") or "")
            for link in _xml(book, nav_path, nav_path).iterfind(".//xhtml:nav//xhtml:a[@href]", _NS):
                found.append((_resolve(nav_path, link.get("href") or ""), "".join(link.itertext())))
        elif ncx is not None:
            ncx_path = _resolve(opf_path, ncx.get("href") or "")
            for point in _xml(book, ncx_path, ncx_path).iterfind(".//ncx:navPoint", _NS):
                src = str(point.xpath("string(ncx:content/@src)", namespaces=_NS))
                found.append(
                    (_resolve(ncx_path, src), str(point.xpath("string(ncx:navLabel/ncx:text)", namespaces=_NS)))
                )
    # A damaged or missing table of contents costs chapter titles only; a chapter's own <title> stands in.
    except LoadError:
        return {}
    labels: dict[str, str] = {}
    for path, label in found:
        if " ".join(label.split()):
            labels.setdefault(path, " ".join(label.split()))
    return labels


def _chapter(book: zipfile.ZipFile, path: str, media_type: str, label: str, name: str) -> LoadedDocument | None:
    """One chapter as a document whose first section, at level 1, is the chapter; None if it holds no text."""
    try:
        page = html.extract(_read(book, path, name), path, xml=media_type == "application/xhtml+xml")
    except LoadError as exc:
        raise LoadError(name, f"chapter {path}: {exc.reason}") from exc
    if not page.text:
        return None
    sections = tuple(replace(s, anchor=f"{path}#{s.anchor}" if s.anchor else path) for s in page.sections)
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
