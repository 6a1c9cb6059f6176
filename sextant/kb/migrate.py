"""Re-embed a whole store under another embedder, from the chunks it holds, and swap it in at the end.

Stages, each safe to kill:

1. ``converge`` the shadow pair (``Collections.shadow_for(embedder)``) towards the live one: every chunk the
   live records name and the shadow lacks is embedded in batches of ``batch`` and written, then every record
   is copied. A batch in the shadow is never embedded again, so a killed run resumes where it stopped; writes
   to the live store meanwhile (``sextant-ingest``, ``kb_ingest``) are picked up by the next pass. Searches
   go on answering from the live pair, untouched.
2. The swap: the shadow's generation is set past the live one's and the manifest is rewritten to name it.
   That one metadata write is the commit point (``live_collections``): before it the old pair is the store,
   after it the new one.
3. Retire the old pair: it is marked ``migrated_to`` (a process that still has it open, a running
   ``sextant-kb``, refuses to go on with it at its next generation check instead of serving it), whatever
   was written to it since the last pass is carried over, and it is removed. A re-run after a kill here finds
   the retired pair in the manifest and finishes this stage.

The derived indexes follow the generation: the new pair's is past every stamp of the old one's, so the next
open rebuilds the ANN index from the new vectors and the BM25 index from the same chunks (``run`` does that
open). Chunk ids, texts, metadata and records are copied as they are; only vectors change.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from sextant.kb.embeddings import Embedder
from sextant.kb.indexing import DEFAULT_POLICY, IndexingPolicy, index_text
from sextant.kb.live_collections import (
    CHUNKS,
    DOCUMENTS,
    Collections,
    Manifest,
    existing,
    read_manifest,
    write_manifest,
)
from sextant.kb.store import MIGRATED_TO, ChunkStore
from sextant.kb.store_lock import StoreLock

log = logging.getLogger(__name__)

BATCH = 64
# Passes of stage 1 (and of the carry-over in stage 3) before moving on while others keep writing; what a
# writer adds after the last pass reaches the new pair in stage 3, which loops until the old pair is still.
MAX_PASSES = 5
LOCK = "migrate.lock"

Progress = Callable[[int, int], None]
"""``progress(done, total)``: chunks embedded so far in this pass, of the pass's total."""


