"""With Sextant's own index on a store folder, a process reads chunks from it and never from Chroma."""

from __future__ import annotations

from typing import NoReturn

import pytest

from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.store import ChunkStore
from sextant.settings import KbSettings
from tests.kb.random_writes import write_in_another_process

TEA = "Steep green tea at eighty degrees for two minutes; black tea takes boiling water and four minutes."
BEES = "In early spring the beekeeper checks that the queen is laying and that stores of honey last."
# Every ChunkStore method that reads Chroma's chunk collection (and so loads its vector index into the process).
CHUNK_READS = ("get_chunks", "iter_chunks", "chunk_count", "chunk_ids", "query")


def _refused(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("read Chroma's chunk collection")


@pytest.fixture
def flat(settings: KbSettings, monkeypatch: pytest.MonkeyPatch) -> KbSettings:
    monkeypatch.setenv("SEXTANT_ANN_INDEX", "flat")  # the other process's settings: the same index
    return settings.model_copy(update={"ann_index": "flat", "lexical_refresh_s": 0.0})


def test_opening_searching_following_and_reading_a_chunk_never_read_chroma_s_chunks(
    flat: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any read of Chroma's chunk collection loads its whole vector index (2+ GB at 1M chunks, learning/scale.md)."""
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
    for name in CHUNK_READS:
        monkeypatch.setattr(ChunkStore, name, _refused)
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        hit = kb.search("green tea temperature").hits[0]
        assert hit.document_id == "tea" and hit.scores.dense is not None
        assert kb.chunk(hit.chunk_id).text == TEA
        write_in_another_process(flat, "bulk", 3)  # sextant-ingest beside a server: its own process
        bulk = [h for h in kb.search("bulk chunk 2", abstain=False).hits if h.document_id == "bulk"]
        assert bulk and all(h.scores.dense is not None for h in bulk)
        assert {h.text for h in bulk} <= {f"bulk chunk {i}" for i in range(3)}
        assert kb.stats().chunks == 4 and kb.store.reloads == 0
        # A write of its own: Chroma's index is loaded to be added to, but no chunk is read from Chroma.
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        assert kb.search("queen laying in spring").hits[0].document_id == "bees"
        assert kb.stats().chunks == 5


def test_a_chunk_the_index_lacks_is_read_from_the_store(flat: KbSettings, embedder: Embedder) -> None:
    """The index's files behind the store (a writer died between the two): the store still answers, with no vector
    where it keeps its vectors in the index alone."""
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        assert kb.ann is not None and kb.store.vectors_in_index
        (chunk_id,) = kb.ann.ids()
        kb.ann.remove([chunk_id])
        (read,) = kb.indexes.chunks.get([chunk_id], vectors=True)
        assert read.text == TEA and read.vector is None
        assert kb.indexes.chunks.get(["no such chunk"]) == []


def test_without_an_ann_index_chunks_come_from_the_store(settings: KbSettings, embedder: Embedder) -> None:
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        assert kb.ann is None
        (chunk_id,) = kb.store.chunk_ids()
        assert [c.text for c in kb.indexes.chunks.get([chunk_id, "none"])] == [TEA]
        assert kb.indexes.chunks.get([chunk_id])[0].vector is None
        assert kb.indexes.chunks.get([chunk_id], vectors=True)[0].vector is not None
