"""Decks and OpenDocument files made for tests: python-pptx writes .pptx; .odp/.odt are written as XML.

The real files under ``files/`` show what office suites write; these cover what they rarely hold at once
(notes, merged cells, groups, an empty slide, a damaged part) with text the tests can name.
"""

from __future__ import annotations

import io
import zipfile

import pptx
from pptx.util import Inches

OLE_BYTES = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)


def deck() -> bytes:
    """Four slides: title + two boxes out of order + notes; empty; table and group; a third to damage."""
    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[5])  # "Title Only"
    first.shapes.title.text = "Quarterly review"
    # Added lower first, so XML order is not reading order.
    first.shapes.add_textbox(Inches(1), Inches(5), Inches(4), Inches(1)).text_frame.text = "Lower box"
    right = first.shapes.add_textbox(Inches(5), Inches(2), Inches(3), Inches(1))
    right.text_frame.text = "Upper right"
    first.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1)).text_frame.text = "Upper left\vsame paragraph"
    first.notes_slide.notes_text_frame.text = "Mention the budget."
    presentation.slides.add_slide(presentation.slide_layouts[6])  # blank: no text at all
    third = presentation.slides.add_slide(presentation.slide_layouts[6])
    table = third.shapes.add_table(4, 3, Inches(1), Inches(1), Inches(6), Inches(2)).table
    for r, cells in enumerate([["Region", "Quarter", "Sales"], ["North", "Q1", "10"], ["", "Q2", "12"], ["", "", ""]]):
        for c, value in enumerate(cells):
            table.cell(r, c).text = value
    table.cell(1, 0).merge(table.cell(2, 0))  # "North" runs down two rows
    group = third.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(5), Inches(2), Inches(1)).text_frame.text = "Grouped one"
    group.shapes.add_textbox(Inches(4), Inches(5), Inches(2), Inches(1)).text_frame.text = "Grouped two"
    fourth = presentation.slides.add_slide(presentation.slide_layouts[5])
    fourth.shapes.title.text = "Will be damaged"
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def with_part(data: bytes, part: str, content: bytes) -> bytes:
    """The zip package ``data`` with member ``part`` replaced by ``content``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info, content if info.filename == part else source.read(info))
    return out.getvalue()


_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/"'
)
ODT = "application/vnd.oasis.opendocument.text"
ODP = "application/vnd.oasis.opendocument.presentation"


def opendocument(mimetype: str, body: str, *, styles: str = "", title: str = "", encrypted: bool = False) -> bytes:
    """A minimal OpenDocument package: ``body`` goes inside ``office:body``, ``styles`` into automatic styles."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_NS} office:version="1.3">'
        f"<office:automatic-styles>{styles}</office:automatic-styles><office:body>{body}</office:body>"
        "</office:document-content>"
    )
    meta = f"<office:document-meta {_NS}><office:meta><dc:title>{title}</dc:title></office:meta></office:document-meta>"
    manifest = '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
    if encrypted:
        manifest += (
            '<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry>'
        )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", mimetype, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content)
        archive.writestr("meta.xml", meta)
        archive.writestr("META-INF/manifest.xml", manifest + "</manifest:manifest>")
    return out.getvalue()
