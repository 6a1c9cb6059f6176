"""A slide deck as a document, for every slide format (.pptx, .odp): slide n is page n, labelled "n".

A format's loader reads each slide into a ``Slide`` (its title, its text blocks in reading order, its speaker
notes) and hands the list to ``deck``: a slide's title is a section over the slide, its notes follow its text
after a marked line, and a slide that could not be read keeps an empty page and is named in ``skipped_pages``,
so the numbering of the others is what the deck shows. A slide read without a part of it (its speaker notes, when
their own XML part is damaged) keeps the rest and is named there too, with what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sextant.kb.documents import LoadedDocument, LoadError, SkippedPage, TableSpan, join_pages
from sextant.kb.loaders.builder import Heading, TextBuilder, clean_title, close_sections, stem

NOTES_MARK = "Speaker notes:"
_PLACEHOLDER_TITLES = frozenset({"untitled", "title", "presentation", "powerpoint presentation", "slide 1"})


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph or heading; ``level`` is the heading's outline level, None for body text."""

    text: str
    level: int | None
    style: str


@dataclass(frozen=True, slots=True)
class Table:
    """A table as lines: the header (its first non-empty row) and the body rows."""

    header: str
    rows: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Slide:
    """One slide as read: its title, its text blocks in reading order and its speaker notes.

    ``left_out``: what of the slide could not be read and why (``"its speaker notes were left out: ..."``); the
    slide is named in the deck's ``skipped_pages`` with it, and the rest of the slide is kept.
    """

    title: str
    blocks: Sequence[Paragraph | Table] = field(default_factory=tuple)
    notes: str = ""
    left_out: str = ""


def slide_document(slide: Slide) -> LoadedDocument:
    """One slide's text: title first (a section over the whole slide), blocks, then the marked notes."""
    out = TextBuilder()
    headings: list[Heading] = []
    tables: list[TableSpan] = []
    if slide.title:
        start, _ = out.paragraph(slide.title)
        headings.append(Heading(start, clean_title(slide.title), 1))
    for block in slide.blocks:
        if isinstance(block, Table):
            tables.append(out.table(block.header, block.rows))
        else:
            out.paragraph(block.text)
    if slide.notes:
        out.paragraph(NOTES_MARK)
        out.append("\n" + slide.notes)
    text = out.text()
    return LoadedDocument(text=text, title="", sections=close_sections(headings, len(text)), tables=tuple(tables))


def deck(slides: Sequence[Slide | SkippedPage], title: str, name: str, what: str) -> LoadedDocument:
    """A deck's document: slide n is page n labelled "n"; a skipped slide keeps an empty page span. Both a skipped
    slide and a slide read in part (``Slide.left_out``) are named in ``skipped_pages``.

    Raises:
        LoadError: the deck has no slides, or no text on any readable slide (naming the unreadable ones).
    """
    if not slides:
        raise LoadError(name, f"empty: the {what} has no slides")
    parts = [
        (slide_document(s) if isinstance(s, Slide) else LoadedDocument(text="", title=""), n)
        for n, s in enumerate(slides, 1)
    ]
    skipped = tuple(
        s if isinstance(s, SkippedPage) else SkippedPage(n, str(n), s.left_out)
        for n, s in enumerate(slides, 1)
        if isinstance(s, SkippedPage) or s.left_out
    )
    read = [s for s in slides if isinstance(s, Slide)]
    first_title = next((s.title for s in read if s.title), "")
    first_line = next((b.text.split("\n", 1)[0] for s in read for b in s.blocks if isinstance(b, Paragraph)), "")
    title = "" if clean_title(title).lower() in _PLACEHOLDER_TITLES else clean_title(title)
    document = join_pages(
        parts, title or clean_title(first_title) or clean_title(first_line) or stem(name), unit="slide"
    )
    if not document.text.strip():
        if skipped:
            named = "; ".join(f"slide {s.label}: {s.reason}" for s in skipped[:5])
            lead = "no slide could be read" if len(read) < len(slides) else "no text could be read"
            raise LoadError(name, f"{lead}: {named}; repair or re-save the file and add it again")
        raise LoadError(name, f"empty: the {what} has no text on its slides or in its notes")
    return replace(document, skipped_pages=skipped)
