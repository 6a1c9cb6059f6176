"""Moving a store to another embedder from the chunks it holds: shadow, swap, retire (``sextant.kb.migrate``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sextant.kb.chroma_client import StoreError, close_client, open_client
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.indexing import DEFAULT_POLICY, index_text
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.live_collections import CHUNKS, Collections, Manifest, existing, read_manifest, write_manifest
from sextant.kb.migrate import MigrationError, converge, exclusive, migrate
from sextant.kb.store import ChunkStore
from sextant.settings import KbSettings

TOPICS = {
    "espresso": "Descale the espresso machine every eight weeks with citric acid; backflush the group head weekly.",
    "bees": "In spring the beekeeper checks the queen is laying; swarm control starts in May with extra supers.",
    "bread": "A sourdough starter is fed flour and water daily; the dough proves overnight in a cool kitchen.",
    "bikes": "Clean and lubricate the bicycle chain every few hundred kilometres; check tyre pressure weekly.",
}


def _text(topic: str) -> str:
    return " ".join(f"{TOPICS[topic]} Note {i} on {topic}." for i in range(12))


@pytest.fixture
def small_chunks(tmp_path: Path) -> KbSettings:
    return KbSettings(chroma_dir=tmp_path / "store", chunk_tokens=48, lexical_refresh_s=0, _env_file=None)


@pytest.fixture
def filled(small_chunks: KbSettings, embedder: Embedder) -> KbSettings:
    with KnowledgeBase.open(small_chunks, embedder=embedder) as kb:
        for topic in TOPICS:
            kb.ingest(topic, LoadedDocument(text=_text(topic), title=topic.title()))
        kb.set_overview("bees", "Beekeeping through the year: queens, swarms and supers.")
    return small_chunks


@pytest.fixture
def client(filled: KbSettings) -> Iterator[Any]:
    opened = open_client(path=filled.store_dir(), url=None)
    yield opened
    close_client(opened)


def _snapshot(kb: KnowledgeBase) -> dict[str, tuple[str, dict[str, Any]]]:
    ids = [cid for r in kb.store.list_documents() for cid in r.chunk_ids()]
    return {c.id: (c.text, c.meta) for c in kb.store.get_chunks(ids)}


def test_every_chunk_is_re_embedded_and_the_new_pair_replaces_the_old(
    filled: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    with KnowledgeBase.open(filled, embedder=embedder) as kb:
        before, records = _snapshot(kb), kb.store.list_documents()
    report = migrate(client, other_embedder, batch=5)
    assert (report.old_embedder, report.new_embedder) == (embedder.name, other_embedder.name)
    assert report.embedded == report.chunks == len(before) and report.documents == 4
    assert read_manifest(client) == Manifest(live=Collections.shadow_for(other_embedder.name))
    assert CHUNKS not in existing(client)  # the old pair is gone once the new one is live

    moved = filled.model_copy(update={"embedder": other_embedder.name})
    with KnowledgeBase.open(moved, embedder=other_embedder) as kb:
        assert kb.store.list_documents() == records and _snapshot(kb) == before
        chunks = kb.store.get_chunks(list(before), vectors=True)
        expected = other_embedder.embed([index_text(c.text, c.meta, DEFAULT_POLICY.dense_context) for c in chunks])
        np.testing.assert_allclose(np.stack([c.vector for c in chunks if c.vector is not None]), expected, atol=1e-5)
        assert kb.stats().dimension == 128 and kb.stats().embedder == other_embedder.name
        assert kb.search("how often to descale the espresso machine", k=1).hits[0].document_id == "espresso"
        assert sorted(kb.lexical.ids()) == sorted(before)
    with pytest.raises(StoreError, match="built with embedder"):  # the store is bound to the new embedder now
        KnowledgeBase.open(filled, embedder=embedder)


def test_a_search_during_the_migration_answers_from_the_old_vectors(
    filled: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    question = "when does swarm control start?"
    seen: list[tuple[str, float]] = []
    with KnowledgeBase.open(filled, embedder=embedder) as kb:
        answer = kb.search(question, k=1)

        def search_meanwhile(done: int, total: int) -> None:
            if not seen:
                during = kb.search(question, k=1)
                seen.append((during.hits[0].chunk_id, during.best_dense))

        migrate(client, other_embedder, batch=4, progress=search_meanwhile)
        assert seen == [(answer.hits[0].chunk_id, answer.best_dense)]


class _Stop(Exception):
    pass


def test_an_interrupted_migration_leaves_the_store_intact_and_resumes_without_redoing_batches(
    filled: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    def stop_after_two_batches(done: int, total: int) -> None:
        if done >= 6:
            raise _Stop

    with pytest.raises(_Stop):
        migrate(client, other_embedder, batch=3, progress=stop_after_two_batches)
    assert read_manifest(client) == Manifest()  # nothing swapped
    with KnowledgeBase.open(filled, embedder=embedder) as kb:
        assert kb.search("sourdough starter", k=1).hits[0].document_id == "bread"
        total = kb.store.chunk_count()
    report = migrate(client, other_embedder, batch=3)
    assert report.embedded == total - 6 and report.chunks == total


def test_writes_made_during_the_migration_reach_the_new_store(
    filled: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    with KnowledgeBase.open(filled, embedder=embedder) as kb:

        def write_meanwhile(done: int, total: int) -> None:
            if kb.store.get_document("bikes") is not None:
                kb.forget("bikes")
                kb.ingest("tea", LoadedDocument(text="Steep green tea at eighty degrees for two minutes.", title="Tea"))
                kb.set_overview("espresso", "Espresso machine care: descaling and backflushing.")

        migrate(client, other_embedder, batch=4, progress=write_meanwhile)
    moved = filled.model_copy(update={"embedder": other_embedder.name})
    with KnowledgeBase.open(moved, embedder=other_embedder) as kb:
        assert [r.id for r in kb.store.list_documents()] == ["bees", "bread", "espresso", "tea"]
        named = sorted(cid for r in kb.store.list_documents() for cid in r.chunk_ids())
        assert sorted(kb.store.chunk_ids()) == named
        overview = kb.store.get_document("espresso")
        assert overview is not None
        hit = kb.search("descaling and backflushing overview", k=5, doc_ids=["espresso"]).hits
        assert overview.overview_id() in {h.chunk_id for h in hit}


def test_a_run_killed_after_the_swap_is_finished_by_the_next(
    client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    old = ChunkStore(client, embedder.name, embedder.dim)
    target = Collections.shadow_for(other_embedder.name)
    converge(old, ChunkStore(client, other_embedder.name, other_embedder.dim, target), other_embedder)
    write_manifest(client, Manifest(live=target, retired=Collections()))  # the swap, then the kill
    with pytest.raises(MigrationError, match="finish it first: sextant-kb-migrate --embedder"):
        migrate(client, embedder)
    report = migrate(client, other_embedder)
    assert report.resumed_swap and report.embedded == 0 and report.documents == 4
    assert read_manifest(client) == Manifest(live=target) and CHUNKS not in existing(client)


def test_the_ann_index_is_rebuilt_for_the_new_vectors(
    filled: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    flat = filled.model_copy(update={"ann_index": "flat"})
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        assert kb.ann is not None and kb.ann.dim == 384
    migrate(client, other_embedder)
    with KnowledgeBase.open(flat.model_copy(update={"embedder": other_embedder.name}), embedder=other_embedder) as kb:
        assert kb.ann is not None and kb.ann.dim == 128 and kb.ann.ids() == kb.store.chunk_ids()
        assert kb.search("chain lubrication for a bicycle", k=1, mode="dense").hits[0].document_id == "bikes"


def test_the_same_embedder_and_a_busy_store_are_refused(filled: KbSettings, client: Any, embedder: Embedder) -> None:
    with pytest.raises(MigrationError, match="already uses embedder 'all-MiniLM-L6-v2'"):
        migrate(client, embedder)
    holder = exclusive(filled.store_dir())
    holder.__enter__()
    try:
        with pytest.raises(MigrationError, match="busy: another sextant-kb-migrate"), exclusive(filled.store_dir()):
            pass
    finally:
        holder.__exit__(None, None, None)


def test_an_abandoned_shadow_of_another_embedder_is_removed(
    client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    abandoned = Collections.shadow_for("some-other-model")
    ChunkStore(client, "some-other-model", 8, abandoned)
    migrate(client, other_embedder)
    assert abandoned.chunks not in existing(client)


def test_a_store_made_for_sextant_s_own_index_keeps_a_minimal_chroma_index(
    small_chunks: KbSettings, embedder: Embedder, other_embedder: Embedder
) -> None:
    flat = small_chunks.model_copy(update={"ann_index": "flat"})
    with KnowledgeBase.open(flat, embedder=embedder) as kb:
        kb.ingest("bikes", LoadedDocument(text=_text("bikes"), title="Bikes"))
    opened = open_client(path=flat.store_dir(), url=None)
    try:
        migrate(opened, other_embedder)
        migrated = ChunkStore(opened, other_embedder.name, other_embedder.dim)
        assert migrated.dense_index == "flat" and migrated._chunks.configuration["hnsw"]["max_neighbors"] == 4
    finally:
        close_client(opened)
