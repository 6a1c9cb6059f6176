"""Turn a store folder made for Sextant's index, whose chunk vectors Chroma keeps too, into one that keeps them in
the index alone (``ChunkStore.vectors_in_index``), in place.

For measuring the new format at 1M chunks without building the store again (80 minutes): a new chunk collection
is written with the old one's ids, texts and metadata and the one-dimensional stand-in as vectors, at the old
one's generation (the index's files are stamped with it and stay as they are), the manifest is pointed at it and
the old collection is removed. Chroma's SQLite file keeps the pages the old collection freed (it reuses them),
so a store converted so is not byte for byte one built new; ``learning/scale.md`` says which was measured. Not a
product command: nothing is kept if it is stopped half-way, so run it on a copy.

    python bench/vectors_in_index.py /tmp/scale-vi/1000000/store
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from sextant.kb.chroma_client import close_client, open_client
from sextant.kb.live_collections import CHUNKS, Collections, Manifest, read_manifest, write_manifest
from sextant.kb.store import ChunkStore

BATCH = 5000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    args = parser.parse_args()
    client = open_client(path=args.store, url=None)
    try:
        live = read_manifest(client).live
        old = ChunkStore.open_as_built(client, live)
        if old.dense_index is None or old.vectors_in_index:
            raise SystemExit(f"{args.store}: not a store made for Sextant's index whose vectors Chroma keeps too")
        pair = Collections(f"{CHUNKS}-vectors-in-index", live.documents)
        new = ChunkStore(client, old.embedder, old.dim, pair, own_index=old.dense_index, vectors_in_index=True)
        new.bump_generation(at_least=old.generation)
        ids = [cid for record in old.list_documents() for cid in record.chunk_ids()]
        started = time.perf_counter()
        for lo in range(0, len(ids), BATCH):
            chunks = old.get_chunks(ids[lo : lo + BATCH])
            new.put_chunks(chunks, np.zeros((len(chunks), old.dim), np.float32))  # stand-ins are written instead
            if lo // BATCH % 20 == 0:
                print(f"{lo + len(chunks)} of {len(ids)} chunks copied in {time.perf_counter() - started:.0f} s")
        write_manifest(client, Manifest(live=pair))
        client.delete_collection(live.chunks)
        print(f"{len(ids)} chunks now keep their vectors in the index alone ({time.perf_counter() - started:.0f} s)")
    finally:
        close_client(client)


if __name__ == "__main__":
    main()
