"""Documents of random unit vectors written straight through the store and its lock (no model), as another
process's writer such as ``sextant-ingest`` would: ``python -m tests.kb.random_writes STORE DOC_ID CHUNKS``."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np

from sextant.kb.derived_indexes import DerivedIndexes, lexical_dir
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore
from sextant.kb.stored import ChunkBatch, DocumentRecord, StoredChunk, chunk_id
from sextant.settings import KbSettings
from tests.conftest import REPO

EMBEDDER, DIM = "all-MiniLM-L6-v2", 384


def write_random(store: ChunkStore, indexes: DerivedIndexes, doc_id: str, chunks: int) -> list[str]:
    """Store ``doc_id`` with ``chunks`` chunks of seeded random vectors; returns their ids."""
    content_hash = f"{doc_id:0<12}"
    record = DocumentRecord(doc_id, doc_id, "", "", content_hash, chunks, chunks, "", "")
    seed = int.from_bytes(hashlib.sha256(doc_id.encode()).digest()[:8], "big")  # distinct ids, distinct vectors
    vectors = np.random.default_rng(seed).standard_normal((chunks, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    metas = [{"doc_id": doc_id, "title": doc_id, "start": 0, "end": 1, "kind": "text"} for _ in range(chunks)]
    texts = [f"{doc_id} chunk {i}" for i in range(chunks)]
    ids = [chunk_id(doc_id, content_hash, i) for i in range(chunks)]
    with indexes.writing():
        written = store.write_documents([(record, ChunkBatch(texts, metas, vectors))])
        added = [StoredChunk(*chunk) for chunk in zip(ids, texts, metas, strict=True)]
        indexes.commit(written.generation, written.replaced, added, vectors)
    return ids


def write_in_another_process(settings: KbSettings, doc_id: str, chunks: int) -> None:
    """``write_random`` run by a process of its own on ``settings``'s store (its environment: this one's)."""
    command = [sys.executable, "-m", "tests.kb.random_writes", str(settings.store_dir()), doc_id, str(chunks)]
    subprocess.run(command, check=True, cwd=REPO)


def main(folder: str, doc_id: str, chunks: str) -> None:
    # The store is the folder's, or the Chroma server SEXTANT_CHROMA_URL names (the folder then holds the BM25 cache).
    settings = KbSettings(chroma_dir=Path(folder), _env_file=None)  # type: ignore[call-arg]
    store = ChunkStore.for_settings(settings, EMBEDDER, DIM)
    try:
        write_random(
            store,
            DerivedIndexes.for_settings(settings, store, LexicalIndex.open(lexical_dir(settings))),
            doc_id,
            int(chunks),
        )
    finally:
        store.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
