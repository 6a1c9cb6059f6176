"""What the store holds: a document's record, a chunk as read back, the chunks of a document ready to write, what
its write did, and how a record is written as Chroma metadata and read back."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.documents import PageSpan, SectionSpan

OVERVIEW = "overview"


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """What the store knows about one document."""

    id: str
    title: str
    source: str
    category: str
    content_hash: str
    chunk_count: int
    chars: int
    about: str
    ingested_at: str
    text: str = ""
    pages: tuple[PageSpan, ...] = ()
    sections: tuple[SectionSpan, ...] = ()
    overview: str = ""
    file_hash: str = ""  # SHA-256 of the file's bytes, for a document read from disk: what sync compares

    @property
    def version(self) -> str:
        """Names this version of the content; a change of content is a new version."""
        return self.content_hash[:12]

    def chunk_ids(self) -> list[str]:
        ids = [chunk_id(self.id, self.content_hash, i) for i in range(self.chunk_count)]
        return [*ids, self.overview_id()] if self.overview else ids

    def overview_id(self) -> str:
        """The overview's chunk id carries the content hash, so a new version never inherits the old overview."""
        return chunk_id(self.id, self.content_hash, OVERVIEW)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as read back: text, citation metadata and (when asked for) its vector."""

    id: str
    text: str
    meta: dict[str, Any]
    vector: npt.NDArray[np.float32] | None = None

    @property
    def doc_id(self) -> str:
        return str(self.meta["doc_id"])


@dataclass(slots=True)
class ChunkBatch:
    """The chunks of one document, ready to write."""

    texts: list[str] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)
    vectors: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))


@dataclass(frozen=True, slots=True)
class Written:
    """What a write of documents did: the store generation it left, the chunk ids of the versions it replaced, and
    the ids of the documents that had one."""

    generation: int
    replaced: tuple[str, ...]
    existed: frozenset[str] = frozenset()


def chunk_id(doc_id: str, content_hash: str, index: int | str) -> str:
    """Chunk ids carry the content hash, so a re-ingest never overwrites the live version in place.

    Only URI-unreserved characters, so an id can stand in ``kb://chunks/{id}`` as it is.
    """
    return f"{doc_id}~{content_hash[:12]}~{index}"


def record_meta(record: DocumentRecord) -> dict[str, Any]:
    """``record`` as the metadata of its entry in the documents collection."""
    return {
        "title": record.title,
        "source": record.source,
        "category": record.category,
        "content_hash": record.content_hash,
        "chunk_count": record.chunk_count,
        "chars": record.chars,
        "about": record.about,
        "ingested_at": record.ingested_at,
        "page_count": len(record.pages),
        "pages": json.dumps([asdict(p) for p in record.pages]),
        "sections": json.dumps([asdict(s) for s in record.sections]),
        "overview": record.overview,
        "file_hash": record.file_hash,
    }


def record_from(doc_id: str, meta: dict[str, Any], text: str) -> DocumentRecord:
    """The record that ``record_meta`` wrote (``text``: the document's text, where it was read too)."""
    return DocumentRecord(
        id=doc_id,
        title=str(meta.get("title", doc_id)),
        source=str(meta.get("source", "")),
        category=str(meta.get("category", "")),
        content_hash=str(meta["content_hash"]),
        chunk_count=int(meta["chunk_count"]),
        chars=int(meta.get("chars", 0)),
        about=str(meta.get("about", "")),
        ingested_at=str(meta.get("ingested_at", "")),
        text=text,
        pages=tuple(PageSpan(**p) for p in json.loads(meta.get("pages") or "[]")),
        sections=tuple(SectionSpan(**s) for s in json.loads(meta.get("sections") or "[]")),
        overview=str(meta.get("overview") or ""),
        file_hash=str(meta.get("file_hash") or ""),
    )
