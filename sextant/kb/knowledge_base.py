"""Orchestration: ingest, search, list, read and forget, over one store and the indexes derived from it."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import numpy as np

from sextant.contract.results import (
    DocumentInfo,
    IngestOutcome,
    OcrPageInfo,
    RerankerInfo,
    SearchResult,
    SkippedPageInfo,
    Stats,
)
from sextant.kb.chunk_meta import ChunkMeta
from sextant.kb.chunking import ChunkingConfig, chunk_document
from sextant.kb.content_hash import content_hash, dense_key
from sextant.kb.derived_indexes import FETCH_BATCH, DerivedIndexes, lexical_dir, lock_folder
from sextant.kb.document_ids import container_source, is_container, validate_document_id
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder, load_embedder, load_query_encoder
from sextant.kb.follow_migration import following_migrations
from sextant.kb.indexing import DEFAULT_POLICY, IndexingPolicy, index_text
from sextant.kb.lexical import LexicalIndex
from sextant.kb.loader_sandbox import too_many_chars_reason
from sextant.kb.originals import Originals, is_pdf
from sextant.kb.refusal import KnowledgeBaseError, refused
from sextant.kb.rerank import Reranker
from sextant.kb.search import Searcher
from sextant.kb.store import ChunkStore, StoreError
from sextant.kb.store_journal import JournalEntry, StoreJournal
from sextant.kb.store_lock import StoreLock
from sextant.kb.stored import ChunkBatch, DocumentRecord, StoredChunk
from sextant.settings import KbSettings

log = logging.getLogger(__name__)

EMBED_BATCH = 32
GROUP_CHUNKS = 2000  # chunks written together by ``ingest_many``

Progress = Callable[[int, int, str], None]
"""``progress(done, total, message)``: called as a document's chunks are embedded."""


