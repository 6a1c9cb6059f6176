"""The indexes derived from the store, BM25 and (optionally) an ANN index, kept in step with it.

The store is the truth; these are caches of this process, rebuilt from it when they are missing or behind
(``DerivedIndexes.for_settings`` at open), the vectors of a store that keeps them in the ANN index alone
(``ChunkStore.vectors_in_index``) from the index's files or, lost, by embedding the texts again. Each write of this
process, made under ``writing()``, is applied to both and stamped with the store's generation (``commit``). Other
processes on the same store folder take the same lock (``StoreLock``), move its change counter and note what each
write did in the journal (``StoreJournal``); a search that finds the counter moved applies the journal's entries to
BM25, or, where one is missing, diffs the chunk ids of every record (``refresh_before_search``). The dense side
follows either by reopening Chroma's segments (Chroma's index serves it) or by reading the ANN index's new files,
every write saving them (``LiveIndex.reopen``); Chroma's segments are then reopened only before this process
writes, and the chunks' texts come from the ANN index too (``ChunkReader``), so that a process that only searches
never loads Chroma's vector index of the chunks. Writers this machine cannot see (replicas elsewhere on one Chroma
server) are followed when the store's generation or chunk count moved, checked at most every
SEXTANT_LEXICAL_REFRESH_S. learning/shared-store.md and learning/scale.md have the design.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sextant.kb.ann.live import LiveIndex
from sextant.kb.chroma_client import StoreError
from sextant.kb.chunk_reader import ChunkReader
from sextant.kb.embeddings import Embedder
from sextant.kb.indexing import DEFAULT_POLICY, IndexingPolicy, index_text
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore
from sextant.kb.store_journal import JournalEntry, StoreJournal, net_change
from sextant.kb.store_lock import StoreLock
from sextant.kb.stored import StoredChunk
from sextant.settings import KbSettings

log = logging.getLogger(__name__)

# On a Chroma server, every this-many-th refresh check compares chunk ids even when the store's counter and count
# match ours: two writers on different machines that both stored generation g + 1 (a lost bump) and kept the count
# leave nothing else to notice.
FULL_DIFF_EVERY = 30
FETCH_BATCH = 1000


def lexical_dir(settings: KbSettings) -> Path:
    """Where the BM25 cache of the configured store lives on this machine."""
    if settings.chroma_url:
        # A server's BM25 cache is kept per server URL (and database) on this machine.
        server = settings.chroma_url + (f"/{settings.chroma_database}" if settings.chroma_database else "")
        tag = hashlib.sha256(server.encode()).hexdigest()[:12]
        return settings.store_dir() / f"bm25-{tag}"
    return settings.store_dir() / "bm25"


def lock_folder(settings: KbSettings) -> Path:
    """Where the processes of this machine that share the configured store meet (``StoreLock``)."""
    return lexical_dir(settings) if settings.chroma_url else settings.store_dir()


def ann_dir(settings: KbSettings) -> Path:
    """Beside the BM25 cache, under the same per-server tag."""
    lexical = lexical_dir(settings)
    return lexical.with_name(lexical.name.replace("bm25", "ann", 1))


class DerivedIndexes:
    """The BM25 index and the ANN index (None: Chroma's own index serves dense retrieval) over one store."""

    def __init__(
        self,
        store: ChunkStore,
        lexical: LexicalIndex,
        ann: LiveIndex | None = None,
        policy: IndexingPolicy = DEFAULT_POLICY,
        *,
        lock: StoreLock,
        refresh_s: float = 2.0,
        embedder: Embedder | None = None,
    ) -> None:
        """Rebuild each index that is missing or behind the store (another writer, a crash).

        ``embedder``: embeds the chunks again whose vectors neither the ANN index nor the store holds (a store that
        keeps them in the index alone, ``ChunkStore.vectors_in_index``, after that index was lost).
        """
        self.store, self.lexical, self.ann, self.policy = store, lexical, ann, policy
        self.embedder = embedder
        self.chunks = ChunkReader(store, ann)
        # Chroma's chunk count tells of writers that neither take the lock nor journal: only a server has those.
        # On a folder with an ANN index the generation is compared alone, as counting would load Chroma's vector
        # index of the chunks into this process (chunk_reader).
        self._counts_chunks = ann is None or store.on_server
        self.shared = lock
        self.journal = StoreJournal(lock.folder)
        self._writes: list[_Write] = []  # the writes of this process under way, innermost last
        self.refresh_s = refresh_s
        self._deferred_saves = 0
        self._next_check = 0.0
        self._checks = 0
        self._followed_unsaved = False  # a refresh changed the indexes; saved at the next write or at close
        self.followed = 0  # times another process's writes were followed
        # Chroma's segments in this process miss other processes' writes: reopened before this process writes.
        # Only with an ANN index: without one, Chroma's index serves dense search and is reopened at once.
        self._segments_behind = False
        with lock.exclusive():
            self._seen = lock.changes()  # the change counter the indexes and the store's segments reflect
            # The store's (generation, chunk count) the indexes reflect; read before syncing, so a write by another
            # client during the sync shows as a difference at the next check rather than being missed.
            self._synced = self._state()
            self._sync_ann()  # first: with an ANN index the BM25 index reads the chunks' texts from it
            self._sync_lexical()

    @classmethod
    def for_settings(
        cls,
        settings: KbSettings,
        store: ChunkStore,
        lexical: LexicalIndex,
        policy: IndexingPolicy = DEFAULT_POLICY,
        embedder: Embedder | None = None,
    ) -> DerivedIndexes:
        """The indexes ``settings`` asks for over ``store``, the ANN one saved beside the BM25 cache."""
        lock = StoreLock.for_folder(lock_folder(settings))
        ann, kind = None, str(settings.ann_index)
        if kind == "chroma" and store.dense_index:
            kind = store.dense_index
            log.info("this store was created for SEXTANT_ANN_INDEX=%s (Chroma's index is minimal): using it", kind)
        if kind != "chroma":
            with lock.exclusive():
                ann = LiveIndex.open(kind, ann_dir(settings), store.dim, settings.ann_params(), embedder=store.embedder)
        return cls(store, lexical, ann, policy, lock=lock, refresh_s=settings.lexical_refresh_s, embedder=embedder)

    # --- this process's writes ----------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the store for one write of this process, against every other writer on this machine.

        What other processes wrote is followed first (so Chroma's in-memory index, which a write saves, holds
        their vectors too); the change counter moves before the write, so a writer killed half-way still sends
        the others to reload once the kernel releases its lock.
        """
        with self.shared.exclusive():
            if self.shared.changes() != self._seen:
                self._catch_up(full=False)
            if self._segments_behind:  # Chroma's write saves its vector index: it must hold the others' vectors
                self.store.reload()
                self._segments_behind = False
            self._seen = write = self.shared.bump()
            self._writes.append(_Write())
            try:
                yield
            finally:
                done = self._writes.pop()
            # Only a write that ended well says what it did: after a failure the others list the records.
            self.journal.append(JournalEntry(write, done.generation, tuple(done.removed), tuple(done.added)))

    def commit(
        self,
        generation: int,
        removed: Sequence[str],
        added: Sequence[StoredChunk] = (),
        vectors: npt.NDArray[np.float32] | None = None,
    ) -> None:
        """After a write of ours that left the store at ``generation``: drop ``removed`` from both indexes, add
        ``added`` (with ``vectors``, rows in the same order), stamp, and note it for the journal. The caller is
        inside ``writing()``."""
        if self._writes:
            self._writes[-1].note(generation, removed, [c.id for c in added])
        self.lexical.remove(removed)
        self.lexical.add([c.id for c in added], self._lexical_texts(added))
        if self.ann is not None:
            self.ann.remove(removed)
            if vectors is not None:
                self.ann.add(added, vectors)
        expected, count = self._synced[0] + 1, self._synced[1]
        self._synced = (generation, None if count is None else count + len(added) - len(removed))
        if generation != expected:  # a client this machine cannot see wrote since our last sync: diff first
            self._catch_up(full=True)
        if self.ann is not None:
            # Saved at every write, even in a batch: the other processes follow the dense side from these files.
            self.ann.save(self._synced[0])
        self._save()

    def save_followed(self) -> None:
        """Save what refreshes changed since the last save (at close)."""
        with self.shared.exclusive():
            if self._followed_unsaved:
                self._save()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Save once at the end of many writes instead of after each.

        Safe on a crash: the saved indexes are then behind the store and are rebuilt at the next open.
        """
        with self.shared.exclusive():
            self._deferred_saves += 1
        try:
            yield
        finally:
            with self.shared.exclusive():
                self._deferred_saves -= 1
                if not self._deferred_saves:
                    self._save()

    def _save(self) -> None:
        """Save both indexes at the synced generation, unless a batch will save them at its end. The caller holds
        the store's lock: another process may be loading these files."""
        if self._deferred_saves:
            return
        self.lexical.save(generation=self._synced[0])
        self._followed_unsaved = False

    # --- following other writers --------------------------------------------------------------

    def refresh(self, *, full: bool = False) -> bool:
        """Bring the indexes up to the store's changes by other clients; returns whether they changed.

        Costs a file read and two small store reads when nothing changed; otherwise a read of the journal (or,
        where it does not account for the change, and with ``full``, one listing of the document records) plus a
        fetch of the chunks that are new to this process, and, on the embedded store, reopening its segments.
        The indexes are saved at this process's next write or at close, not here: a search waits for this.
        """
        with self.shared.exclusive():
            return self._catch_up(full=full)

    def refresh_before_search(self) -> None:
        """``refresh`` when another process on this machine has written since, else at most every ``refresh_s``;
        never waiting for a write under way (the search then answers from the state before it)."""
        if not self._due() or self.shared.held_here():  # a write of this thread's brings the indexes along
            return
        with self.shared.exclusive(blocking=False) as held:
            if not held or not self._due():  # another search caught up while this one looked
                return
            self._next_check = time.monotonic() + self.refresh_s
            self._checks += 1
            # On a folder every writer takes the lock and notes its write; at 1M chunks a listing costs ~9 s.
            self._catch_up(full=self.store.on_server and self._checks % FULL_DIFF_EVERY == 0)

    def _due(self) -> bool:
        return self.shared.changes() != self._seen or time.monotonic() >= self._next_check

    def _catch_up(self, *, full: bool) -> bool:
        """Follow the store's change since the indexes were synced (or diff BM25 against it anyway, with ``full``):
        BM25 from the journal or a listing, the ANN index from its saved files; the caller holds the store's lock.
        """
        seen = self.shared.changes()
        state = self._state()  # before the listing: never stamp too new
        moved = seen != self._seen or state != self._synced
        if not moved and not full:
            return False
        started = time.perf_counter()
        if self.ann is None:
            reopened = moved and self.store.reload()
        else:
            reopened, self._segments_behind = False, self._segments_behind or moved
        # The ANN index first: BM25 reads the new chunks' texts from it.
        changed = self.ann is not None and self._follow_ann(state[0])
        entries = None if full else self.journal.since(self._seen, seen)
        if entries is not None and _explains(entries, self._synced, state):
            changed, how = self._follow_journal(entries) or changed, f"{len(entries)} journal entries"
        else:
            changed, how = self._follow(self._live_ids()) or changed, "every record listed"
        if changed or reopened:
            self.followed += 1
            log.info(
                "followed another process's writes to the store (%s): %s%d chunks indexed, in %.0f ms",
                how,
                "segments reopened, " if reopened else "",
                len(self.lexical),
                (time.perf_counter() - started) * 1000,
            )
        self._followed_unsaved = self._followed_unsaved or changed
        self._synced, self._seen = state, seen
        return changed

    def _follow(self, live: list[str]) -> bool:
        """Make BM25 hold exactly the ``live`` chunk ids: drop the others, fetch and add the missing."""
        keep = set(live)
        in_lexical = set(self.lexical.ids())
        return self._apply(in_lexical - keep, [cid for cid in live if cid not in in_lexical], in_lexical)

    def _follow_journal(self, entries: Sequence[JournalEntry]) -> bool:
        """Apply to BM25 what other processes' writes did, as their journal entries say: no listing of the records."""
        gone, new = net_change(entries)
        in_lexical = {cid for cid in (*gone, *new) if cid in self.lexical}
        return self._apply(gone & in_lexical, new, in_lexical)

    def _apply(self, gone: set[str], missing: list[str], in_lexical: set[str]) -> bool:
        """Drop the gone ids from BM25, fetch the missing chunks and add those it lacks."""
        self.lexical.remove(gone)
        for lo in range(0, len(missing), FETCH_BATCH):
            # A chunk replaced since the listing is simply not found; the generation it moved shows next time.
            chunks = [c for c in self.chunks.get(missing[lo : lo + FETCH_BATCH]) if c.id not in in_lexical]
            self.lexical.add([c.id for c in chunks], self._lexical_texts(chunks))
        return bool(gone or missing)

    def _follow_ann(self, generation: int) -> bool:
        """Take up the ANN index's files as the last writer saved them; where they do not match the store's
        ``generation`` (a writer died between the two, or wrote without this index: another machine, another
        setting), diff the index against the store instead."""
        assert self.ann is not None
        changed = self.ann.reopen()
        if self.ann.generation != generation:
            self._repair_ann(generation)
            changed = True
        return changed

    # --- rebuilding -----------------------------------------------------------------------------

    def _state(self) -> tuple[int, int | None]:
        """The store's generation and, where it is compared (``_counts_chunks``), its chunk count."""
        return self.store.generation, self.store.chunk_count() if self._counts_chunks else None

    def _in_step(self, generation: int, count: int) -> bool:
        """Whether an index at ``generation`` holding ``count`` chunks reflects the store as ``_synced`` has it."""
        return generation == self._synced[0] and self._synced[1] in (None, count)

    def chunk_count(self) -> int:
        """The chunks in the store, or in the ANN index where counting the store's would load Chroma's index."""
        return len(self.ann) if self.ann is not None and not self._counts_chunks else self.store.chunk_count()

    def _sync_lexical(self) -> None:
        if self._in_step(self.lexical.generation, len(self.lexical)):
            return
        started = time.perf_counter()
        if len(self.lexical):
            # Behind or ahead of the store (a crash between the store's write and the cache's save; another process
            # saved what it had followed): follow by chunk id as a refresh does, tokenizing only what differs.
            self._follow(self._live_ids())
            how = "brought the BM25 index up to date with"
        else:
            self.lexical.clear()
            for chunks in self._every_chunk():
                self.lexical.add([c.id for c in chunks], self._lexical_texts(chunks))
            how = "rebuilt the BM25 index from"
        log.info("%s the store (%d chunks) in %.1f s", how, len(self.lexical), time.perf_counter() - started)
        self.lexical.save(generation=self.store.generation)

    def _every_chunk(self) -> Iterator[list[StoredChunk]]:
        """Every chunk in batches: from the ANN index where there is one (synced first), else the store's pages."""
        if self.ann is None:
            yield from self.store.iter_chunks()
            return
        ids = self._live_ids()
        for lo in range(0, len(ids), FETCH_BATCH):
            yield self.chunks.get(ids[lo : lo + FETCH_BATCH])

    def _sync_ann(self) -> None:
        if self.ann is None or self._in_step(self.ann.generation, len(self.ann)):
            return
        started = time.perf_counter()
        if len(self.ann):
            self._repair_ann(self._synced[0])
            how = f"brought the {self.ann.kind} index up to date with"
        else:
            # Files saved for another kind or other parameters still hold the vectors: read from them, not the store.
            saved = LiveIndex.as_saved(self.ann.folder, self.store.dim, embedder=self.store.embedder)
            if saved is not None and saved.generation != self._synced[0] and not self.store.vectors_in_index:
                saved = None  # behind the store: the store's vectors are exact (where it keeps none, better than none)
            self.ann.rebuild()
            self._index_from_store(self._live_ids(), saved)
            self.ann.save(self._synced[0])
            how = f"built the {self.ann.kind} index from"
        took = time.perf_counter() - started
        log.info("%s the store (%d chunks) in %.1f s", how, len(self.ann), took)

    def _repair_ann(self, generation: int) -> None:
        """Make the ANN index hold exactly the store's live chunks (their vectors read from the store), and save it
        at ``generation``. Costs a listing of every record: for a crash or a writer without this index."""
        assert self.ann is not None
        if self._segments_behind:
            self.store.reload()
            self._segments_behind = False
        live = self._live_ids()
        have = self.ann.ids()
        self.ann.remove(have - set(live))
        self._index_from_store([cid for cid in live if cid not in have])
        self.ann.save(generation)

    def _index_from_store(self, chunk_ids: Sequence[str], saved: LiveIndex | None = None) -> None:
        """Add these chunks to the ANN index with their vectors: from ``saved`` (this index's files as saved for
        another kind or other parameters) where it holds them, else from the store, else embedded again from their
        texts (a store that keeps no vectors, after its index was lost)."""
        assert self.ann is not None
        embedded = 0
        for lo in range(0, len(chunk_ids), FETCH_BATCH):
            part = chunk_ids[lo : lo + FETCH_BATCH]
            found = saved.chunks(part) if saved is not None else {}
            rest = [cid for cid in part if cid not in found]
            read = self.store.get_chunks(rest, vectors=True) if rest else []
            if lacking := [c for c in read if c.vector is None]:
                if not embedded:  # before the wait, which is hours for a million chunks on a CPU
                    log.warning(
                        "embedding again the chunks whose vectors no index holds (the store keeps none), "
                        "up to %d of them: this takes as long as their first ingest did",
                        len(chunk_ids) - lo,
                    )
                vectors = self._embed(lacking)
                read = [c for c in read if c.vector is not None]
                read += [replace(c, vector=v) for c, v in zip(lacking, vectors, strict=True)]
                embedded += len(lacking)
                log.info("embedded %d chunks again so far", embedded)
            if dense := [*found.values(), *read]:
                self.ann.add(dense, np.stack([c.vector for c in dense if c.vector is not None]))
        if embedded:
            log.warning("embedded %d chunks again: their vectors were in no index (the store keeps none)", embedded)

    def _embed(self, chunks: Sequence[StoredChunk]) -> npt.NDArray[np.float32]:
        """Vectors for chunks that have none anywhere, from their texts as ingest embedded them.

        Raises:
            StoreError: no embedder was given to this process's indexes.
        """
        if self.embedder is None:
            raise StoreError(
                f"{len(chunks)} chunks have no vector in Sextant's index and the store keeps none: open the store "
                "through the knowledge base (sextant-kb, sextant-ingest), which embeds them again"
            )
        return self.embedder.embed([index_text(c.text, c.meta, self.policy.dense_context) for c in chunks])

    def chunk_vectors(self, batch: int = 1000) -> tuple[list[str], npt.NDArray[np.float32]]:
        """Every live chunk id in the store and its vector (rows in the same order), read under the store's lock
        after following other writers, so that the ANN index holds every chunk the records name."""
        with self.shared.exclusive():
            self._catch_up(full=False)
            ids = self._live_ids()
            vectors = np.zeros((len(ids), self.store.dim), np.float32)
            found: list[str] = []
            for lo in range(0, len(ids), batch):
                for chunk in self.chunks.get(ids[lo : lo + batch], vectors=True):
                    assert chunk.vector is not None
                    vectors[len(found)] = chunk.vector
                    found.append(chunk.id)
        return found, vectors[: len(found)]

    def _live_ids(self) -> list[str]:
        """The chunk ids of every document record, the store's commit point (chunks not yet committed excluded)."""
        return [cid for record in self.store.list_documents() for cid in record.chunk_ids()]

    def _lexical_texts(self, chunks: Iterable[StoredChunk]) -> list[str]:
        return [index_text(c.text, c.meta, self.policy.lexical_context) for c in chunks]


class _Write:
    """What one write of this process did to the indexes, for its journal entry."""

    def __init__(self) -> None:
        self.generation: int | None = None
        self.removed: list[str] = []
        self.added: list[str] = []

    def note(self, generation: int, removed: Sequence[str], added: Sequence[str]) -> None:
        self.generation = generation
        self.removed.extend(removed)
        self.added.extend(added)


def _explains(entries: Sequence[JournalEntry], synced: tuple[int, int | None], state: tuple[int, int | None]) -> bool:
    """Whether ``entries``, applied to the store as it was at ``synced`` (generation, chunk count or None where
    counts are not compared), give ``state``: if not, someone this machine cannot see (a replica on a Chroma
    server) wrote too."""
    generation, count = synced
    for entry in entries:
        if entry.generation is not None:
            generation = entry.generation
        if count is not None:
            count += len(entry.added) - len(entry.removed)
    return (generation, count) == state
