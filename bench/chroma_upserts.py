"""Chroma's chunk writes alone: one upsert per document against one per group (``ChunkStore.write_documents``), and
the vectors alone (what Chroma's HNSW insertion costs, without texts, metadata and their indexes).

    python bench/chroma_upserts.py --store /tmp/scale/100000/store      # a copy is written to, never the store
    python bench/chroma_upserts.py                                      # a new empty store
    python bench/chroma_upserts.py --fill 100000 --hnsw 4 16            # a store of 100k vectors, cheap HNSW

1,050 chunks of ~140 words with the 13 metadata fields Sextant writes and unit vectors are upserted into the
``sextant_chunks`` collection as 50 calls of 21 chunks, as one call, or as one call of the vectors alone,
alternated, ``--rounds`` times each, and deleted after each round; printed: the seconds of each round per shape.
The vectors and texts are random (seeded): what is timed is Chroma's write, not the embedder. Run it on an empty
store and on a sized one to see which part of a write grows with the store (``learning/scale.md``). ``--in-place``
writes to the store itself (and deletes what it wrote), for a store too large to copy.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
from chromadb.config import Settings

CHUNKS_PER_DOCUMENT = 21
DOCUMENTS = 50
WORDS = 140
META = {
    "section": "",
    "index": 0,
    "rows": "",
    "doc_id": "",
    "dense_key": "2713d8192acf50329a24b26713e7979b",
    "category": "",
    "end": 912,
    "title": "A title of some length for the chunk of a document here.",
    "kind": "text",
    "start": 0,
    "source": "bench",
    "pages": "",
    "prefix_chars": 0,
}


def documents(rng: np.random.Generator, tag: str) -> list[tuple[list[str], Any, list[str], list[dict[str, Any]]]]:
    """``DOCUMENTS`` documents of ``CHUNKS_PER_DOCUMENT`` chunks: ids, vectors, texts, metadata."""
    made = []
    for d in range(DOCUMENTS):
        vectors = rng.standard_normal((CHUNKS_PER_DOCUMENT, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ids = [f"{tag}-{d}~{i}" for i in range(CHUNKS_PER_DOCUMENT)]
        texts = [" ".join(f"w{rng.integers(0, 50_000)}" for _ in range(WORDS)) for _ in ids]
        metas = [{**META, "doc_id": f"{tag}-{d}", "index": i} for i in range(CHUNKS_PER_DOCUMENT)]
        made.append((ids, vectors, texts, metas))
    return made


def timed(
    collection: Any, docs: list[tuple[list[str], Any, list[str], list[dict[str, Any]]]], one_call: bool, bare: bool
) -> float:
    """Seconds to upsert ``docs`` (per document, or in one call; ``bare``: the vectors alone); they are deleted
    afterwards, untimed."""
    calls = [(ids, list(vectors), texts, metas) for ids, vectors, texts, metas in docs]
    if one_call:
        calls = [tuple([item for call in calls for item in call[field]] for field in range(4))]
    started = time.perf_counter()
    for ids, vectors, texts, metas in calls:
        if bare:
            collection.upsert(ids=ids, embeddings=vectors)
        else:
            collection.upsert(ids=ids, embeddings=vectors, documents=texts, metadatas=metas)
    seconds = time.perf_counter() - started
    for ids, *_ in docs:
        collection.delete(ids=ids)
    return seconds


def fill(collection: Any, n: int, rng: np.random.Generator, batch: int = 5000) -> None:
    """``n`` random unit vectors with ids and nothing else, in batches; prints how long it took."""
    started = time.perf_counter()
    for lo in range(0, n, batch):
        vectors = rng.standard_normal((min(batch, n - lo), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        collection.add(ids=[f"fill-{lo + i}" for i in range(len(vectors))], embeddings=list(vectors))
    if n:
        print(f"filled {n} vectors in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a Sextant store folder to copy and write to (default: empty)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-place", action="store_true", help="write to --store itself, not a copy")
    parser.add_argument("--fill", type=int, default=0, help="first add this many random vectors (no text), untimed")
    parser.add_argument(
        "--hnsw", type=int, nargs=2, metavar=("M", "EF"), help="a new collection's max_neighbors and ef_construction"
    )
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="chroma-upserts-"))
    try:
        path = args.store if args.in_place and args.store is not None else scratch / "store"
        if args.store is not None and not args.in_place:
            shutil.copytree(args.store, path)
        client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
        hnsw: dict[str, Any] = {"space": "cosine"}
        if args.hnsw:
            hnsw |= {"max_neighbors": args.hnsw[0], "ef_construction": args.hnsw[1]}
        collection = client.get_or_create_collection(
            "sextant_chunks", embedding_function=None, configuration={"hnsw": hnsw}
        )
        rng = np.random.default_rng(54)
        fill(collection, args.fill, rng)
        print(f"{collection.count()} chunks in the store, HNSW {hnsw}")
        shapes = {"per document": (False, False), "one call": (True, False), "one call, vectors alone": (True, True)}
        seconds: dict[str, list[float]] = {shape: [] for shape in shapes}
        for r in range(args.rounds):
            for i, (shape, (one_call, bare)) in enumerate(shapes.items()):
                seconds[shape].append(timed(collection, documents(rng, f"{i}-{r}"), one_call, bare))
        for shape, times in seconds.items():
            print(f"{shape}: " + " / ".join(f"{s:.2f} s" for s in times))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
