"""SEXTANT_ANN_INDEX routes live dense retrieval through our index, kept in step with ingest, forget and restarts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.ann.live import LiveIndex
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.kb.stored import StoredChunk
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
        _, vectors = kb.chunk_vectors()  # the store made for the index keeps its vectors there alone
        assert ours == pytest.approx(sorted((vectors @ q).tolist(), reverse=True)[:5], abs=1e-4)
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


PARAMS = {"M": 8, "ef_search": 64, "nlist": 0, "nprobe": 16, "pq_m": 8, "oversample": 8}


def _unit(rows: int, seed: int, dim: int = 16) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _exact(ids: list[str], xb: np.ndarray, q: np.ndarray, n: int) -> list[str]:
    return [ids[i] for i in np.argsort(-(xb @ q))[:n]]


def _chunks(ids: list[str]) -> list[StoredChunk]:
    """Chunks with texts and metadata of every kind Chroma stores (from their ids), and letters beyond ASCII."""
    meta = {"w": 0.5, "ok": True}
    return [
        StoredChunk(c, f"Text of {c}: café, naïve, 東京", {"doc_id": c[0], "page": int(c[1:]), **meta}) for c in ids
    ]


def _read_back(index: LiveIndex, chunk_ids: list[str], vectors: np.ndarray) -> None:
    """The index gives back each of ``chunk_ids`` as it was added: text, metadata and vector."""
    got = index.chunks(chunk_ids)
    assert list(got) == chunk_ids
    for chunk, written, vector in zip(got.values(), _chunks(chunk_ids), vectors, strict=True):
        assert (chunk.id, chunk.text, chunk.meta) == (written.id, written.text, written.meta)
        np.testing.assert_array_equal(chunk.vector, vector)


def test_another_process_follows_a_write_by_reading_only_the_new_files(tmp_path: Path) -> None:
    writer = LiveIndex.open("hnsw", tmp_path, 16, PARAMS)
    writer.add(_chunks([f"a{i}" for i in range(30)]), _unit(30, 1))
    writer.save(1)
    reader = LiveIndex.open("hnsw", tmp_path, 16, PARAMS)  # another process, as far as the files go
    assert reader.generation == 1 and reader.ids() == writer.ids() and not reader.reopen()
    writer.remove(["a3", "a4"])
    writer.add(_chunks(["b0", "a5"]), _unit(2, 2))  # a5 indexed again: its first row is dead
    writer.save(2)
    assert reader.reopen() and reader.generation == 2
    assert reader.ids() == writer.ids() == {f"a{i}" for i in range(30)} - {"a3", "a4"} | {"b0"}
    np.testing.assert_array_equal(reader.vectors(["a5"])["a5"], _unit(2, 2)[1])
    _read_back(reader, ["b0", "a5"], _unit(2, 2))
    assert reader.chunks(["a3", "a6"]).keys() == {"a6"} and reader.chunks(["a6"])["a6"].meta["page"] == 6
    assert len(list(tmp_path.glob("delta-*.npz"))) == 2 and len(list(tmp_path.glob("dead-*.npy"))) == 1


def test_deltas_merge_into_a_mapped_base_that_answers_as_exact_search(tmp_path: Path) -> None:
    index = LiveIndex("hnsw", tmp_path, 16, PARAMS, merge_rows=100)
    ids, xb = [f"c{i}" for i in range(250)], _unit(250, 3)
    for lo in range(0, 250, 25):  # ten writes: deltas, merged into the base once they hold 100 rows
        index.add(_chunks(ids[lo : lo + 25]), xb[lo : lo + 25])
        index.save(lo)
    index.remove(ids[:10])
    index.save(300)
    bases = list(tmp_path.glob("base-*"))
    assert len(bases) == 1 and 0 < len(index._delta_ids) < 100
    reopened = LiveIndex.open("hnsw", tmp_path, 16, PARAMS)
    assert reopened._base is not None and isinstance(reopened._base.vectors, np.memmap)
    assert reopened.ids() == set(ids[10:]) and len(reopened) == 240
    _read_back(reopened, ids[10:], xb[10:])  # from the mapped base and from the deltas
    live_ids, live_xb = ids[10:], xb[10:]
    for q in _unit(20, 4):
        found = [cid for cid, _ in reopened.query(q, 5)]
        assert found == _exact(live_ids, live_xb, q, 5)  # 240 vectors: the graph finds the exact neighbours
    allowed = set(ids[100:120])
    only = reopened.query(xb[0], 3, allowed)
    assert [cid for cid, _ in only] == _exact(ids[100:120], xb[100:120], xb[0], 3)


def test_half_the_rows_dead_builds_the_base_again_from_the_vectors_it_keeps(tmp_path: Path) -> None:
    index = LiveIndex("flat", tmp_path, 16, PARAMS, merge_rows=50)
    ids, xb = [f"d{i}" for i in range(60)], _unit(60, 5)
    index.add(_chunks(ids), xb)
    index.save(1)
    first = next(tmp_path.glob("base-*")).name
    index.remove(ids[:40])
    index.save(2)
    assert [p.name for p in tmp_path.glob("base-*")] != [first] and index._offset == 20 and not index._dead
    assert index.ids() == set(ids[40:])
    np.testing.assert_array_equal(index.vectors(["d45"])["d45"], xb[45])
    _read_back(LiveIndex.open("flat", tmp_path, 16, PARAMS), ids[40:], xb[40:])


def test_a_small_ivfpq_index_answers_from_its_deltas_without_training_at_every_write(tmp_path: Path) -> None:
    index = LiveIndex("ivfpq_rerank", tmp_path, 16, PARAMS, merge_rows=100)
    ids, xb = [f"s{i}" for i in range(120)], _unit(120, 7)
    for lo in range(0, 90, 6):
        index.add(_chunks(ids[lo : lo + 6]), xb[lo : lo + 6])
        index.save(lo)
    assert index._base is None and not list(tmp_path.glob("base-*"))  # 90 rows: exact search over the deltas
    assert [cid for cid, _ in index.query(xb[3], 3)] == _exact(ids[:90], xb[:90], xb[3], 3)
    index.add(_chunks(ids[90:]), xb[90:])
    index.save(200)
    assert index._base is not None and len(index._base) == 120 and index._trained_on == 120


@pytest.mark.parametrize(("older", "version"), [("chunks.json", 1), ("manifest.json", 2)])
def test_a_folder_of_an_older_format_opens_empty_and_its_files_go_at_the_first_save(
    tmp_path: Path, older: str, version: int
) -> None:
    (tmp_path / older).write_text(f'{{"format": {version}}}', encoding="utf-8")
    (tmp_path / "hnsw").mkdir()
    index = LiveIndex.open("hnsw", tmp_path, 16, PARAMS)
    assert index.generation == -1 and len(index) == 0
    index.add(_chunks(["e0"]), _unit(1, 6))
    index.save(3)
    assert {p.name for p in tmp_path.iterdir()} == {"manifest.json", *index._deltas}
    assert len(LiveIndex.open("hnsw", tmp_path, 16, PARAMS)) == 1
    for other in (
        LiveIndex.open("hnsw", tmp_path, 16, {**PARAMS, "M": 12}),  # other parameters
        LiveIndex.open("hnsw", tmp_path, 16, PARAMS, embedder="another model"),  # vectors of a migrated store
    ):
        assert other.generation == -1 and len(other) == 0
