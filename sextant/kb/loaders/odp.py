"""OpenDocument presentation (.odp) loader: a slide is a page, its title a section, its notes marked.

Every shape on a slide (frames, custom shapes, groups) is read in reading order: top to bottom, then left
to right, by its ``svg:y`` and ``svg:x``; a group is placed by its first shape and read as one unit. Header,
footer, date and slide-number placeholders are the master's furniture, not the slide's text, and are
left out. A slide's speaker notes follow its text after a "Speaker notes:" line, inside its page.

All slides live in one ``content.xml``: a damaged slide cannot be skipped the way a damaged .pptx slide
part can, so a content.xml that does not parse refuses the whole file.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

from sextant.kb.documents import LoadedDocument
from sextant.kb.loaders.opendocument import NS, Package, blocks, length_cm, open_package, q
from sextant.kb.loaders.slides import Paragraph, Slide, Table, deck

MIMETYPES = (
    "application/vnd.oasis.opendocument.presentation",
    "application/vnd.oasis.opendocument.presentation-template",
)
_FURNITURE = frozenset({"header", "footer", "date-time", "page-number", "page"})
_NOT_SHAPES = frozenset({q("presentation:notes"), q("office:forms"), q("draw:page-thumbnail")})


def load(data: bytes, name: str) -> LoadedDocument:
    """Load an .odp file: page n is slide n (label "n"), the title of each slide a section.

    Raises:
        LoadError: the file is a legacy .ppt, password-protected, not a readable .odp, or no slide has text.
    """
    package = open_package(data, name, MIMETYPES, ".odp")
    tables = [0]
    slides = [_slide(page, package, name, tables) for page in package.body.iterfind(q("draw:page"))]
    return deck(slides, package.title, name, "presentation")


def _slide(page: etree._Element, package: Package, name: str, tables: list[int]) -> Slide:
    title = ""
    found: list[Paragraph | Table] = []
    for shape in _reading_order(page):
        kind = shape.get(q("presentation:class"), "")
        if kind in _FURNITURE:
            continue
        read = list(_shape_blocks(shape, package, name, tables))
        if kind == "title" and not title:
            title = " ".join(b.text for b in read if isinstance(b, Paragraph))
        else:
            found.extend(read)
    notes = page.find(q("presentation:notes"))
    noted = [] if notes is None else [b for s in _reading_order(notes) for b in _shape_blocks(s, package, name, tables)]
    note_text = "\n".join(b.text if isinstance(b, Paragraph) else "\n".join((b.header, *b.rows)) for b in noted)
    return Slide(title=title, blocks=found, notes=note_text)


def _reading_order(container: etree._Element) -> list[etree._Element]:
    shapes = [s for s in container if isinstance(s.tag, str) and s.tag not in _NOT_SHAPES]
    return sorted(shapes, key=_position)


def _position(shape: etree._Element) -> tuple[float, float]:
    if shape.tag == q("draw:g"):
        first = _reading_order(shape)
        return _position(first[0]) if first else (0.0, 0.0)
    return length_cm(shape.get(q("svg:y"))), length_cm(shape.get(q("svg:x")))


def _shape_blocks(shape: etree._Element, package: Package, name: str, tables: list[int]) -> Iterator[Paragraph | Table]:
    """A shape's text: a frame's text box or table, a group's shapes in order, a shape's own paragraphs."""
    if shape.tag == q("draw:g"):
        for inner in _reading_order(shape):
            if inner.get(q("presentation:class"), "") not in _FURNITURE:
                yield from _shape_blocks(inner, package, name, tables)
    elif shape.tag == q("draw:frame"):
        for content in shape:
            if content.tag == q("draw:text-box"):
                yield from blocks(content, package, name, tables)
            elif content.tag == q("table:table"):
                yield from blocks(shape, package, name, tables)
            elif isinstance(content.tag, str) and content.tag.startswith(f"{{{NS['draw']}}}"):
                yield from blocks(content, package, name, tables)  # an image's or object's caption paragraphs
    else:
        yield from blocks(shape, package, name, tables)
