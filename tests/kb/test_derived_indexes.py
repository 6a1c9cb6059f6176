"""BM25 and the ANN index kept in step with the store: this process's writes, other writers, a cache behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sextant.kb.derived_indexes import DerivedIndexes, lexical_dir
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore, StoredChunk
from sextant.settings import KbSettings

TEA = "Steep green tea at eighty degrees for two minutes; black tea takes boiling water and four minutes."
BEES = "In early spring the beekeeper checks that the queen is laying and that stores of honey last."


@pytest.fixture
def flat(settings: KbSettings) -> KbSettings:
    return settings.model_copy(update={"ann_index": "flat", "lexical_refresh_s": 0.0})


@pytest.fixture
def store(flat: KbSettings, embedder: Embedder) -> Iterator[ChunkStore]:
    opened = ChunkStore.open(path=flat.store_dir(), url=None, embedder=embedder.name, dim=embedder.dim)
    yield opened
    opened.close()


def _ids(indexes: DerivedIndexes) -> tuple[list[str], set[str]]:
    assert indexes.ann is not None
    return sorted(indexes.lexical.ids()), indexes.ann.ids()


def test_a_commit_changes_both_indexes_and_stamps_the_store_generation(
    flat: KbSettings, store: ChunkStore, embedder: Embedder
) -> None:
    indexes = DerivedIndexes.for_settings(flat, store, LexicalIndex.open(lexical_dir(flat)))
    meta = {"doc_id": "tea", "title": "Tea", "start": 0, "end": len(TEA), "kind": "text"}
    with indexes.lock:
        generation = store.bump_generation()
        indexes.commit(generation, [], [StoredChunk("tea~1~0", TEA, meta)], embedder.embed([TEA]))
    assert _ids(indexes) == (["tea~1~0"], {"tea~1~0"})
    assert LexicalIndex.open(lexical_dir(flat)).generation == generation == indexes.lexical.generation
    with indexes.lock:
        indexes.commit(store.bump_generation(), ["tea~1~0"])
    assert _ids(indexes) == ([], set())


def test_indexes_behind_the_store_are_rebuilt_and_another_writer_is_followed(
    flat: KbSettings, embedder: Embedder
) -> None:
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        live = set(kb.store.chunk_ids())
        fresh = DerivedIndexes.for_settings(flat, kb.store, LexicalIndex.open(lexical_dir(flat).with_name("other")))
        assert _ids(fresh) == (sorted(live), live)  # an empty BM25 cache, rebuilt from the store at once
        with KnowledgeBase.open(flat, embedder=embedder) as writer:
            writer.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        assert kb.indexes.refresh()
        assert _ids(kb.indexes) == (sorted(kb.store.chunk_ids()), kb.store.chunk_ids())
        assert not kb.indexes.refresh()  # nothing moved since


def test_a_batch_saves_once_at_its_end(flat: KbSettings, embedder: Embedder) -> None:
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        before = kb.lexical.generation
        with kb.indexes.batch():
            kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
            kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
            assert LexicalIndex.open(lexical_dir(flat)).generation == before
        assert LexicalIndex.open(lexical_dir(flat)).generation == kb.store.generation
