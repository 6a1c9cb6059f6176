"""BM25 and the ANN index kept in step with the store: this process's writes, other writers, a cache behind."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import NoReturn

import pytest

from sextant.kb import lexical
from sextant.kb.derived_indexes import DerivedIndexes, ann_dir, lexical_dir
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore
from sextant.kb.stored import StoredChunk
from sextant.settings import KbSettings
from tests.kb.random_writes import write_in_another_process, write_random

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
    with indexes.writing():
        generation = store.bump_generation()
        indexes.commit(generation, [], [StoredChunk("tea~1~0", TEA, meta)], embedder.embed([TEA]))
    assert _ids(indexes) == (["tea~1~0"], {"tea~1~0"})
    assert LexicalIndex.open(lexical_dir(flat)).generation == generation == indexes.lexical.generation
    with indexes.writing():
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


def test_a_cache_out_of_step_with_the_store_follows_it_by_chunk_id_without_retokenizing_the_rest(
    flat: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that followed another's writes saves what it followed at close; when the other then forgets a
    document, the cache holds chunks the store does not. The next open drops those and adds what is missing."""
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        stale = LexicalIndex.open(lexical_dir(flat))
        kb.forget("bees")
        kb.ingest("milk", LoadedDocument(text="Scald the milk before the yeast goes in.", title="Milk"))
        stale.save(generation=kb.store.generation - 1)  # as that process left it: bees still in, milk not yet
        live = kb.store.chunk_ids()
        tokenized: list[str] = []
        real = lexical.content_words
        monkeypatch.setattr(lexical, "content_words", lambda text: tokenized.append(text) or real(text))
        reopened = DerivedIndexes.for_settings(flat, kb.store, LexicalIndex.open(lexical_dir(flat)))
        assert _ids(reopened) == (sorted(live), live)
        assert [t for t in tokenized if "yeast" in t] == tokenized and len(tokenized) == 1  # only milk's chunk
        assert reopened.lexical.generation == kb.store.generation
        assert reopened.lexical.search("honey beekeeper", 5) == []


def test_a_batch_saves_once_at_its_end(flat: KbSettings, embedder: Embedder) -> None:
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        before = kb.lexical.generation
        with kb.indexes.batch():
            kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
            kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
            assert LexicalIndex.open(lexical_dir(flat)).generation == before
        assert LexicalIndex.open(lexical_dir(flat)).generation == kb.store.generation


def test_a_write_over_another_process_s_large_write_keeps_its_vectors(settings: KbSettings, embedder: Embedder) -> None:
    """Chroma saves its vector index every 1,000 records; a process writing over a stale copy of it used to save
    that copy over the other's and lose its vectors (learning/shared-store.md). The lock's catch-up prevents it."""
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        write_in_another_process(settings, "bulk", 1200)
        ours = write_random(kb.store, kb.indexes, "ours", 1100)  # past 1,000 records: this process saves its index
    with KnowledgeBase.open(settings, embedder=embedder) as fresh:
        ids = sorted(fresh.store.chunk_ids())
        assert len(ids) == 2301
        assert len(fresh.store.get_chunks(ids, vectors=True)) == 2301  # each one's vector is in the index
        for cid in ("bulk~bulk00000000~7", ours[7]):
            chunk = fresh.store.get_chunks([cid], vectors=True)[0]
            assert chunk.vector is not None and fresh.store.query(chunk.vector, 1)[0][0] == cid


def test_a_search_after_another_process_wrote_reopens_the_store_and_finds_the_new_chunks(
    settings: KbSettings, embedder: Embedder
) -> None:
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        assert kb.search("green tea temperature").hits
        with KnowledgeBase.open(settings, embedder=embedder) as same_process:  # shares this process's client
            assert same_process.store.reloads == 0
        write_in_another_process(settings, "bulk", 3)
        found = kb.search("bulk chunk 2", mode="lexical", abstain=False)
        assert found.hits[0].document_id == "bulk"
        assert kb.store.reloads == 1 and kb.indexes.followed == 1
        assert kb.search("bulk chunk 2", abstain=False).hits  # hybrid: the new chunks' vectors are readable here
        kb.search("bulk chunk 2")
        assert kb.store.reloads == 1  # nothing moved since


