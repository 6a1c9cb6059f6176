"""The knowledge base on the embedded store and on a real Chroma server process (SEXTANT_CHROMA_URL), same tests;
and two knowledge bases on one store, each following the other's writes."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.kb.derived_indexes import FULL_DIFF_EVERY
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.store import ChunkStore
from sextant.settings import KbSettings
from tests.chroma_process import running_chroma

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url


@pytest.fixture(params=["embedded", "server"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> KbSettings:
    """The same knowledge base on the embedded store and on a real ``chroma run`` server."""
    url = request.getfixturevalue("chroma_url") if request.param == "server" else None
    return KbSettings(chroma_url=url, chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]


def test_ingest_search_replace_and_forget_on_either_store(store_settings: KbSettings, embedder: Embedder) -> None:
    with KnowledgeBase.open(store_settings, embedder=embedder) as kb:
        _ingest_replace_forget(kb, store_settings.chroma_url or str(store_settings.store_dir()))
    # A second client of the same store, with its own BM25 cache, sees the same corpus (the cache is rebuilt).
    other = store_settings.model_copy(update={"chroma_dir": store_settings.store_dir().parent / "other"})
    if store_settings.chroma_url is None:
        other = store_settings  # an embedded store has one folder: reopen it, from its saved BM25 index
    with KnowledgeBase.open(other, embedder=embedder) as reopened:
        assert [d.id for d in reopened.documents()] == ["tea"]
        assert reopened.search("green tea oxidation", mode="lexical", abstain=False).hits[0].document_id == "tea"
        reopened.forget("tea")  # the module's server is shared by the tests that follow


def _ingest_replace_forget(kb: KnowledgeBase, store: str) -> None:
    assert kb.stats().store == store
    kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised, between 8 and 85 percent.", title="Tea"))
    kb.ingest("bees", LoadedDocument(text="Swarm control starts in May by adding supers.", title="Bees"))
    assert kb.search("how oxidised is oolong", k=1).hits[0].document_id == "tea"
    kb.ingest("tea", LoadedDocument(text="Green tea is not oxidised at all.", title="Tea"))
    assert kb.stats().chunks == 2
    assert kb.forget("bees") == 1
    assert kb.stats().chunks == kb.stats().lexical_chunks == 1


# --- several clients of one store: the BM25 cache follows the others' writes (learning/scale.md) -----------

OOLONG = LoadedDocument(text="Oolong is partially oxidised, between 8 and 85 percent.", title="Tea")
ROOIBOS = LoadedDocument(text="Rooibos is a caffeine-free herbal infusion from South Africa.", title="Tea")
BEES = LoadedDocument(text="Swarm control starts in May by adding supers.", title="Bees")


@pytest.fixture
def replicas(store_settings: KbSettings, embedder: Embedder) -> Iterator[tuple[KnowledgeBase, KnowledgeBase]]:
    """Two knowledge bases on one store, checking it before every search: on a server each has its own
    BM25 folder (two agent replicas); embedded they share the folder (sextant-kb beside sextant-ingest)."""
    a, b = _pair(store_settings)
    with KnowledgeBase.open(a, embedder=embedder) as kb_a, KnowledgeBase.open(b, embedder=embedder) as kb_b:
        yield kb_a, kb_b
        for doc in kb_a.documents():  # the module's server is shared by the tests that follow
            kb_a.forget(doc.id)


def _pair(settings: KbSettings) -> tuple[KbSettings, KbSettings]:
    a = settings.model_copy(update={"lexical_refresh_s": 0.0})
    return a, a if a.chroma_url is None else a.model_copy(update={"chroma_dir": a.store_dir().parent / "replica-b"})


def _lexical_ids(kb: KnowledgeBase, query: str) -> list[str]:
    return [h.document_id for h in kb.search(query, mode="lexical", abstain=False).hits]


def test_a_replica_finds_what_another_ingested_and_drops_what_it_forgot(
    replicas: tuple[KnowledgeBase, KnowledgeBase],
) -> None:
    a, b = replicas
    a.ingest("tea", OOLONG)
    assert _lexical_ids(b, "oolong oxidised") == ["tea"]
    a.ingest("tea", ROOIBOS)
    assert _lexical_ids(b, "rooibos caffeine") == ["tea"]
    assert b.lexical.ids() == a.lexical.ids()  # the replaced version's chunk left B's index too
    a.forget("tea")
    assert _lexical_ids(b, "rooibos caffeine") == []
    assert b.stats().lexical_chunks == 0


def test_a_writer_that_missed_another_writers_change_catches_up_at_its_own_write(
    replicas: tuple[KnowledgeBase, KnowledgeBase],
) -> None:
    a, b = replicas
    a.ingest("tea", OOLONG)
    b.ingest("bees", BEES)  # no search in between: B learns of A's write because its bump is not g + 1
    assert sorted(b.lexical.ids()) == sorted(a.document("tea").chunk_ids() + a.document("bees").chunk_ids())


def test_a_lost_bump_is_caught_by_the_periodic_full_diff(chroma_url: str, tmp_path: Path, embedder: Embedder) -> None:
    """Replicas on other machines share no lock (``StoreLock``), so two bumps can collide; on one machine the
    lock orders them and a change always moves the counter."""
    a_settings, b_settings = _pair(KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path / "a", _env_file=None))  # type: ignore[call-arg]
    with KnowledgeBase.open(a_settings, embedder=embedder) as a, KnowledgeBase.open(b_settings, embedder=embedder) as b:
        try:
            _collide(a, b)
        finally:
            for doc in a.documents():
                a.forget(doc.id)


def _collide(a: KnowledgeBase, b: KnowledgeBase) -> None:
    a.ingest("tea", OOLONG)
    assert _lexical_ids(b, "oolong oxidised") == ["tea"]
    before = a.store.generation
    a.ingest("tea", ROOIBOS)  # the same chunk count: only the ids differ
    # B's bump read the counter before A's landed, so both store before + 1: rewind it as a third client
    # of the store would, through Chroma's own API.
    _set_generation(a, before)
    b.ingest("bees", BEES)
    assert a.store.generation == before + 1  # counter and count now match what B believes it holds
    found = [_lexical_ids(b, "rooibos caffeine") == ["tea"] for _ in range(FULL_DIFF_EVERY)]
    assert not found[0], "the collision was not simulated: B saw A's write at once"
    assert found[-1] and found == sorted(found)  # caught within FULL_DIFF_EVERY checks, and kept


def test_a_replica_saves_what_it_followed_when_it_closes(
    chroma_url: str, tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = _pair(KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path / "a", _env_file=None))  # type: ignore[call-arg]
    with KnowledgeBase.open(a, embedder=embedder) as writer:
        with KnowledgeBase.open(b, embedder=embedder) as reader:
            writer.ingest("tea", OOLONG)
            assert _lexical_ids(reader, "oolong oxidised") == ["tea"]  # followed in memory, not saved yet
        caplog.clear()  # the first opens rebuilt empty indexes; only the reopen is in question
        with (
            caplog.at_level(logging.INFO, logger="sextant.kb.knowledge_base"),
            KnowledgeBase.open(b, embedder=embedder) as reopened,
        ):
            assert reopened.lexical.ids() == writer.lexical.ids()
        assert not [r for r in caplog.records if "rebuilding the BM25 index" in r.getMessage()]
        writer.forget("tea")


def _set_generation(kb: KnowledgeBase, generation: int) -> None:
    """Store ``generation`` as the counter, as a third client of the store writing its own bump would."""
    other = ChunkStore.open(
        path=kb.settings.store_dir(), url=kb.settings.chroma_url, embedder=kb.embedder.name, dim=kb.embedder.dim
    )
    try:
        other._chunks.modify(metadata={**other._fresh_metadata(), "generation": generation})
    finally:
        other.close()
