"""The ranked lists a search fuses: each one retriever's best chunks for a query, best first.

The searcher (``sextant.kb.search``) asks every list that takes part in a search's mode for its ``depth`` best
chunks, reads them from the store, and fuses the lists (``sextant.kb.fusion``): by rank (RRF), each list counting
its ``weight``, or by score, each list scoring every candidate and each score divided by the list's best. The
product fuses two lists, ``DenseList`` (the nearest neighbours of the question's vector, from the ANN index when
one is configured, else from Chroma's) and ``Bm25List``. A probe fuses its own beside them (``Searcher.extra``), or
puts one in the dense list's place (``Searcher.dense``); nothing else in the searcher changes.

A list's ``retriever`` says where it takes part: a ``dense`` list is left out of a ``lexical`` search and is
searched again from feedback's vector; a ``lexical`` list is left out of a ``dense`` search.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from sextant.contract.results import SearchMode
from sextant.kb.ann.live import LiveIndex
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore
from sextant.kb.stored import StoredChunk

Ranked = list[tuple[str, float]]
"""Chunk ids with the list's own scores, best first; a chunk's rank is its place, from 1."""

Retriever = Literal["dense", "lexical"]


@dataclass(frozen=True, slots=True)
class Asked:
    """One search as its ranked lists read it."""

    query: str
    vector: np.ndarray  # what a dense list searches from: the question's vector, or feedback's moved one
    depth: int  # how many chunks each list ranks
    allowed: set[str] | None  # the chunks of the documents the search is restricted to; None: every chunk
    doc_ids: Sequence[str] | None  # those documents, for the store's own filter


class RankedList(Protocol):
    """One retriever the searcher fuses."""

    retriever: Retriever
    stage: str  # its key in ``SearchResult.timings_ms``
    weight: float  # its weight in either fusion

    def ranked(self, asked: Asked) -> Ranked:
        """The ``asked.depth`` best chunks for ``asked``, best first."""
        ...

    def scores(self, asked: Asked, ranked: Ranked, candidates: Mapping[str, StoredChunk]) -> dict[str, float]:
        """Score fusion's input: a score for every one of ``candidates`` (the chunks of all the fused lists, read
        with their vectors), however low, in their order; ``ranked`` is this list's ranking of ``asked``."""
        ...


def takes_part(ranked_list: RankedList, mode: SearchMode) -> bool:
    """A ``dense`` search fuses only the dense lists, a ``lexical`` one only the lexical lists; the others all."""
    return mode not in ("dense", "lexical") or ranked_list.retriever == mode


@dataclass(slots=True)
class DenseList:
    """The chunks nearest the searched vector: from ``ann`` when set, else from Chroma's own index."""

    store: ChunkStore
    ann: LiveIndex | None = None
    weight: float = 1.0
    stage: str = "dense"
    retriever: Retriever = "dense"

    def ranked(self, asked: Asked) -> Ranked:
        if self.ann:
            return self.ann.query(asked.vector, asked.depth, asked.allowed)
        return self.store.query(asked.vector, asked.depth, asked.doc_ids)

    def scores(self, asked: Asked, ranked: Ranked, candidates: Mapping[str, StoredChunk]) -> dict[str, float]:
        """Each candidate's cosine with the vector this list searched from."""
        return {cid: float(chunk.vector @ asked.vector) for cid, chunk in candidates.items()}


@dataclass(slots=True)
class Bm25List:
    """The chunks BM25 scores above 0 for the query's words."""

    index: LexicalIndex
    weight: float = 1.0
    stage: str = "lexical"
    retriever: Retriever = "lexical"

    def ranked(self, asked: Asked) -> Ranked:
        return [(hit.id, hit.score) for hit in self.index.search(asked.query, asked.depth, allowed_ids=asked.allowed)]

    def scores(self, asked: Asked, ranked: Ranked, candidates: Mapping[str, StoredChunk]) -> dict[str, float]:
        """The scores of the candidates this list ranked, then the others' (0 where no query word occurs)."""
        found = {cid: score for cid, score in ranked if cid in candidates}
        return found | self.index.scores(asked.query, (cid for cid in candidates if cid not in found))
