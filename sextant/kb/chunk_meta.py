"""What every stored chunk carries for citations and indexing: one typed record, written and read here only.

Chroma metadata holds only scalars, so the lists (the pages a chunk spans, a table chunk's rows) are stored
as comma-joined strings and a missing page as absent keys; ``to_chroma`` and ``from_chroma`` are the only
code that knows this, and ``from_chroma(to_chroma(m)) == m``. Reading is lenient where older stores are:
a chunk written before a field existed reads as that field's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from sextant.kb.chunking import Chunk
from sextant.kb.documents import PageUnit
from sextant.kb.stored import DocumentRecord

Kind = Literal["text", "table", "overview"]


@dataclass(frozen=True, slots=True)
class ChunkMeta:
    """A chunk's document, place and kind, as stored beside its text."""

    doc_id: str
    title: str
    source: str = ""
    category: str = ""
    index: int = 0
    start: int = 0
    end: int = 0
    kind: Kind = "text"
    prefix_chars: int = 0
    section: str = ""
    pages: tuple[int, ...] = ()
    rows: tuple[int, ...] = ()
    page: int | None = None
    page_label: str | None = None
    page_unit: PageUnit = "page"
    anchor: str = ""
    # A digest of the exact text the vector was embedded from, so a later version (or a renamed file)
    # reuses the vector only for the same text, whatever the title, section or indexing policy then.
    dense_key: str = ""

    @classmethod
    def of_chunk(cls, record: DocumentRecord, chunk: Chunk) -> ChunkMeta:
        """The metadata of one chunk of ``record``'s version."""
        return replace(
            cls.of_document(record),
            index=chunk.index,
            start=chunk.start,
            end=chunk.end,
            kind=chunk.kind,
            prefix_chars=len(chunk.prefix),
            section=chunk.section,
            pages=tuple(chunk.pages),
            rows=tuple(chunk.rows),
            page=chunk.page.number if chunk.page is not None else None,
            page_label=chunk.page.label if chunk.page is not None else None,
            page_unit=chunk.page.unit if chunk.page is not None else "page",
            anchor=chunk.anchor,
        )

    @classmethod
    def of_overview(cls, record: DocumentRecord) -> ChunkMeta:
        """The metadata of ``record``'s overview chunk: cited to the whole document."""
        return replace(cls.of_document(record), index=-1, kind="overview")

    @classmethod
    def of_document(cls, record: DocumentRecord) -> ChunkMeta:
        """What every chunk of a document carries about the document."""
        return cls(doc_id=record.id, title=record.title, source=record.source, category=record.category)

    def to_chroma(self) -> dict[str, str | int]:
        meta: dict[str, str | int] = {
            "doc_id": self.doc_id,
            "title": self.title,
            "source": self.source,
            "category": self.category,
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "kind": self.kind,
            "prefix_chars": self.prefix_chars,
            "section": self.section,
            "pages": ",".join(str(p) for p in self.pages),
            "rows": ",".join(str(r) for r in self.rows),
        }
        if self.page is not None:
            meta["page"] = self.page
        if self.page_label is not None:
            meta["page_label"] = self.page_label
        if self.dense_key:
            meta["dense_key"] = self.dense_key
        if self.page_unit != "page":
            meta["page_unit"] = self.page_unit
        if self.anchor:
            meta["anchor"] = self.anchor
        return meta

    @classmethod
    def from_chroma(cls, meta: Mapping[str, Any]) -> ChunkMeta:
        doc_id = str(meta["doc_id"])
        kind = meta.get("kind")
        page = meta.get("page")
        return cls(
            doc_id=doc_id,
            title=str(meta.get("title", doc_id)),
            source=str(meta.get("source", "")),
            category=str(meta.get("category", "")),
            index=int(meta.get("index", 0)),
            start=int(meta["start"]),
            end=int(meta["end"]),
            kind=kind if kind in ("table", "overview") else "text",
            prefix_chars=int(meta.get("prefix_chars", 0)),
            section=str(meta.get("section") or ""),
            pages=_numbers(meta.get("pages")),
            rows=_numbers(meta.get("rows")),
            page=int(page) if page is not None else None,
            page_label=str(meta["page_label"]) if meta.get("page_label") is not None else None,
            dense_key=str(meta.get("dense_key") or ""),
            page_unit="slide" if meta.get("page_unit") == "slide" else "page",
            anchor=str(meta.get("anchor") or ""),
        )


def _numbers(joined: Any) -> tuple[int, ...]:
    return tuple(int(n) for n in str(joined or "").split(",") if n)
