"""What a loader hands the knowledge base: a document's text and the spans that cite into it.

Every span is a half-open character range ``[start, end)`` into ``LoadedDocument.text``, so a
citation can always be turned back into the exact passage it names.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class LoadError(Exception):
    """A file cannot be loaded; ``reason`` says why in words a person can act on."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PageSpan:
    """A page: its physical number (1-based) and the label printed on it (``iv``, ``T-1``, ``12``)."""

    start: int
    end: int
    number: int
    label: str


@dataclass(frozen=True, slots=True)
class SectionSpan:
    """A section, from its heading to the next heading of the same or a higher level."""

    start: int
    end: int
    title: str
    level: int = 1


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
class LoadedDocument:
    """A document's text with its page, section and table spans, each sorted by ``start``."""

    text: str
    title: str
    pages: tuple[PageSpan, ...] = field(default_factory=tuple)
    sections: tuple[SectionSpan, ...] = field(default_factory=tuple)
    tables: tuple[TableSpan, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        n = len(self.text)
        for span in (*self.pages, *self.sections, *self.tables):
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