class KnowledgeBase:
    """One knowledge base: its embedder, store, derived indexes (BM25, ANN) and reranker."""

    def __init__(
        self,
        settings: KbSettings,
        embedder: Embedder,
        store: ChunkStore,
        lexical: LexicalIndex,
        reranker: Reranker,
        policy: IndexingPolicy = DEFAULT_POLICY,
        query_encoder: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self.policy = policy
        self.reranker = reranker
        self.chunking = ChunkingConfig(target=settings.chunk_tokens)
        self.originals = Originals.of_store(settings.store_dir())
        self.location = settings.chroma_url or str(settings.store_dir())  # what kb_stats and an empty search name
        self.bind(embedder, store, lexical, query_encoder)

    def bind(
        self, embedder: Embedder, store: ChunkStore, lexical: LexicalIndex, query_encoder: Embedder | None = None
    ) -> None:
        """Use these parts, which belong to one store and its embedder: at open, and again when a migration
        moves the store to another embedder (``follow_migration``)."""
        self.embedder = embedder
        self.store = store
        self.lexical = lexical
        self.indexes = DerivedIndexes.for_settings(self.settings, store, lexical, self.policy, embedder)
        self.ann = self.indexes.ann  # None: Chroma's own index serves dense retrieval
        self.searcher = Searcher(
            query_encoder or embedder,
            store,
            lexical,
            self.reranker,
            max_per_document=self.settings.max_per_document,
            weights=self.settings.fusion_weights(),
            rerank_fusion=self.settings.rerank_fusion,
            rerank_candidates=self.settings.rerank_candidates,
            feedback=self.settings.dense_feedback,
            fusion=self.settings.fusion,
            ann=self.ann,
            refresh=self.indexes.refresh_before_search,
            location=self.location,
        )

    @following_migrations
    def search(self, query: str, k: int = 5, **options: Any) -> SearchResult:
        """``Searcher.search``: rank passages for ``query`` (``options`` are its keyword arguments).

        Raises:
            KnowledgeBaseError: the query is empty, or ``mode`` is ``rerank`` but no cross-encoder is loaded.
        """
        return self.searcher.search(query, k, **options)

    @classmethod
    def open(
        cls,
        settings: KbSettings,
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        policy: IndexingPolicy = DEFAULT_POLICY,
    ) -> KnowledgeBase:
        """Load the models and open the store named by ``settings``.

        Raises:
            KnowledgeBaseError: the chunk size does not fit the embedder's window.
            EmbedderError: a model cannot be loaded, or the query encoder was made for another embedder.
            StoreError: the store cannot be opened or was built with another embedder.
        """
        embedder = embedder or load_embedder(settings.embedder, settings.threads, settings.embed_precision)
        query_encoder = (
            load_query_encoder(settings.query_encoder, embedder, settings.threads, settings.embed_precision)
            if settings.query_encoder
            else None
        )
        if settings.chunk_tokens > embedder.max_tokens:
            raise KnowledgeBaseError(
                f"SEXTANT_CHUNK_TOKENS={settings.chunk_tokens} exceeds the window of embedder "
                f"{embedder.name!r} ({embedder.max_tokens} tokens); choose {embedder.max_tokens} or fewer"
            )
        if settings.ann_index.startswith("ivfpq") and embedder.dim % settings.ann_pq_m:
            raise KnowledgeBaseError(
                f"SEXTANT_ANN_PQ_M={settings.ann_pq_m} does not divide the embedder's dimension {embedder.dim}; "
                "choose a divisor of it"
            )
        reranker = reranker or Reranker(
            settings.reranker, threads=settings.threads, precision=settings.rerank_precision
        )
        # Under the lock other processes on this store write under: none is half-way through a write while the
        # store is opened and repaired, or while the BM25 cache is read.
        lock = StoreLock.for_folder(lock_folder(settings))
        with lock.exclusive():
            store = ChunkStore.for_settings(settings, embedder.name, embedder.dim)
            _repair_unless_clean(store, lock)
            lexical = LexicalIndex.open(lexical_dir(settings))
            return cls(settings, embedder, store, lexical, reranker, policy, query_encoder)

    def close(self) -> None:
        """Release the store once the current write (if any) has finished; the knowledge base cannot be used
        afterwards."""
        with self.indexes.shared.exclusive():
            self.indexes.save_followed()
            self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing --------------------------------------------------------------------------

    @following_migrations
    def ingest(
        self,
        doc_id: str,
        doc: LoadedDocument,
        *,
        source: str = "",
        category: str = "",
        progress: Progress | None = None,
        original: bytes | None = None,
        file_hash: str = "",
        reuse_vectors_of: str | None = None,
    ) -> IngestOutcome:
        """Chunk, embed and store one document, replacing any earlier version with that id.

        ``original``: the file's bytes. A PDF's are kept beside the store for page images (``page_image``);
        a version stored without them loses the earlier version's. ``file_hash``: the SHA-256 of the file read
        from disk, recorded for sync. A chunk whose indexed text was embedded for the earlier version, or for
        the document ``reuse_vectors_of`` (a renamed file's old id), keeps that vector instead of being embedded
        again.

        Raises:
            KnowledgeBaseError: the id is invalid, the document has no text, or it is over
                SEXTANT_MAX_DOCUMENT_CHARS or SEXTANT_MAX_CHUNKS_PER_DOCUMENT (checked before anything is written).
            StoreError: the store refused the write; the earlier version is intact.
        """
        item = ToIngest(doc_id, doc, source, category, original, file_hash)
        staged = self._stage(item, reuse_vectors_of=reuse_vectors_of)
        if isinstance(staged, IngestOutcome):
            return staged
        self._embed([staged], progress)
        return self._write([staged])[0]

    def ingest_many(
        self, items: Iterable[ToIngest], *, group_chunks: int = GROUP_CHUNKS, progress: Progress | None = None
    ) -> Iterator[IngestOutcome]:
        """``ingest`` each item, in groups of about ``group_chunks`` chunks: the group's chunks embedded together (a
        remote embedder's requests full, learning/embedders.md) and written as one store write, one generation and
        one journal entry rather than one per document (learning/scale.md). Yields one outcome per item, in order,
        each group's once it is written; an id met again waits for the next group. A document refused (as
        ``ingest`` would raise ``KnowledgeBaseError``) or in a group the store refused (``StoreError``: each of its
        documents is as it was) is a refused outcome, and the rest goes on. ``progress`` hears of each group's
        embedding.

        Raises:
            EmbedderError: the embedder failed; the groups before are written.
            StoreMigrated: the store was migrated to another embedder meanwhile (not followed in a bulk load).
        """
        pending: list[_Staged | IngestOutcome] = []
        chunks = 0
        for item in items:
            if any(isinstance(p, _Staged) and p.record.id == item.id for p in pending):
                yield from self._write_pending(pending, progress)
                pending, chunks = [], 0
            try:
                staged = self._stage(item)
            except KnowledgeBaseError as exc:
                staged = refused(item.id, exc, title=item.doc.title)
            pending.append(staged)
            chunks += staged.record.chunk_count if isinstance(staged, _Staged) else 0
            if chunks >= group_chunks:
                yield from self._write_pending(pending, progress)
                pending, chunks = [], 0
        yield from self._write_pending(pending, progress)

    def _write_pending(self, pending: list[_Staged | IngestOutcome], progress: Progress | None) -> list[IngestOutcome]:
        """Embed and write the staged documents of ``pending`` as one write; every outcome, in order."""
        staged = [p for p in pending if isinstance(p, _Staged)]
        written: list[IngestOutcome] = []
        if staged:
            self._embed(staged, progress)
            try:
                written = self._write(staged)
            except StoreError as exc:
                written = [refused(s.record.id, exc, title=s.record.title) for s in staged]
        done = iter(written)
        return [next(done) if isinstance(p, _Staged) else p for p in pending]

    def _stage(self, item: ToIngest, *, reuse_vectors_of: str | None = None) -> _Staged | IngestOutcome:
        """A document chunked, its reusable vectors found; or the outcome of one already stored as it is."""
        doc_id, doc, source, category = item.id, item.doc, item.source, item.category
        original, file_hash = item.original, item.file_hash
        validate_document_id(doc_id)
        if not doc.text.strip():
            raise KnowledgeBaseError(f"{doc_id}: the document has no text to index")
        if len(doc.text) > (limit := self.settings.max_document_chars):
            raise KnowledgeBaseError(f"{doc_id}: {too_many_chars_reason(len(doc.text), limit)}")
        hashed = content_hash(
            doc, source, category, file_hash, chunking=self.chunking, embedder=self.embedder.name, policy=self.policy
        )
        previous = self.store.get_document(doc_id)
        kept = original if original is not None and is_pdf(original) else None
        if previous is not None and previous.content_hash == hashed:
            if kept is not None and self.originals.get(doc_id) is None:  # stored before originals were kept
                with self.indexes.writing():
                    self._replace_original(doc_id, kept)
            return IngestOutcome(
                id=doc_id,
                status="unchanged",
                chunks=previous.chunk_count,
                pages=len(doc.pages),
                title=previous.title,
                version=previous.version,
                skipped_pages=_skipped(doc),
                ocr_pages=_ocr(doc),
            )

        chunks = chunk_document(doc, self.embedder, self.chunking)
        if len(chunks) > self.settings.max_chunks_per_document:
            raise KnowledgeBaseError(
                f"{doc_id}: it makes {len(chunks):,} chunks, more than "
                f"SEXTANT_MAX_CHUNKS_PER_DOCUMENT={self.settings.max_chunks_per_document}; split it, or raise the limit"
            )
        record = DocumentRecord(
            id=doc_id,
            title=doc.title,
            source=source,
            category=category,
            content_hash=hashed,
            chunk_count=len(chunks),
            chars=len(doc.text),
            about=_about(doc),
            ingested_at=datetime.now(UTC).isoformat(timespec="seconds"),
            text=doc.text,
            pages=doc.pages,
            sections=doc.sections,
            file_hash=file_hash,
        )
        plain = [ChunkMeta.of_chunk(record, c) for c in chunks]
        dense_texts = [
            index_text(c.text, m.to_chroma(), self.policy.dense_context) for c, m in zip(chunks, plain, strict=True)
        ]
        metas = [dataclasses.replace(m, dense_key=dense_key(d)) for m, d in zip(plain, dense_texts, strict=True)]
        # An update names its own id here: read it once, or its chunk ids reach the store twice in one get.
        other = self.store.get_document(reuse_vectors_of) if reuse_vectors_of not in (None, doc_id) else None
        reusable = [r for r in (previous, other) if r is not None]
        known = self._stored_vectors(reusable)
        vectors = np.zeros((len(chunks), self.embedder.dim), np.float32)
        for i, meta in enumerate(metas):
            if meta.dense_key in known:
                vectors[i] = known[meta.dense_key]
        missing = tuple((i, dense_texts[i]) for i, meta in enumerate(metas) if meta.dense_key not in known)
        batch = ChunkBatch(texts=[c.text for c in chunks], metas=[m.to_chroma() for m in metas], vectors=vectors)
        added = [
            StoredChunk(cid, text, meta)
            for cid, text, meta in zip(record.chunk_ids(), batch.texts, batch.metas, strict=True)
        ]
        return _Staged(record, batch, added, kept, doc, missing)

    def _embed(self, staged: Sequence[_Staged], progress: Progress | None = None) -> None:
        """Fill in the vectors the staged documents still lack, ``EMBED_BATCH`` texts a call across documents
        (a remote embedder pays a round trip per call, learning/embedders.md)."""
        wanted = [(s.batch.vectors, i, text) for s in staged for i, text in s.missing]
        for lo in range(0, len(wanted), EMBED_BATCH):
            part = wanted[lo : lo + EMBED_BATCH]
            for (vectors, i, _), vector in zip(part, self.embedder.embed([text for *_, text in part]), strict=True):
                vectors[i] = vector
            if progress:
                what = staged[0].record.id if len(staged) == 1 else f"{len(staged)} documents"
                progress(min(lo + EMBED_BATCH, len(wanted)), len(wanted), f"embedding {what}")

    def _write(self, staged: list[_Staged]) -> list[IngestOutcome]:
        """Store the staged documents as one write (``ChunkStore.write_documents``); their outcomes, in order."""
        with self.indexes.writing():
            written = self.store.write_documents([(s.record, s.batch) for s in staged])
            added = [chunk for s in staged for chunk in s.added]
            vectors = np.concatenate([s.batch.vectors for s in staged])
            self.indexes.commit(written.generation, written.replaced, added, vectors)
            for s in staged:
                self._replace_original(s.record.id, s.original)
        return [
            IngestOutcome(
                id=s.record.id,
                status="replaced" if s.record.id in written.existed else "added",
                chunks=s.record.chunk_count,
                pages=len(s.doc.pages),
                title=s.record.title,
                version=s.record.version,
                skipped_pages=_skipped(s.doc),
                ocr_pages=_ocr(s.doc),
                embedded=len(s.missing),
            )
            for s in staged
        ]

    def _stored_vectors(self, records: list[DocumentRecord]) -> dict[str, np.ndarray]:
        """The stored vector of each chunk of ``records``, by the key of the text it was embedded from."""
        ids = [cid for record in records for cid in record.chunk_ids()]
        known: dict[str, np.ndarray] = {}
        for lo in range(0, len(ids), FETCH_BATCH):
            # With an ANN index, its vectors: Chroma's segments here may not hold another process's latest write.
            for chunk in self.indexes.chunks.get(ids[lo : lo + FETCH_BATCH], vectors=True):
                key = ChunkMeta.from_chroma(chunk.meta).dense_key  # empty on chunks stored before vectors were reused
                if key and chunk.vector is not None:
                    known[key] = chunk.vector
        return known

    @following_migrations
    def set_overview(self, doc_id: str, overview: str, *, version: str | None = None) -> DocumentInfo:
        """Store (or replace) a document's overview: one extra chunk, searched like the others, cited to the document.

        The overview belongs to one version of the content: re-ingesting changed content drops it.

        Raises:
            KnowledgeBaseError: no such document, an empty overview, or ``version`` is no longer the document's.
            StoreError: the store refused the write; the document is as it was.
        """
        text = " ".join(overview.split())
        if not text:
            raise KnowledgeBaseError("the overview is empty")
        with self.indexes.writing():
            record = self.store.get_document(doc_id)
            if record is None:
                raise KnowledgeBaseError(f"no document with id {doc_id!r}; kb_list shows the ids")
            if version is not None and version != record.version:
                raise KnowledgeBaseError(
                    f"{doc_id!r} has changed since version {version!r} (now {record.version!r}); "
                    "write the overview from the current content"
                )
            meta = ChunkMeta.of_overview(record).to_chroma()
            vector = self.embedder.embed([index_text(text, meta, self.policy.dense_context)])[0]
            generation = self.store.write_overview(record, text, meta, vector)
            cid = record.overview_id()  # a chunk like the others, for both retrievers
            self.indexes.commit(
                generation, [cid] if record.overview else [], [StoredChunk(cid, text, meta)], vector[None, :]
            )
        return _info(dataclasses.replace(record, overview=text))

    @following_migrations
    def forget(self, doc_id: str) -> int:
        """Remove a document and its chunks from the store and the BM25 index, and the documents stored from
        inside it (a mailbox's messages, a message's attachments); returns chunks removed.

        Raises:
            KnowledgeBaseError: there is no document with that id.
        """
        with self.indexes.writing():
            record = self.store.get_document(doc_id)
            if record is None:
                raise KnowledgeBaseError(f"no document with id {doc_id!r}; `sextant-forget --list` shows the ids")
            removed = self.store.delete_document(doc_id)
            self.indexes.commit(self.store.generation, removed)
            self._replace_original(doc_id, None)
            parts = self.parts_of(record.source) if is_container(record.source) else []
        count = len(removed)
        for part in parts:
            with contextlib.suppress(KnowledgeBaseError):  # removed meanwhile by another process: as wanted
                count += self.forget(part)
        return count

    def parts_of(self, source: str) -> list[str]:
        """The ids of the documents stored from inside the container whose source is ``source``."""
        return [r.id for r in self.store.list_documents() if container_source(r.source) == source]

    def _replace_original(self, doc_id: str, data: bytes | None) -> None:
        """After the store's commit: keep this version's original PDF, or none. A failed write removes the earlier
        version's too (it would show another version's pages); the document itself is stored either way."""
        try:
            if data is not None:
                self.originals.keep(doc_id, data)
                return
        except OSError as exc:
            log.warning("%s: the original PDF was not kept, so its pages cannot be shown as images: %s", doc_id, exc)
        try:
            self.originals.remove(doc_id)
        except OSError as exc:
            log.warning("%s: an earlier version's original could not be removed: %s", doc_id, exc)

    def batch(self) -> AbstractContextManager[None]:
        """Ingest many documents with one save of the derived indexes at the end instead of one per document.

        Safe on a crash: the saved indexes are then behind the store and are rebuilt at the next open.
        """
        return self.indexes.batch()

    @following_migrations
    def refresh(self, *, full: bool = False) -> bool:
        """Bring the derived indexes up to the store's changes by other clients (``DerivedIndexes.refresh``)."""
        return self.indexes.refresh(full=full)

    @following_migrations
    def chunk_vectors(self, batch: int = 1000) -> tuple[list[str], np.ndarray]:
        """Every chunk id in the store and its vector (rows in the same order)."""
        return self.indexes.chunk_vectors(batch)

    # --- reading --------------------------------------------------------------------------

    @following_migrations
    def documents(self) -> list[DocumentInfo]:
        return [_info(r) for r in self.store.list_documents()]

    @following_migrations
    def document(self, doc_id: str) -> DocumentRecord:
        """A document with its full text.

        Raises:
            KnowledgeBaseError: no such document.
        """
        record = self.store.get_document(doc_id, with_text=True)
        if record is None:
            raise KnowledgeBaseError(f"no document with id {doc_id!r}; kb_list shows the ids")
        return record

    @following_migrations
    def page_text(self, doc_id: str, number: int) -> str:
        """The text of physical page ``number`` (1-based) of a document.

        Raises:
            KnowledgeBaseError: no such document or page.
        """
        record = self.document(doc_id)
        for page in record.pages:
            if page.number == number:
                return record.text[page.start : page.end]
        raise KnowledgeBaseError(f"{doc_id!r} has no page {number} (it has {len(record.pages)} pages)")

    @following_migrations
    def chunk(self, chunk_id: str) -> StoredChunk:
        """One chunk by id.

        Raises:
            KnowledgeBaseError: no such chunk (it may belong to a replaced version).
        """
        found = self.indexes.chunks.get([chunk_id])
        if not found:
            raise KnowledgeBaseError(f"no chunk with id {chunk_id!r}; it may belong to a replaced document")
        return found[0]

    @following_migrations
    def stats(self) -> Stats:
        state = self.reranker.state
        return Stats(
            documents=self.store.document_count(),
            chunks=self.indexes.chunk_count(),
            embedder=self.embedder.name,
            embedder_runtime=f"{self.embedder.runtime} {self.embedder.precision}",
            query_encoder=self.searcher.embedder.name if self.searcher.embedder is not self.embedder else None,
            dimension=self.embedder.dim,
            chunk_tokens=self.chunking.target,
            fusion=self.searcher.fusion,
            dense_weight=self.searcher.weights[0],
            dense_feedback=self.searcher.feedback,
            max_per_document=self.settings.max_per_document,
            reranker=RerankerInfo(name=state.name, active=state.active, detail=state.detail),
            store=self.location,
            lexical_chunks=len(self.lexical),
            followed_writes=self.indexes.followed,
            store_reloads=self.store.reloads,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class ToIngest:
    """One document for ``ingest_many``, with what ``ingest`` takes beside it."""

    id: str
    doc: LoadedDocument
    source: str = ""
    category: str = ""
    original: bytes | None = None  # the file's bytes: a PDF's are kept for page images
    file_hash: str = ""  # SHA-256 of the file read from disk, for sync


@dataclasses.dataclass(frozen=True, slots=True)
class _Staged:
    """A document chunked, not yet embedded and written: its record, chunks and what its outcome reports."""

    record: DocumentRecord
    batch: ChunkBatch
    added: list[StoredChunk]
    original: bytes | None  # a PDF's bytes, kept for page images
    doc: LoadedDocument
    missing: tuple[tuple[int, str], ...]  # the chunks to embed (row, text); the others keep an earlier vector


def _repair_unless_clean(store: ChunkStore, lock: StoreLock) -> None:
    """``store.repair()`` (a listing of every record) unless the journal shows that no write died half-way since
    the last repair; the caller holds ``lock``. A repair's own write says so to the journal, marked clean, and
    moves the change counter, so the others on the store drop the orphans it removed."""
    journal = StoreJournal(lock.folder)
    if journal.clean_at(lock.changes(), store.generation):
        return
    orphans = store.repair()
    journal.append(JournalEntry(lock.bump(), store.generation, tuple(orphans), (), clean=True))


def _about(doc: LoadedDocument, limit: int = 280) -> str:
    opening = " ".join(doc.text[:600].split())
    headings = [s.title for s in doc.sections[:6] if s.title and s.title != doc.title]
    about = opening[: limit - 2].rsplit(" ", 1)[0] + "…" if len(opening) > limit else opening
    return about + (f" Sections: {'; '.join(headings)}." if headings else "")


def _skipped(doc: LoadedDocument) -> list[SkippedPageInfo]:
    return [SkippedPageInfo(number=p.number, label=p.label, reason=p.reason) for p in doc.skipped_pages]


def _ocr(doc: LoadedDocument) -> list[OcrPageInfo]:
    return [OcrPageInfo(number=p.number, label=p.label, confidence=p.confidence, words=p.words) for p in doc.ocr_pages]


def _info(record: DocumentRecord) -> DocumentInfo:
    return DocumentInfo(
        id=record.id,
        title=record.title,
        source=record.source,
        category=record.category,
        chunks=record.chunk_count,
        chars=record.chars,
        pages=len(record.pages),
        about=record.about,
        overview=record.overview,
        ingested_at=record.ingested_at,
        uri=f"kb://documents/{record.id}",
    )
