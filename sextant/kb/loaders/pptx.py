"""PowerPoint (.pptx) loader: a slide is a page, its title a section, its notes marked.

python-pptx reads the deck. A slide's shapes are read in reading order, top to bottom then left to right;
a group is placed by its own position and its shapes read as one unit in their own order. Header,
footer, date and slide-number placeholders are the layout's furniture and are left out; a table is a
header line and one line per row (see ``opendocument`` for merged cells); speaker notes follow the
slide's text after a "Speaker notes:" line, inside its page. A line break inside a paragraph (python-pptx's
``\\v``) is written as a line break.

Each slide is its own XML part, and python-pptx parses every part on opening, so one damaged slide would
refuse the whole deck. Damaged slide parts are found first and stood in for by an empty slide; such a
slide is named in ``skipped_pages`` and keeps an empty page span, and the rest of the deck is stored. A
damaged notes part costs only that slide's notes: the slide is read, and named in ``skipped_pages`` with its notes
left out.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Iterator

import pptx
from lxml import etree
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.shapes.base import BaseShape
from pptx.slide import Slide as PptxSlide
from pptx.table import Table as PptxTable

from sextant.kb.documents import LoadedDocument, LoadError, SkippedPage
from sextant.kb.loaders.builder import CELL_SEPARATOR, ZIP_ERRORS, refuse_unless_office_zip
from sextant.kb.loaders.slides import Paragraph, Slide, Table, deck

_SLIDE_PART_RE = re.compile(r"^ppt/slides/slide\d+\.xml$")
_NOTES_PART_RE = re.compile(r"^ppt/notesSlides/notesSlide\d+\.xml$")
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_EMPTY_TREE = (
    '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
    "<p:grpSpPr/></p:spTree></p:cSld>"
)
_STAND_INS = {
    "slide": f'<p:sld xmlns:a="{_A}" xmlns:p="{_P}">{_EMPTY_TREE}</p:sld>'.encode(),
    "notes": f'<p:notes xmlns:a="{_A}" xmlns:p="{_P}">{_EMPTY_TREE}</p:notes>'.encode(),
}
_PARSER = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False)
_FURNITURE = frozenset({PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.HEADER})


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a .pptx file: page n is slide n (label "n"), the title of each slide a section.

    Raises:
        LoadError: the file is a legacy .ppt or password-protected, not a readable .pptx, has no slides, or
            no readable slide has text.
    """
    refuse_unless_office_zip(
        data, name, suffix=".pptx", app="PowerPoint", legacy="PowerPoint 97-2003 (.ppt)", kind="presentation"
    )
    try:
        repaired, broken = _with_stand_ins(data)
        presentation = pptx.Presentation(io.BytesIO(repaired))
        # Read on first use: a damaged slide list (an entry without its r:id) raises here.
        deck_slides = list(presentation.slides)
    # python-pptx (and the stand-ins' copy of the other parts) reports damage as whichever error its zip, XML or
    # package layer hit first.
    except Exception as exc:
        raise LoadError(
            name, f"not a readable .pptx ({type(exc).__name__}: {exc}); re-save it from PowerPoint"
        ) from exc
    slides: list[Slide | SkippedPage] = []
    for number, slide in enumerate(deck_slides, 1):
        reason = broken.get(str(slide.part.partname).lstrip("/"))
        if reason:
            slides.append(SkippedPage(number, str(number), reason))
            continue
        try:
            slides.append(_slide(slide, broken))
        # A part that parses can still break python-pptx's reading of it (fuzzed attributes, missing ids).
        except Exception as exc:
            slides.append(SkippedPage(number, str(number), f"damaged, python-pptx could not read it ({exc})"))
    return deck(slides, _core_title(presentation), name, "presentation")


def _with_stand_ins(data: bytes) -> tuple[bytes, dict[str, str]]:
    """The package with every slide or notes part that does not parse replaced by an empty one.

    Returns the package and, for each replaced part (zip path), the reason it was replaced.
    """
    broken: dict[str, str] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        for info in members:
            if _SLIDE_PART_RE.match(info.filename) or _NOTES_PART_RE.match(info.filename):
                try:
                    etree.fromstring(archive.read(info), _PARSER)
                # A bad CRC or compression leaves the part as unreadable as bad XML.
                except (etree.XMLSyntaxError, *ZIP_ERRORS) as exc:
                    broken[info.filename] = f"damaged, its XML part {info.filename} does not parse ({exc})"
        if not broken:
            return data, broken
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rebuilt:
            for info in members:
                if info.filename in broken:
                    kind = "slide" if _SLIDE_PART_RE.match(info.filename) else "notes"
                    rebuilt.writestr(info.filename, _STAND_INS[kind])
                else:
                    rebuilt.writestr(info, archive.read(info))
    return out.getvalue(), broken


def _slide(slide: PptxSlide, broken: dict[str, str]) -> Slide:
    title_shape = slide.shapes.title
    title = _text(title_shape) if title_shape is not None else ""
    skip = title_shape.shape_id if title_shape is not None else None
    blocks = list(_blocks(slide.shapes, skip))
    notes = left_out = ""
    if slide.has_notes_slide:
        notes_slide = slide.notes_slide
        part = str(notes_slide.part.partname).lstrip("/")
        if part in broken:
            left_out = f"its speaker notes were left out: {broken[part]}"
        elif (frame := notes_slide.notes_text_frame) is not None:
            notes = frame.text.replace("\v", "\n").strip()
    return Slide(title=title, blocks=blocks, notes=notes, left_out=left_out)


def _blocks(shapes: Iterable[BaseShape], skip: int | None) -> Iterator[Paragraph | Table]:
    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        if shape.shape_id == skip or (shape.is_placeholder and shape.placeholder_format.type in _FURNITURE):
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _blocks(shape.shapes, skip)  # type: ignore[attr-defined]
        elif getattr(shape, "has_table", False):
            header, rows = _table_lines(shape.table)  # type: ignore[attr-defined]
            if header:
                yield Table(header, tuple(rows))
        elif shape.has_text_frame and (text := _text(shape)):
            yield Paragraph(text, None, "")


def _text(shape: BaseShape) -> str:
    return shape.text_frame.text.replace("\v", "\n").strip() if shape.has_text_frame else ""  # type: ignore[attr-defined]


def _table_lines(table: PptxTable) -> tuple[str, list[str]]:
    """Header line and body row lines; a cell merged downwards repeats in each row it covers."""
    lines: list[str] = []
    above: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        for column, cell in enumerate(row.cells):
            tc = cell._tc
            down = tc.get("vMerge") in ("1", "true") and tc.get("hMerge") not in ("1", "true")
            if down:
                cells.append(above[column] if column < len(above) else "")
            elif cell.is_spanned:
                cells.append("")
            else:
                cells.append(" ".join(cell.text.split()))
        above = cells
        if any(cells):
            lines.append(CELL_SEPARATOR.join(cells))
    return (lines[0], lines[1:]) if lines else ("", [])


def _core_title(presentation: pptx.presentation.Presentation) -> str:
    try:
        return presentation.core_properties.title or ""
    # A damaged docProps/core.xml is only metadata lost; python-pptx raises what its XML layer hit.
    except Exception:
        return ""
