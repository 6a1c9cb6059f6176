"""A process that has the store open when ``sextant-kb-migrate`` swaps it goes on with the new embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sextant.kb import follow_migration
from sextant.kb.chroma_client import close_client, open_client
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder, EmbedderError
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.live_collections import read_manifest
from sextant.kb.migrate import migrate
from sextant.kb.store import StoreError
from sextant.settings import KbSettings

BEES = "In spring the beekeeper checks the queen is laying; swarm control starts in May with extra supers."
QUESTION = "when does swarm control start?"


@pytest.fixture
def store(tmp_path: Path) -> KbSettings:
    return KbSettings(chroma_dir=tmp_path / "store", chunk_tokens=48, _env_file=None)  # type: ignore[call-arg]


@pytest.fixture
def client(store: KbSettings) -> Iterator[Any]:
    opened = open_client(path=store.store_dir(), url=None)
    yield opened
    close_client(opened)


def test_a_call_after_the_swap_follows_it_with_the_new_embedder_and_collections(
    store: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder
) -> None:
    with KnowledgeBase.open(store, embedder=embedder) as kb:
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        before = kb.search(QUESTION, k=1)
        migrate(client, other_embedder, batch=4)
        after = kb.search(QUESTION, k=1)  # no restart: the store's new embedder is loaded and its pair opened
        assert kb.embedder.name == other_embedder.name and kb.store.collections == read_manifest(client).live
        assert after.hits[0].document_id == "bees" and after.best_dense != before.best_dense
        assert kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised.", title="Tea")).status == "added"
        assert kb.search("how oxidised is oolong", k=1).hits[0].document_id == "tea"
        assert kb.stats().embedder == other_embedder.name


def test_an_embedder_this_process_cannot_load_asks_for_a_restart_with_it(
    store: KbSettings, client: Any, embedder: Embedder, other_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str, *_: object) -> Embedder:
        raise EmbedderError(f"{name} is not installed here")

    with KnowledgeBase.open(store, embedder=embedder) as kb:
        kb.ingest("bees", LoadedDocument(text=BEES, title="Bees"))
        migrate(client, other_embedder, batch=4)
        monkeypatch.setattr(follow_migration, "load_embedder", missing)
        with pytest.raises(StoreError, match=f"migrated to embedder '{other_embedder.name}'.*SEXTANT_EMBEDDER"):
            kb.search(QUESTION, k=1)