def test_other_processes_writes_are_followed_from_their_journal_without_listing_the_records(
    settings: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        assert kb.search("green tea temperature").hits
        listings: list[int] = []
        real = kb.indexes._live_ids
        monkeypatch.setattr(kb.indexes, "_live_ids", lambda: listings.append(1) or real())
        write_in_another_process(settings, "bulk", 3)
        found = kb.search("bulk chunk 2", mode="lexical", abstain=False)
        assert found.hits[0].document_id == "bulk"
        assert listings == [] and kb.indexes.followed == 1
        assert sorted(kb.lexical.ids()) == sorted(kb.store.chunk_ids())


def test_a_write_that_left_no_true_journal_entry_is_followed_by_listing_the_records(
    settings: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that died mid-write left no entry; one that wrote without saying what (an older version) left an
    entry that does not account for the store's generation. Either way the reader lists the records, exact."""
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        listings: list[int] = []
        real = kb.indexes._live_ids
        monkeypatch.setattr(kb.indexes, "_live_ids", lambda: listings.append(1) or real())
        with KnowledgeBase.open(settings, embedder=embedder) as writer:
            with pytest.raises(RuntimeError, match="killed"), writer.indexes.writing():
                writer.store.delete_document("tea")
                raise RuntimeError("killed before its journal entry")
            assert kb.search("beekeeper queen honey", mode="lexical", abstain=False).hits
            assert listings == [1] and "tea" not in {h.split("~")[0] for h in kb.lexical.ids()}
            with writer.indexes.writing():
                writer.store.delete_document("bees")  # the store changed, the entry says nothing
            assert kb.search("beekeeper queen honey", mode="lexical", abstain=False).hits == []
            assert listings == [1, 1] and kb.lexical.ids() == []


def test_with_an_ann_index_another_process_s_write_is_followed_from_its_files_not_by_reopening_chroma(
    flat: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reopening Chroma's segments costs seconds at 1M chunks (learning/scale.md); with an ANN index the vectors
    come from the files the writer saved, and the segments are reopened only before this process writes."""
    monkeypatch.setenv("SEXTANT_ANN_INDEX", "flat")  # the other process's settings: the same index
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        assert kb.search("green tea temperature").hits
        write_in_another_process(flat, "bulk", 3)
        found = kb.search("bulk chunk 2", abstain=False)
        bulk = [h for h in found.hits if h.document_id == "bulk"]
        assert bulk and all(h.scores.dense is not None for h in bulk)  # their vectors were read here
        assert kb.store.reloads == 0 and kb.indexes.followed == 1
        assert kb.ann is not None and len(kb.ann) == kb.store.chunk_count() == 4
        vector = kb.ann.vectors([bulk[0].chunk_id])[bulk[0].chunk_id]
        assert kb.ann.query(vector, 1)[0][0] == bulk[0].chunk_id
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))  # a write: Chroma's copy must hold bulk's vectors
        assert kb.store.reloads == 1
    with KnowledgeBase.open(flat, embedder=embedder) as fresh:
        ids = sorted(fresh.store.chunk_ids())
        assert len(fresh.store.get_chunks(ids, vectors=True)) == len(ids) == 5
        assert fresh.ann is not None and fresh.ann.ids() == set(ids)


def test_a_process_asked_for_chroma_s_index_on_a_store_made_for_sextant_s_uses_sextant_s(
    flat: KbSettings, embedder: Embedder
) -> None:
    """A shell command run without SEXTANT_ANN_INDEX beside a server with it: Chroma's minimal index would answer
    badly, so the store's own choice stands."""
    with KnowledgeBase.open(flat, embedder=embedder) as made:
        made.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
    default = flat.model_copy(update={"ann_index": "chroma"})
    with KnowledgeBase.open(default, embedder=embedder) as kb:
        assert kb.store.dense_index == "flat" and kb.ann is not None and kb.ann.kind == "flat"
        assert kb.search("green tea temperature", mode="dense").hits[0].document_id == "tea"


def test_a_lost_index_of_a_store_that_keeps_no_vectors_is_built_again_by_embedding_the_texts(
    flat: KbSettings, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    """The store's vectors were in the index alone (``ChunkStore.vectors_in_index``): its folder removed, they are
    embedded again from the store's texts, and dense search answers as before."""
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        before = kb.search("green tea temperature", mode="dense").hits[0]
    shutil.rmtree(ann_dir(flat))
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        assert kb.store.vectors_in_index and kb.ann is not None and len(kb.ann) == 2
        after = kb.search("green tea temperature", mode="dense").hits[0]
        assert (after.chunk_id, round(after.scores.dense or 0, 5)) == (
            before.chunk_id,
            round(before.scores.dense or 0, 5),
        )
    assert "embedded 2 chunks again" in caplog.text


def test_an_index_built_for_another_kind_takes_the_vectors_from_the_saved_one(
    flat: KbSettings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither Chroma nor the embedder is asked: the saved index of the old kind holds every vector."""
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text=TEA, title="Tea"))
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        (chunk_id,) = [h.chunk_id for h in kb.search("queen laying in spring", mode="dense").hits[:1]]
        assert kb.ann is not None
        kept = kb.ann.vectors([chunk_id])[chunk_id]
    monkeypatch.setattr(DerivedIndexes, "_embed", _refused)
    monkeypatch.setattr(ChunkStore, "get_chunks", _refused)
    hnsw = flat.model_copy(update={"ann_index": "hnsw"})
    with KnowledgeBase.open(hnsw, embedder=embedder) as kb:
        assert kb.ann is not None and kb.ann.kind == "hnsw" and len(kb.ann) == 2
        assert (kb.ann.vectors([chunk_id])[chunk_id] == kept).all()


def _refused(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("the vectors were not taken from the saved index")
