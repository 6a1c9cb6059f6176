"""What a loader hands the knowledge base: a document's text and the spans that cite into it.

Every span is a half-open character range ``[start, end)`` into ``LoadedDocument.text``, so a
citation can always be turned back into the exact passage it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal


class LoadError(Exception):
    """A file cannot be loaded; ``reason`` says why in words a person can act on."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


PageUnit = Literal["page", "slide"]


@dataclass(frozen=True, slots=True)
class PageSpan:
    """A page: its physical number (1-based) and the label printed on it (``iv``, ``T-1``, ``12``); ``unit`` is
    what a citation calls it (a deck's pages are slides)."""

    start: int
    end: int
    number: int
    label: str
    unit: PageUnit = "page"


@dataclass(frozen=True, slots=True)
class SectionSpan:
    """A section, from its heading to the next heading of the same or a higher level.

    ``anchor``: where a link can point at the heading, for a citation's ``#fragment``; "" when the format
    has none. In HTML the fragment id (no ``#``); in an EPUB the chapter's path in the package, with
    ``#id`` when the heading has one (``text/ch01.xhtml#rules``).
    """

    start: int
    end: int
    title: str
    level: int = 1
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class RowSpan:
    """One body row of a table (the header row is not a row here)."""

    start: int
    end: int
    index: int


@dataclass(frozen=True, slots=True)
class TableSpan:
    """A table: ``caption`` and ``header`` are repeated as context above every chunk of its rows."""

    start: int
    end: int
    rows: tuple[RowSpan, ...]
    header: str = ""
    caption: str = ""


@dataclass(frozen=True, slots=True)
class SkippedPage:
    """A page left out of a document's text because it could not be read; ``reason`` says why."""

    number: int
    label: str
    reason: str


@dataclass(frozen=True, slots=True)
class OcrPage:
    """A page read by OCR, and how sure Tesseract was of it (mean word confidence, 0-100): what a user is told."""

    number: int
    label: str
    confidence: float
    words: int


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A document's text with its page, section and table spans, each sorted by ``start``.

    ``skipped_pages``: the pages that could not be read; each keeps an empty span in ``pages``, so the
    numbering of the rest is unchanged.
    ``ocr_pages``: the pages read by OCR, with Tesseract's confidence in each.
    """

    text: str
    title: str
    pages: tuple[PageSpan, ...] = field(default_factory=tuple)
    sections: tuple[SectionSpan, ...] = field(default_factory=tuple)
    tables: tuple[TableSpan, ...] = field(default_factory=tuple)
    skipped_pages: tuple[SkippedPage, ...] = field(default_factory=tuple)
    ocr_pages: tuple[OcrPage, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        n = len(self.text)
        spans: tuple[PageSpan | SectionSpan | TableSpan, ...] = (*self.pages, *self.sections, *self.tables)
        for span in spans:
            if not 0 <= span.start <= span.end <= n:
                raise ValueError(f"span {span!r} lies outside the text (length {n})")
        for table in self.tables:
            for row in table.rows:
                if not table.start <= row.start <= row.end <= table.end:
                    raise ValueError(f"row {row!r} lies outside its table {table.start}-{table.end}")

    def page_at(self, offset: int) -> PageSpan | None:
        """The page holding character ``offset``, or None for a document without pages."""
        for page in self.pages:
            if page.start <= offset < page.end:
                return page
        return self.pages[-1] if self.pages and offset >= self.pages[-1].end else None

    def section_at(self, offset: int) -> SectionSpan | None:
        """The innermost section holding character ``offset``."""
        best: SectionSpan | None = None
        for section in self.sections:
            if section.start <= offset < section.end and (best is None or section.level >= best.level):
                best = section
        return best


@dataclass(frozen=True, slots=True)
class ContainedFile:
    """A file found inside a container (a message's attachment, a mailbox's message), to be loaded by the loader
    its ``name``'s suffix picks.

    ``key`` is stable across re-ingests of the same container; ``title`` is the title the loaded
    document should carry in place of the one its loader found. ``loaded``: the file already read, where reading
    the container read it (a mailbox's message is rendered to find its attachments), so it is not parsed again.
    """

    key: str
    name: str
    data: bytes
    title: str
    loaded: LoadedDocument | None = None


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """Something in a container that was left out, and why."""

    key: str
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unpacked:
    """What ``unpack`` found: the files to load and the parts it left out."""

    files: tuple[ContainedFile, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()


def join_pages(
    parts: Sequence[tuple[LoadedDocument, int | None]], title: str, unit: PageUnit = "page"
) -> LoadedDocument:
    """One document from parts given in page order, each part a page when its number is given.

    Parts are separated by a blank line; every span is shifted to its place in the joined text.
    """
    text = ""
    pages: list[PageSpan] = []
    sections: list[SectionSpan] = []
    tables: list[TableSpan] = []
    for part, number in parts:
        if text:
            text += "\n\n"
        at = len(text)
        text += part.text
        if number is not None:
            pages.append(PageSpan(start=at, end=len(text), number=number, label=str(number), unit=unit))
        sections.extend(replace(s, start=s.start + at, end=s.end + at) for s in part.sections)
        tables.extend(
            replace(
                t,
                start=t.start + at,
                end=t.end + at,
                rows=tuple(replace(r, start=r.start + at, end=r.end + at) for r in t.rows),
            )
            for t in part.tables
        )
    return LoadedDocument(text=text, title=title, pages=tuple(pages), sections=tuple(sections), tables=tuple(tables))
