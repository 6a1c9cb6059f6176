"""Chunks by id for searches and the tools: from Sextant's own index when it serves dense search, else Chroma.

Any read of Chroma's chunk collection, even a count or one chunk's text, makes an embedded Chroma load that
collection's whole vector index into the reading process (learning/scale.md: 100 MB at 50,000 chunks, 2+ GB at
1M). A process whose dense search runs on ``SEXTANT_ANN_INDEX`` never needs that index, and its own index keeps
each chunk's text and metadata beside the vector, mapped and shared by every process on the store.
"""

from __future__ import annotations

from collections.abc import Sequence

from sextant.kb.ann.live import LiveIndex
from sextant.kb.store import ChunkStore
from sextant.kb.stored import StoredChunk


class ChunkReader:
    """Reads chunks from ``ann`` when set and holding them, from ``store`` otherwise."""

    def __init__(self, store: ChunkStore, ann: LiveIndex | None) -> None:
        self.store, self.ann = store, ann

    def get(self, ids: Sequence[str], *, vectors: bool = False) -> list[StoredChunk]:
        """Chunks by id, in the order asked for (missing ids are left out); with ``vectors``, each with its vector.

        From the index, chunks always come with their vectors. One the index does not hold (its files behind the
        store after a writer died, until the next refresh repairs them) is read from the store, with no vector where
        the store keeps none (``ChunkStore.vectors_in_index``).
        """
        if self.ann is None:
            return self.store.get_chunks(ids, vectors=vectors)
        found = self.ann.chunks(ids)
        if missing := [i for i in ids if i not in found]:
            found |= {c.id: c for c in self.store.get_chunks(missing, vectors=vectors)}
        return [found[i] for i in ids if i in found]
