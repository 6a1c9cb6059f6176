"""The durable store: chunks and document records in ChromaDB, with our own vectors.

Two collections: ``sextant_chunks`` (one entry per chunk, cosine space) and ``sextant_documents``
(one record per document: its full text, spans and facts, embedded as the mean of its chunks); after a
``sextant-kb-migrate`` the pair has other names, which the store's manifest gives (``live_collections``).
Everything durable lives here, so the BM25 index beside it is a cache that can be rebuilt; but a store folder
created for Sextant's own index keeps the chunks' vectors in that index alone (``vectors_in_index``), and they are
rebuilt only by embedding the texts again.

A document is replaced without a window where it is missing: the new chunks are written under new
ids, then the document record (the commit point), then the old chunks are removed. A failure
before the commit removes what was written, so a half-ingested document never becomes visible.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import numpy as np
import numpy.typing as npt

from sextant.kb.chroma_client import StoreError, close_client, open_client
from sextant.kb.live_collections import Collections, read_manifest
from sextant.kb.reopen_gate import ReopenGate
from sextant.kb.stored import ChunkBatch, DocumentRecord, StoredChunk, Written, record_from, record_meta
from sextant.settings import KbSettings

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # the newest format read; 2: the chunks' vectors in Sextant's index alone (``CHUNK_VECTORS``)
# Chunk-collection metadata set on the pair a migration replaced: a process still holding it stops there.
MIGRATED_TO = "migrated_to"
DENSE_INDEX = "dense_index"  # the chunk metadata key: the kind of Sextant's index a store was created for
# Chroma's HNSW of such a store's chunks, and of every store's document records, is never searched, only written;
# built as cheaply as Chroma allows, its writes stop growing with the store (learning/scale.md, "Chroma's own HNSW,
# made cheap").
MINIMAL_HNSW = {"max_neighbors": 4, "ef_construction": 16}
# The chunk metadata key of a store folder created for Sextant's index: its value "index" says the chunks' vectors
# are kept there alone, Chroma's entries carrying a one-dimensional stand-in, so that a process writing to the
# store never loads a vector index of every chunk (1.6 GB at 1M chunks; learning/scale.md, "Vectors kept in
# Sextant's index alone").
CHUNK_VECTORS = "chunk_vectors"
STAND_IN = np.ones(1, np.float32)  # the vector of every chunk entry whose real vector is in Sextant's index
LISTING_PAGE = 10_000  # records read at once: SQLite refuses a statement with more than 32,766 variables


class StoreMigrated(StoreError):
    """``sextant-kb-migrate`` replaced this pair of collections while it was open: the store is now ``embedder``'s."""

    def __init__(self, embedder: str) -> None:
        super().__init__(
            f"this store was migrated to embedder {embedder!r} by sextant-kb-migrate while it was open; restart with "
            f"SEXTANT_EMBEDDER={embedder} (a write made just now may not have been kept: make it again)"
        )
        self.embedder = embedder


P = ParamSpec("P")
R = TypeVar("R")


