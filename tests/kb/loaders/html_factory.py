"""Made HTML pages and EPUB books for the loaders' edge cases; real files are tested beside them."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

from sextant.kb.documents import LoadedDocument
from tests.kb.loaders.pdf_factory import assert_well_formed

PYTHON_MANUAL = "/usr/share/doc/python3.11/html"
XHTML_NS = "http://www.w3.org/1999/xhtml"


def page(body: str, *, title: str = "", head: str = "") -> bytes:
    """A UTF-8 HTML5 page around ``body``."""
    title_tag = f"<title>{title}</title>" if title else ""
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8">{title_tag}{head}</head><body>{body}</body></html>'.encode()
    )


def chapter(body: str, *, title: str = "") -> str:
    """An EPUB chapter: a well-formed XHTML document."""
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="{XHTML_NS}"><head><title>{title}</title></head>'
        f"<body>{body}</body></html>"
    )


def epub(
    chapters: Sequence[tuple[str, str]],
    *,
    title: str = "A Made Book",
    nav: Sequence[tuple[str, str]] = (),
    nav_tree: Sequence[tuple[str, str, int]] = (),
    non_linear: Sequence[str] = (),
    encryption: str | None = None,
    folder: str = "OEBPS",
) -> bytes:
    """An EPUB 3 package: ``chapters`` are (href, XHTML) in spine order; ``nav`` (href, label) makes a nav document;
    ``nav_tree`` (href, label, depth) makes an EPUB 2 NCX, each entry nested under the last one a level up."""
    manifest = [
        f'<item id="c{i}" href="{href}" media-type="application/xhtml+xml"/>' for i, (href, _) in enumerate(chapters)
    ]
    linear = {href: ' linear="no"' if href in non_linear else "" for href, _ in chapters}
    spine = [f'<itemref idref="c{i}"{linear[href]}/>' for i, (href, _) in enumerate(chapters)]
    spine_toc = ' toc="ncx"' if nav_tree else ""
    if nav_tree:
        manifest.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    if nav:
        manifest.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>')
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>'
        f"<manifest>{''.join(manifest)}</manifest><spine{spine_toc}>{''.join(spine)}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        f'<rootfiles><rootfile full-path="{folder}/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        book.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        book.writestr("META-INF/container.xml", container)
        if encryption is not None:
            book.writestr("META-INF/encryption.xml", encryption)
        book.writestr(f"{folder}/content.opf", opf)
        for href, xhtml in chapters:
            book.writestr(f"{folder}/{href}", xhtml)
        if nav:
            links = "".join(f'<li><a href="{href}">{label}</a></li>' for href, label in nav)
            nav_body = f'<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol>{links}</ol></nav>'
            book.writestr(f"{folder}/nav.xhtml", chapter(nav_body, title="Contents"))
        if nav_tree:
            book.writestr(f"{folder}/toc.ncx", _ncx(nav_tree))
    return out.getvalue()


def _ncx(entries: Sequence[tuple[str, str, int]]) -> str:
    points: list[str] = []
    open_depths: list[int] = []
    for href, label, depth in entries:
        while open_depths and open_depths[-1] >= depth:
            points.append("</navPoint>")
            open_depths.pop()
        points.append(f'<navPoint><navLabel><text>{label}</text></navLabel><content src="{href}"/>')
        open_depths.append(depth)
    points.extend("</navPoint>" for _ in open_depths)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
        f"<navMap>{''.join(points)}</navMap></ncx>"
    )


def encryption_xml(entries: Sequence[tuple[str, str]]) -> str:
    """META-INF/encryption.xml naming (algorithm, URI) pairs."""
    data = "".join(
        '<enc:EncryptedData xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        f'<enc:EncryptionMethod Algorithm="{algorithm}"/>'
        f'<enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData>'
        for algorithm, uri in entries
    )
    container = "urn:oasis:names:tc:opendocument:xmlns:container"
    return f'<?xml version="1.0"?>\n<encryption xmlns="{container}">{data}</encryption>'


def assert_sections_cite_headings(doc: LoadedDocument) -> None:
    """Every loader invariant, and each section's text begins with its own heading."""
    assert_well_formed(doc)
    for section in doc.sections:
        # A title over builder.TITLE_MAX_CHARS is cut at a word and ends in "…".
        assert doc.text[section.start : section.end].startswith(section.title.removesuffix("…")), section
