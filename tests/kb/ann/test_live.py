"""SEXTANT_ANN_INDEX routes live dense retrieval through our index, kept in step with ingest, forget and restarts."""

from __future__ import annotations

import pytest

from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.settings import KbSettings

ESPRESSO = (
    "Descale the espresso machine every eight weeks with a citric acid solution. "
    "Backflush the group head weekly using a blind basket and detergent. "
)
BEES = "In early spring the beekeeper checks that the queen is laying and that stores of honey last. "


def _doc(text: str, title: str) -> LoadedDocument:
    return LoadedDocument(text=text, title=title)


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivfpq_rerank"])
def test_dense_search_follows_ingest_forget_and_reopen(settings: KbSettings, embedder: Embedder, kind: str) -> None:
    chosen = settings.model_copy(update={"ann_index": kind})
    with KnowledgeBase.open(chosen, embedder=embedder) as kb:
        kb.ingest("espresso", _doc(ESPRESSO * 20, "Espresso care"))
        kb.ingest("bees", _doc(BEES * 20, "Bees"))
        assert kb.ann is not None and len(kb.ann) == kb.store.chunk_count() > 4
        q = kb.embedder.embed(["how often to descale the espresso machine"])[0]
        # Repeated text gives near-identical chunks, so compare the scores found, not the tie order.
        ours = [score for _, score in kb.ann.query(q, 5)]
        chroma = [score for _, score in kb.store.query(q, 5)]
        assert ours == pytest.approx(chroma, abs=1e-4)
        assert kb.search("descale the espresso machine", mode="dense", abstain=False).hits[0].document_id == "espresso"
        only_bees = kb.search("descale the machine", k=3, mode="dense", doc_ids=["bees"], abstain=False)
        assert only_bees.hits and {h.document_id for h in only_bees.hits} == {"bees"}
        kb.forget("espresso")
        assert len(kb.ann) == kb.store.chunk_count()
        after = kb.search("descale the espresso machine", k=5, mode="dense", abstain=False)
        assert {h.document_id for h in after.hits} == {"bees"}
        generation = kb.store.generation
    with KnowledgeBase.open(chosen, embedder=embedder) as again:  # loaded from disk, not rebuilt
        assert (
            again.ann is not None and again.ann.generation == generation and len(again.ann) == again.store.chunk_count()
        )
        # Another writer (here: the store directly) moves the store on; the next open catches up.
        again.store.delete_document("bees")
    with KnowledgeBase.open(chosen, embedder=embedder) as caught_up:
        assert caught_up.ann is not None and len(caught_up.ann) == 0


def test_a_pq_size_that_does_not_divide_the_dimension_is_refused(settings: KbSettings, embedder: Embedder) -> None:
    bad = settings.model_copy(update={"ann_index": "ivfpq", "ann_pq_m": 5})
    with pytest.raises(KnowledgeBaseError, match="SEXTANT_ANN_PQ_M"):
        KnowledgeBase.open(bad, embedder=embedder)


def test_dense_search_follows_another_clients_writes(settings: KbSettings, embedder: Embedder) -> None:
    """Like the BM25 cache, the index follows writes by another client of the store (sextant-ingest beside
    sextant-kb here), before a search; overviews are chunks in it too."""
    flat = settings.model_copy(update={"ann_index": "flat", "lexical_refresh_s": 0.0})
    with KnowledgeBase.open(flat, embedder=embedder) as server, KnowledgeBase.open(flat, embedder=embedder) as ingest:
        ingest.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
        ingest.set_overview("espresso", "How to keep an espresso machine clean.")
        ingest.ingest("bees", _doc(BEES, "Bees"))
        assert (
            server.search("descale the espresso machine", mode="dense", abstain=False).hits[0].document_id == "espresso"
        )
        assert server.ann is not None and ingest.ann is not None
        live = {cid for doc in ("espresso", "bees") for cid in server.document(doc).chunk_ids()}
        assert server.ann.ids() == ingest.ann.ids() == live and len(live) == 3  # two chunks and the overview
        ingest.forget("espresso")
        after = server.search("descale the espresso machine", k=5, mode="dense", abstain=False)
        assert {h.document_id for h in after.hits} == {"bees"} and len(server.ann) == server.store.chunk_count()