def _store_call(method: Callable[Concatenate[ChunkStore, P], R]) -> Callable[Concatenate[ChunkStore, P], R]:
    """Run ``method`` inside the store's ``ReopenGate``; a collection that has disappeared is said to be migrated
    (``StoreMigrated``) or gone."""

    @functools.wraps(method)
    def inside(self: ChunkStore, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.gate.call():
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                from chromadb.errors import NotFoundError

                if isinstance(exc, NotFoundError):
                    raise self._gone() from exc
                raise

    return inside


class ChunkStore:
    """Chroma collections of one knowledge base, bound to one embedder."""

    def __init__(
        self,
        client: Any,
        embedder: str,
        dim: int,
        collections: Collections | None = None,
        *,
        reopen: Callable[[], Any] | None = None,
        own_index: str | None = None,
        vectors_in_index: bool = False,
    ) -> None:
        """Open (or create) the collections: ``collections``, else the live pair the manifest names.

        ``reopen``: makes a new client on the same store, for ``reload`` (None: the client is always current,
        as a Chroma server's is). ``own_index``: the kind of Sextant's index that serves dense search
        (``SEXTANT_ANN_INDEX``); a store created with one gives Chroma's vector index of its chunks the least
        work Chroma allows (never searched, only written: ``dense_index``). ``vectors_in_index``: with ``own_index``,
        a store created now keeps the chunks' vectors in that index alone (``vectors_in_index``).

        Raises:
            StoreError: the store was built with another embedder, or by a newer Sextant.
        """
        self._client = client
        self._reopen = reopen
        self.gate = ReopenGate()
        self.reloads = 0  # times ``reload`` reopened the client
        self._embedder = embedder
        self._dim = dim
        self.collections = collections or read_manifest(client).live
        minimal = {"hnsw": {"space": "cosine", **MINIMAL_HNSW}}
        meta: dict[str, Any] = {"embedder": embedder, "dim": dim, "format": 1, "generation": 0}
        chunk_space = minimal if own_index else {"hnsw": {"space": "cosine"}}
        if own_index:
            meta[DENSE_INDEX] = own_index
            if vectors_in_index:
                meta |= {CHUNK_VECTORS: "index", "format": FORMAT_VERSION}  # an older Sextant would read the stand-ins
        self._chunks = client.get_or_create_collection(
            self.collections.chunks, embedding_function=None, configuration=chunk_space, metadata=meta
        )  # the metadata only when created
        self._docs = client.get_or_create_collection(
            self.collections.documents,
            embedding_function=None,
            configuration=minimal,  # records are read by id, never searched
            metadata={"format": 1},
        )
        self._check_compatible()
        # Asked once: against a Chroma server every call is a round trip.
        self._batch_size = int(client.get_max_batch_size())

    @classmethod
    def open(
        cls,
        *,
        path: Path | None,
        url: str | None,
        embedder: str,
        dim: int,
        database: str | None = None,
        own_index: str | None = None,
    ) -> ChunkStore:
        """A persistent local store at ``path``, or a Chroma server at ``url``.

        ``database``: the database on the server (created when missing); None is the server's default one.
        ``own_index``: as for the constructor.

        Raises:
            StoreError: the server cannot be reached, or the store does not fit this embedder.
        """
        reopen = None if url else partial(open_client, path=path, url=None)
        client = open_client(path=path, url=url, database=database)
        # On a server every replica keeps an index of its own, built from the server's vectors.
        in_index = own_index is not None and url is None
        return cls(client, embedder, dim, reopen=reopen, own_index=own_index, vectors_in_index=in_index)

    @classmethod
    def for_settings(cls, settings: KbSettings, embedder: str, dim: int) -> ChunkStore:
        """The store ``settings`` name (a folder, or a server and database), for ``embedder``'s vectors.

        Raises:
            StoreError: the server cannot be reached, or the store does not fit this embedder.
        """
        url, database = settings.chroma_url, settings.chroma_database
        own = settings.ann_index if settings.ann_index != "chroma" else None
        return cls.open(
            path=settings.store_dir(), url=url, embedder=embedder, dim=dim, database=database, own_index=own
        )

    @classmethod
    def open_as_built(cls, client: Any, collections: Collections) -> ChunkStore:
        """The existing pair ``collections`` with the embedder it was built with, whatever that is.

        Raises:
            StoreError: there is no such pair.
        """
        from chromadb.errors import NotFoundError

        try:
            meta = client.get_collection(collections.chunks, embedding_function=None).metadata or {}
        except (NotFoundError, ValueError) as exc:
            raise StoreError(f"the store has no collection {collections.chunks!r}: nothing was ever stored") from exc
        return cls(client, str(meta.get("embedder")), int(meta.get("dim", 0)), collections)

    @property
    def dense_index(self) -> str | None:
        """The kind of Sextant's index this store was created for, its Chroma index minimal; None: complete."""
        value = (self._chunks.metadata or {}).get(DENSE_INDEX)
        return str(value) if value else None

    @property
    def vectors_in_index(self) -> bool:
        """The chunks' vectors are in Sextant's index alone; Chroma's chunk entries carry a stand-in (``STAND_IN``)."""
        return _keeps_vectors_in_index(self._chunks)

    def _chunk_vectors(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """What Chroma is given as the vectors of chunks whose real ``vectors`` (rows) these are."""
        return np.tile(STAND_IN, (len(vectors), 1)) if self.vectors_in_index else vectors

    @property
    def on_server(self) -> bool:
        """A Chroma server's store: its other writers may be on other machines, which no lock or journal here sees."""
        return self._reopen is None

    @property
    def embedder(self) -> str:
        """The name of the embedder whose vectors this store holds."""
        return self._embedder

    @property
    def dim(self) -> int:
        return self._dim

    def _check_compatible(self) -> None:
        meta = self._chunks.metadata or {}
        if int(meta.get("format", FORMAT_VERSION)) > FORMAT_VERSION:
            raise StoreError("this store was written by a newer Sextant; upgrade sextant-kb to read it")
        built_with, built_dim = meta.get("embedder"), meta.get("dim")
        if (built_with, built_dim) != (self._embedder, self._dim):
            raise StoreError(
                f"this store was built with embedder {built_with!r} (dimension {built_dim}), "
                f"not {self._embedder!r} (dimension {self._dim}). Set SEXTANT_EMBEDDER={built_with} "
                "to use it, or re-index: point SEXTANT_CHROMA_DIR at a new folder and run sextant-ingest "
                "on your documents again."
            )

    def close(self) -> None:
        """Release the client (its database handles or HTTP connections) once the calls under way are done."""
        with self.gate.reopening():
            close_client(self._client)

    def reload(self) -> bool:
        """Reopen Chroma's segments from disk, to see what other processes wrote; whether it did.

        An embedded store loads its vector index once per process and never sees another process's writes
        (learning/shared-store.md); a Chroma server is always current, and this does nothing there. The
        caller holds the store's lock (``StoreLock``), so no writer is half-way through the files read here.

        Raises:
            StoreError: the collections are gone (a migration removed them).
        """
        if self._reopen is None:
            return False
        with self.gate.reopening():
            close_client(self._client)
            self._client = self._reopen()
            self._chunks, self._docs = (self._collection(name) for name in self.collections.names())
            self.reloads += 1
        return True

    def _collection(self, name: str) -> Any:
        """One of this store's collections, its vector index loaded now (under the caller's lock), not at the
        first search."""
        from chromadb.errors import NotFoundError

        try:
            collection = self._client.get_collection(name, embedding_function=None)
        except (NotFoundError, ValueError) as exc:
            raise self._gone() from exc
        if collection.count():
            probe = np.zeros(1 if _keeps_vectors_in_index(collection) else self._dim, np.float32)
            probe[0] = 1.0
            collection.query(query_embeddings=[probe], n_results=1, include=[])
        return collection

    # --- state shared with the BM25 cache -------------------------------------------------

    @property
    @_store_call
    def generation(self) -> int:
        """A counter bumped on every change, read from Chroma (one round trip to a server).

        The BM25 and ANN caches compare their own against it. Not atomic: two clients writing at once
        can both store ``g + 1`` (a lost bump), so a cache also compares chunk ids now and then.
        """
        return int(self._fresh_metadata().get("generation", 0))

    def _fresh_metadata(self) -> dict[str, Any]:
        """The chunk collection's metadata as stored now.

        Raises:
            StoreError: a migration has replaced this pair of collections; what is open is no longer the store.
        """
        meta = self.metadata()
        if meta.get(MIGRATED_TO):
            raise StoreMigrated(str(meta[MIGRATED_TO]))
        return meta

    @_store_call
    def metadata(self) -> dict[str, Any]:
        """The chunk collection's metadata as stored now, even after a migration replaced it.

        Raises:
            StoreError: the collection is gone (a migration removed it).
        """
        from chromadb.errors import NotFoundError

        # Collection.metadata is what this handle saw when it was opened: another client's writes (a
        # replica on the same server, or sextant-ingest beside sextant-kb) show only in a fresh read.
        try:
            return dict(self._client.get_collection(self.collections.chunks, embedding_function=None).metadata or {})
        except (NotFoundError, ValueError) as exc:
            raise self._gone() from exc

    def _gone(self) -> StoreError:
        """Why this store's collections are missing: a migration made another pair live, or they were removed."""
        live = read_manifest(self._client).live
        if live == self.collections:
            return StoreError(f"the store's collection {live.chunks!r} is gone; restart to open it again")
        return StoreMigrated(ChunkStore.open_as_built(self._client, live).embedder)

    @_store_call
    def bump_generation(self, *, at_least: int = 0, migrated_to: str = "") -> int:
        """Move the generation on by one (to ``at_least`` if that is more); returns it.

        ``migrated_to``: mark this pair as replaced by a migration to that embedder (``sextant.kb.migrate``).
        """
        # From the stored value, never the handle's copy: a replica's copy may be far behind, and
        # writing that plus one would move the counter backwards onto a value a cache was stamped with.
        meta = self.metadata() if migrated_to else self._fresh_metadata()
        meta["generation"] = max(int(meta.get("generation", 0)) + 1, at_least)
        self._chunks.modify(metadata={**meta, MIGRATED_TO: migrated_to} if migrated_to else meta)
        return int(meta["generation"])

    # --- documents ------------------------------------------------------------------------

    @_store_call
    def get_document(self, doc_id: str, *, with_text: bool = False) -> DocumentRecord | None:
        include = ["metadatas", "documents"] if with_text else ["metadatas"]
        got = self._docs.get(ids=[doc_id], include=include)
        if not got["ids"]:
            return None
        text = got["documents"][0] if with_text and got["documents"] else ""
        return record_from(doc_id, got["metadatas"][0], text or "")

    @_store_call
    def live_chunk_ids(self, doc_ids: Iterable[str]) -> set[str]:
        """The chunk ids of the versions now stored of ``doc_ids`` (one read, whatever their number)."""
        return {cid for record in self._records(sorted(set(doc_ids))) for cid in record.chunk_ids()}

    @_store_call
    def list_documents(self) -> list[DocumentRecord]:
        """Every document record, by id: the ids first, then their records in pages (one read of every record's
        metadata fails in Chroma's SQLite past ~32k documents: "too many SQL variables", seen at 1M chunks)."""
        return sorted(self._records(self._docs.get(include=[])["ids"]), key=lambda r: r.id)

    def _records(self, doc_ids: Sequence[str]) -> list[DocumentRecord]:
        """The records of ``doc_ids`` that exist (metadata only), read ``LISTING_PAGE`` at a time."""
        records: list[DocumentRecord] = []
        for lo in range(0, len(doc_ids), LISTING_PAGE):
            got = self._docs.get(ids=list(doc_ids[lo : lo + LISTING_PAGE]), include=["metadatas"])
            records.extend(record_from(i, m, "") for i, m in zip(got["ids"], got["metadatas"], strict=True))
        return records

    @_store_call
    def chunk_count(self) -> int:
        return int(self._chunks.count())

    @_store_call
    def document_count(self) -> int:
        return int(self._docs.count())

    @_store_call
    def write_documents(self, documents: Sequence[tuple[DocumentRecord, ChunkBatch]]) -> Written:
        """Store each document's chunks and record, replacing any earlier version, as one write: one generation,
        and Chroma's upserts made for all of them together (per document they cost 1.8x more, learning/scale.md).
        Returns the generation and the versions replaced, read here (another process may have replaced one since
        the caller looked).

        Raises:
            ValueError: no documents or more than one upsert takes, a document's record, texts and vectors disagree,
                or an id comes twice.
            StoreError: the write failed; every document is as it was before it.
        """
        doc_ids = [record.id for record, _ in documents]
        if not doc_ids:
            raise ValueError("no documents to write")
        if len(set(doc_ids)) != len(doc_ids):
            raise ValueError("a document id comes twice in one write")
        if len(doc_ids) > self._batch_size:
            raise ValueError(f"{len(doc_ids)} documents in one write, more than the store takes at once")
        ids: list[str] = []
        for record, batch in documents:
            if not record.chunk_count == len(batch.texts) == batch.vectors.shape[0] == len(batch.metas):
                raise ValueError(f"{record.id}: record.chunk_count, texts, metadata and vectors disagree")
            ids.extend(record.chunk_ids())
        # By the records' ids, not a metadata query on the chunks: that one grows with the store (learning/scale.md).
        # Chunks a crashed write left under these ids are in no record; the next open's repair removes them.
        old = self._records(doc_ids)
        replaced = [cid for record in old for cid in record.chunk_ids()]
        written: list[str] = []
        try:
            vectors = self._chunk_vectors(np.concatenate([batch.vectors for _, batch in documents]))
            texts = [t for _, batch in documents for t in batch.texts]
            metas = [m for _, batch in documents for m in batch.metas]
            for lo in range(0, len(ids), self._batch_size):
                rows = slice(lo, lo + self._batch_size)
                self._chunks.upsert(
                    ids=ids[rows], embeddings=vectors[rows], documents=texts[rows], metadatas=metas[rows]
                )
                written.extend(ids[rows])
            # The records are the commit point: one upsert, so that a failure leaves no document half-replaced.
            self._docs.upsert(
                ids=doc_ids,
                embeddings=[_centroid(batch.vectors, self._dim) for _, batch in documents],
                documents=[record.text for record, _ in documents],
                metadatas=[record_meta(record) for record, _ in documents],
            )
        except Exception as exc:
            kept = set(replaced)
            self._delete_chunks([i for i in written if i not in kept])
            named = repr(doc_ids[0]) if len(doc_ids) == 1 else f"{len(doc_ids)} documents ({doc_ids[0]!r}, ...)"
            raise StoreError(f"storing {named} failed and was rolled back: {exc}") from exc
        keep = set(ids)
        self._delete_chunks([i for i in replaced if i not in keep])
        return Written(self.bump_generation(), tuple(replaced), frozenset(r.id for r in old))

    @_store_call
    def write_overview(
        self, record: DocumentRecord, text: str, meta: dict[str, Any], vector: npt.NDArray[np.float32]
    ) -> int:
        """Store the overview chunk of ``record``'s version, replacing an earlier one; returns the generation.

        The record is the commit point: an overview chunk it does not name is an orphan that ``repair`` removes.

        Raises:
            StoreError: the write failed; the document is as it was.
        """
        cid = record.overview_id()
        try:
            self._chunks.upsert(
                ids=[cid], embeddings=self._chunk_vectors(vector[None, :]), documents=[text], metadatas=[meta]
            )
            self._docs.update(ids=[record.id], metadatas=[record_meta(replace(record, overview=text))])
        except Exception as exc:
            if not record.overview:
                self._delete_chunks([cid])
            raise StoreError(f"storing the overview of {record.id!r} failed: {exc}") from exc
        return self.bump_generation()

    @_store_call
    def delete_document(self, doc_id: str) -> list[str]:
        """Remove a document and all its chunks; returns the removed chunk ids."""
        ids = sorted(self.live_chunk_ids([doc_id]))
        self._docs.delete(ids=[doc_id])
        self._delete_chunks(ids)
        if ids:
            self.bump_generation()
        return ids

    def _delete_chunks(self, ids: Sequence[str]) -> None:
        if ids:
            self._chunks.delete(ids=list(ids))

    @_store_call
    def repair(self) -> list[str]:
        """Remove chunks that belong to no live document version (left by a crash mid-ingest)."""
        live = {cid for record in self.list_documents() for cid in record.chunk_ids()}
        if len(live) == self.chunk_count():
            return []
        orphans = [cid for cid in self._chunks.get(include=[])["ids"] if cid not in live]
        self._delete_chunks(orphans)
        if orphans:
            log.warning("removed %d chunks left behind by an interrupted ingest", len(orphans))
            self.bump_generation()
        return orphans

    # --- copying, for a migration -----------------------------------------------------------

    @_store_call
    def chunk_ids(self) -> set[str]:
        """Every chunk id stored, live or not."""
        return set(self._chunks.get(include=[])["ids"])

    @_store_call
    def put_chunks(self, chunks: Sequence[StoredChunk], vectors: npt.NDArray[np.float32]) -> None:
        """Store ``chunks`` as they are under new vectors (rows in the same order); no document changes."""
        for lo in range(0, len(chunks), self._batch_size):
            part = chunks[lo : lo + self._batch_size]
            self._chunks.upsert(
                ids=[c.id for c in part],
                embeddings=self._chunk_vectors(vectors[lo : lo + len(part)]),
                documents=[c.text for c in part],
                metadatas=[c.meta for c in part],
            )

    @_store_call
    def put_record(self, record: DocumentRecord) -> None:
        """Store ``record`` (with its text) as it is, embedded as the mean of its stored chunk vectors."""
        ids = [cid for cid in record.chunk_ids() if cid != record.overview_id()]
        vectors = [c.vector for c in self.get_chunks(ids, vectors=True) if c.vector is not None]
        centroid = _centroid(np.array(vectors, np.float32).reshape(-1, self._dim), self._dim)
        self._docs.upsert(
            ids=[record.id], embeddings=[centroid], documents=[record.text], metadatas=[record_meta(record)]
        )

    @_store_call
    def delete(self, *, records: Sequence[str] = (), chunks: Sequence[str] = ()) -> None:
        """Remove records and chunks by id, as they are: no commit order, no generation bump."""
        if records:
            self._docs.delete(ids=list(records))
        self._delete_chunks(chunks)

    @_store_call
    def drop(self) -> None:
        """Remove both collections of this store for good."""
        for name in self.collections.names():
            self._client.delete_collection(name)

    # --- chunks ---------------------------------------------------------------------------

    @_store_call
    def query(
        self, vector: npt.NDArray[np.float32], n: int, doc_ids: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest chunks by cosine, best first, as ``(chunk_id, cosine)``.

        Raises:
            StoreError: the vectors are in Sextant's index alone (``vectors_in_index``): search that.
        """
        if self.vectors_in_index:
            raise StoreError("this store keeps its chunks' vectors in Sextant's index alone: search that index")
        total = self.chunk_count()
        if total == 0 or n <= 0:
            return []
        where = _doc_filter(doc_ids)
        got = self._chunks.query(query_embeddings=[vector], n_results=min(n, total), where=where, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(got["ids"][0], got["distances"][0], strict=True)]

    @_store_call
    def get_chunks(self, ids: Sequence[str], *, vectors: bool = False) -> list[StoredChunk]:
        """Chunks by id, in the order asked for (missing ids are left out); with ``vectors``, each with its vector,
        or None where the store keeps none (``vectors_in_index``)."""
        if not ids:
            return []
        vectors = vectors and not self.vectors_in_index
        include = ["documents", "metadatas", "embeddings"] if vectors else ["documents", "metadatas"]
        got = self._chunks.get(ids=list(ids), include=include)
        found: dict[str, StoredChunk] = {}
        for pos, cid in enumerate(got["ids"]):
            vec = np.asarray(got["embeddings"][pos], np.float32) if vectors else None
            found[cid] = StoredChunk(cid, got["documents"][pos] or "", dict(got["metadatas"][pos]), vec)
        return [found[i] for i in ids if i in found]

    def iter_chunks(self, batch: int = 2000) -> Iterator[list[StoredChunk]]:
        """Every chunk (text and metadata, no vector), in pages of ``batch``, for rebuilding the BM25 cache."""
        offset = 0
        while True:
            with self.gate.call():
                got = self._chunks.get(include=["documents", "metadatas"], limit=batch, offset=offset)
            if not got["ids"]:
                return
            yield [
                StoredChunk(cid, doc or "", dict(meta))
                for cid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
            ]
            offset += len(got["ids"])


def _keeps_vectors_in_index(collection: Any) -> bool:
    """Whether this chunk collection's entries carry the stand-in, their vectors in Sextant's index alone."""
    return (collection.metadata or {}).get(CHUNK_VECTORS) == "index"


def _doc_filter(doc_ids: Sequence[str] | None) -> dict[str, Any] | None:
    if not doc_ids:
        return None
    return {"doc_id": doc_ids[0]} if len(doc_ids) == 1 else {"doc_id": {"$in": list(doc_ids)}}


def _centroid(vectors: npt.NDArray[np.float32], dim: int) -> npt.NDArray[np.float32]:
    """A document's own vector: the mean of its chunks', unit length."""
    return _unit(vectors.mean(axis=0)) if len(vectors) else np.zeros(dim, np.float32)


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(v))
    return cast(npt.NDArray[np.float32], (v / norm).astype(np.float32)) if norm > 0 else v