class MigrationError(Exception):
    """A migration that cannot start or go on; the message says what to do."""


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What a finished migration did."""

    old_embedder: str
    new_embedder: str
    documents: int
    chunks: int
    embedded: int  # chunks embedded by this run (fewer than ``chunks`` when it resumed)
    resumed_swap: bool  # this run only finished the clean-up of a swap made by a killed run


class Pass(NamedTuple):
    """What one ``converge`` pass changed."""

    embedded: int  # chunks embedded and written
    copied: int  # records written, and records and chunks removed

    def __bool__(self) -> bool:
        return bool(self.embedded or self.copied)


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Hold the store's migration lock; the kernel releases it when the process dies, however it dies.

    Raises:
        MigrationError: another migration holds it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise MigrationError(
                f"the store at {folder} is busy: another sextant-kb-migrate is running on it; wait for it to finish"
            ) from exc
        yield
    finally:
        os.close(fd)


def migrate(
    client: Any,
    embedder: Embedder,
    *,
    policy: IndexingPolicy = DEFAULT_POLICY,
    batch: int = BATCH,
    progress: Progress | None = None,
    lock: StoreLock | None = None,
) -> MigrationReport:
    """Move the store on ``client`` to ``embedder``'s vectors (stages in the module docstring).

    ``lock``: the store folder's, held from the swap to the end and its counter moved, so that no process on this
    machine writes to the old pair meanwhile and each meets the swap at its next call.

    Raises:
        MigrationError: the store already uses ``embedder``, or a swap to another embedder is unfinished.
        StoreError: Chroma refused a read or a write; the live store is as it was, and a re-run resumes.
    """
    manifest = read_manifest(client)
    if manifest.retired is not None:
        with _swapping(lock):
            return _finish_swap(client, manifest, embedder, policy, batch, progress)
    live = ChunkStore.open_as_built(client, manifest.live)
    if (live.embedder, live.dim) == (embedder.name, embedder.dim):
        raise MigrationError(f"the store already uses embedder {embedder.name!r}; there is nothing to migrate")
    target = Collections.shadow_for(embedder.name)
    _drop_abandoned_shadows(client, keep={*manifest.live.names(), *target.names()})
    shadow = ChunkStore(client, embedder.name, embedder.dim, target, own_index=live.dense_index)
    embedded = 0
    for _ in range(MAX_PASSES):
        done = converge(live, shadow, embedder, policy, batch, progress)
        embedded += done.embedded
        if not done:
            break
    with _swapping(lock):
        # The commit point: from here on the shadow is the store.
        shadow.bump_generation(at_least=int(live.metadata().get("generation", 0)) + 1)
        write_manifest(client, Manifest(live=target, retired=manifest.live))
        log.info("swapped in the collections embedded by %s", embedder.name)
        report = _retire(client, live, shadow, embedder, policy, batch, progress)
    return MigrationReport(
        live.embedder, embedder.name, shadow.document_count(), shadow.chunk_count(), embedded + report, False
    )


@contextmanager
def _swapping(lock: StoreLock | None) -> Iterator[None]:
    """Hold the store folder's lock (if any) and move its counter: the writers of this machine wait, and then meet
    the swap."""
    if lock is None:
        yield
        return
    with lock.exclusive():
        lock.bump()
        yield


def converge(
    source: ChunkStore,
    target: ChunkStore,
    embedder: Embedder,
    policy: IndexingPolicy = DEFAULT_POLICY,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> Pass:
    """Make ``target`` hold ``source``'s records and chunks, its chunks embedded by ``embedder``; a pass that
    changes nothing is false."""
    records = {r.id: r for r in source.list_documents()}
    present = {r.id: r for r in target.list_documents()}
    have = target.chunk_ids()
    # An overview is rewritten under the same chunk id; its record's text says whether the copy is stale.
    stale = {
        r.overview_id()
        for r in records.values()
        if r.overview and (p := present.get(r.id)) is not None and p.content_hash == r.content_hash and p != r
    }
    wanted = [cid for r in records.values() for cid in r.chunk_ids()]
    todo = [cid for cid in wanted if cid not in have or cid in stale]
    for lo in range(0, len(todo), batch):
        chunks = source.get_chunks(todo[lo : lo + batch])  # one replaced since the listing: the next pass sees it
        vectors = embedder.embed([index_text(c.text, c.meta, policy.dense_context) for c in chunks])
        target.put_chunks(chunks, vectors)
        if progress:
            progress(min(lo + batch, len(todo)), len(todo))
    copied = 0
    for doc_id, record in records.items():
        if present.get(doc_id) != record:
            full = source.get_document(doc_id, with_text=True)
            if full is not None:
                target.put_record(full)
                copied += 1
    gone = [doc_id for doc_id in present if doc_id not in records]
    extra = sorted(have - set(wanted))
    target.delete(records=gone, chunks=extra)
    return Pass(len(todo), copied + len(gone) + len(extra))


def _retire(
    client: Any,
    old: ChunkStore,
    new: ChunkStore,
    embedder: Embedder,
    policy: IndexingPolicy,
    batch: int,
    progress: Progress | None,
) -> int:
    """Stage 3: mark the old pair, carry over what reached it since the last pass, remove it, clean the
    manifest. Returns the chunks embedded on the way."""
    embedded = 0
    for _ in range(MAX_PASSES):
        marked = old.bump_generation(migrated_to=embedder.name)
        done = converge(old, new, embedder, policy, batch, progress)
        if done:
            new.bump_generation()
            embedded += done.embedded
        meta = old.metadata()
        # A writer's bump that read the metadata before our mark writes it back without the mark: go again.
        if not done and meta.get(MIGRATED_TO) == embedder.name and int(meta.get("generation", 0)) == marked:
            break
    old.drop()
    write_manifest(client, Manifest(live=new.collections))
    log.info("removed the collections of embedder %s", old.embedder)
    return embedded


def _finish_swap(
    client: Any,
    manifest: Manifest,
    embedder: Embedder,
    policy: IndexingPolicy,
    batch: int,
    progress: Progress | None,
) -> MigrationReport:
    new = ChunkStore.open_as_built(client, manifest.live)
    if (new.embedder, new.dim) != (embedder.name, embedder.dim):
        raise MigrationError(
            f"a migration to embedder {new.embedder!r} swapped its collections in but was stopped before "
            f"removing the old ones; finish it first: sextant-kb-migrate --embedder {new.embedder}"
        )
    assert manifest.retired is not None
    if manifest.retired.chunks not in existing(client):  # killed after removing the old pair
        write_manifest(client, Manifest(live=manifest.live))
        return MigrationReport("", new.embedder, new.document_count(), new.chunk_count(), 0, True)
    old = ChunkStore.open_as_built(client, manifest.retired)
    embedded = _retire(client, old, new, embedder, policy, batch, progress)
    return MigrationReport(old.embedder, new.embedder, new.document_count(), new.chunk_count(), embedded, True)


def _drop_abandoned_shadows(client: Any, keep: set[str]) -> None:
    """Remove the shadow of a migration to another embedder that was stopped before its swap."""
    prefixes = (f"{CHUNKS}-", f"{DOCUMENTS}-")
    for name in sorted(existing(client) - keep):
        if name.startswith(prefixes):
            log.warning("removing %s, left by a migration to another embedder that did not finish", name)
            client.delete_collection(name)
