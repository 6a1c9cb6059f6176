from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from sextant.kb import store as store_module
from sextant.kb.store import ChunkStore, StoreError
from sextant.kb.stored import ChunkBatch, DocumentRecord

DIM = 8


def _record(doc_id: str, n: int, content_hash: str) -> DocumentRecord:
    return DocumentRecord(
        id=doc_id,
        title=doc_id.title(),
        source=f"{doc_id}.md",
        category="",
        content_hash=content_hash,
        chunk_count=n,
        chars=10 * n,
        about="",
        ingested_at="2026-01-01T00:00:00+00:00",
        text="x" * (10 * n),
    )


def _batch(doc_id: str, n: int, seed: int) -> ChunkBatch:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return ChunkBatch(
        texts=[f"{doc_id} chunk {i} v{seed}" for i in range(n)],
        metas=[{"doc_id": doc_id, "index": i, "start": 10 * i, "end": 10 * i + 10} for i in range(n)],
        vectors=vectors,
    )


def _open(path: Path, embedder: str = "test-embedder", dim: int = DIM) -> ChunkStore:
    return ChunkStore.open(path=path, url=None, embedder=embedder, dim=dim)


def test_reingest_replaces_and_leaves_no_stale_chunks(tmp_path: Path) -> None:
    store = _open(tmp_path)
    first = store.write_documents([(_record("manual", 11, "a" * 64), _batch("manual", 11, 1))])
    assert store.chunk_count() == 11 and first.replaced == ()
    second = store.write_documents([(_record("manual", 1, "b" * 64), _batch("manual", 1, 2))])
    assert store.chunk_count() == 1
    assert set(second.replaced) == set(_record("manual", 11, "a" * 64).chunk_ids())
    assert second.generation == first.generation + 1
    record = store.get_document("manual")
    assert record is not None and record.chunk_count == 1
    assert [c.text for c in store.get_chunks(record.chunk_ids())] == ["manual chunk 0 v2"]


def test_query_returns_cosine_best_first_and_filters_by_document(tmp_path: Path) -> None:
    store = _open(tmp_path)
    a, b = _batch("a", 5, 1), _batch("b", 5, 2)
    store.write_documents([(_record("a", 5, "1" * 64), a)])
    store.write_documents([(_record("b", 5, "2" * 64), b)])
    hits = store.query(a.vectors[3], 3)
    assert hits[0][0] == _record("a", 5, "1" * 64).chunk_ids()[3]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [h[1] for h in hits] == sorted((h[1] for h in hits), reverse=True)
    only_b = store.query(a.vectors[3], 10, doc_ids=["b"])
    assert len(only_b) == 5 and all(cid.startswith("b~") for cid, _ in only_b)


def test_a_store_refuses_another_embedder_and_says_how_to_reindex(tmp_path: Path) -> None:
    _open(tmp_path).write_documents([(_record("a", 1, "1" * 64), _batch("a", 1, 1))])
    with pytest.raises(StoreError, match="re-index") as exc:
        _open(tmp_path, embedder="other-model", dim=DIM)
    assert "test-embedder" in str(exc.value)
    with pytest.raises(StoreError, match="dimension 8"):
        _open(tmp_path, dim=16)


class _FailingUpserts:
    """Fault injection at the storage boundary: the Chroma collection fails on its n-th upsert."""

    def __init__(self, collection: Any, fail_on: int) -> None:
        self._collection, self._calls, self._fail_on = collection, 0, fail_on

    def upsert(self, **kwargs: Any) -> None:
        self._calls += 1
        if self._calls == self._fail_on:
            raise RuntimeError("disk full (injected)")
        self._collection.upsert(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


@pytest.mark.parametrize("fail_on", [1, 2])
def test_a_failed_ingest_leaves_the_previous_version_intact(tmp_path: Path, fail_on: int) -> None:
    store = _open(tmp_path)
    store.write_documents([(_record("doc", 3, "1" * 64), _batch("doc", 3, 1))])
    generation = store.generation
    # Chunks go in batches of one, so the second upsert is mid-document; the third is the record.
    store._batch_size = 1
    store._chunks = _FailingUpserts(store._chunks, fail_on)  # type: ignore[assignment]
    with pytest.raises(StoreError, match="rolled back"):
        store.write_documents([(_record("doc", 4, "2" * 64), _batch("doc", 4, 2))])
    record = store.get_document("doc")
    assert record is not None and record.content_hash == "1" * 64
    assert store.chunk_count() == 3 and store.generation == generation
    assert {c.text for c in store.get_chunks(record.chunk_ids())} == {f"doc chunk {i} v1" for i in range(3)}


def test_a_group_write_is_one_write_of_every_document(tmp_path: Path) -> None:
    store = _open(tmp_path)
    store.write_documents([(_record("a", 2, "1" * 64), _batch("a", 2, 1))])
    generation = store.generation
    written = store.write_documents(
        [(_record("a", 3, "2" * 64), _batch("a", 3, 2)), (_record("b", 1, "3" * 64), _batch("b", 1, 3))]
    )
    assert written.generation == store.generation == generation + 1
    assert set(written.replaced) == set(_record("a", 2, "1" * 64).chunk_ids()) and written.existed == {"a"}
    assert store.chunk_count() == 4
    for doc_id, seed in (("a", 2), ("b", 3)):
        record = store.get_document(doc_id)
        assert record is not None
        assert {c.text for c in store.get_chunks(record.chunk_ids())} == {
            f"{doc_id} chunk {i} v{seed}" for i in range(record.chunk_count)
        }


def test_a_failed_group_write_leaves_every_document_as_it_was(tmp_path: Path) -> None:
    store = _open(tmp_path)
    store.write_documents([(_record("a", 2, "1" * 64), _batch("a", 2, 1))])
    generation = store.generation
    store._docs = _FailingUpserts(store._docs, 1)  # type: ignore[assignment]  # the records, the commit point
    with pytest.raises(StoreError, match=r"2 documents .* rolled back"):
        store.write_documents(
            [(_record("a", 3, "2" * 64), _batch("a", 3, 2)), (_record("b", 1, "3" * 64), _batch("b", 1, 3))]
        )
    record = store.get_document("a")
    assert record is not None and record.content_hash == "1" * 64 and store.get_document("b") is None
    assert store.chunk_count() == 2 and store.generation == generation


def test_a_group_write_refuses_an_id_twice(tmp_path: Path) -> None:
    store = _open(tmp_path)
    with pytest.raises(ValueError, match="twice"):
        store.write_documents([(_record("a", 1, "1" * 64), _batch("a", 1, 1))] * 2)
    assert store.chunk_count() == 0


def test_the_listing_reads_the_records_in_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One read of every record's metadata fails past ~32k documents in Chroma's SQLite ("too many SQL variables").
    monkeypatch.setattr(store_module, "LISTING_PAGE", 2)
    store = _open(tmp_path)
    store.write_documents([(_record(d, 1, f"{n}" * 64), _batch(d, 1, n)) for n, d in enumerate("edcba", start=1)])
    assert [r.id for r in store.list_documents()] == ["a", "b", "c", "d", "e"]
    assert {r.id: r.content_hash for r in store.list_documents()}["b"] == "4" * 64


def test_repair_removes_chunks_of_no_live_version(tmp_path: Path) -> None:
    store = _open(tmp_path)
    store.write_documents([(_record("doc", 2, "1" * 64), _batch("doc", 2, 1))])
    # What a crash between the chunk writes and the record write leaves behind.
    orphan = _batch("doc", 2, 9)
    store._chunks.upsert(
        ids=["doc~deadbeef0000~0"], embeddings=orphan.vectors[:1], documents=["x"], metadatas=orphan.metas[:1]
    )
    assert store.chunk_count() == 3
    assert store.repair() == ["doc~deadbeef0000~0"]
    assert store.chunk_count() == 2


def test_delete_removes_the_document_and_every_chunk(tmp_path: Path) -> None:
    store = _open(tmp_path)
    store.write_documents([(_record("a", 4, "1" * 64), _batch("a", 4, 1))])
    store.write_documents([(_record("b", 2, "2" * 64), _batch("b", 2, 2))])
    removed = store.delete_document("a")
    assert len(removed) == 4 and store.get_document("a") is None
    assert store.chunk_count() == 2 and [r.id for r in store.list_documents()] == ["b"]


class StoreMachine(RuleBasedStateMachine):
    """Write / delete / reopen against a plain dict model; invariants after every step."""

    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self._dir = Path(tempfile.mkdtemp(prefix="sextant-store-"))
        self.store = _open(self._dir)
        self.model: dict[str, tuple[int, int]] = {}  # doc id -> (chunk count, seed)
        self.seed = 0

    doc_ids = Bundle("doc_ids")

    @rule(target=doc_ids, doc_id=st.sampled_from(["alpha", "beta", "gamma"]))
    def name(self, doc_id: str) -> str:
        return doc_id

    @rule(doc_id=doc_ids, n=st.integers(min_value=0, max_value=6))
    def write(self, doc_id: str, n: int) -> None:
        self.seed += 1
        self.store.write_documents([(_record(doc_id, n, f"{self.seed:064d}"), _batch(doc_id, n, self.seed))])
        self.model[doc_id] = (n, self.seed)

    @rule(doc_id=doc_ids)
    def delete(self, doc_id: str) -> None:
        self.store.delete_document(doc_id)
        self.model.pop(doc_id, None)

    @rule()
    def reopen(self) -> None:
        self.store = _open(self._dir)

    @invariant()
    def matches_model(self) -> None:
        assert {r.id: r.chunk_count for r in self.store.list_documents()} == {k: v[0] for k, v in self.model.items()}
        assert self.store.chunk_count() == sum(n for n, _ in self.model.values())
        for doc_id, (n, seed) in self.model.items():
            record = self.store.get_document(doc_id)
            assert record is not None
            texts = [c.text for c in self.store.get_chunks(record.chunk_ids())]
            assert texts == [f"{doc_id} chunk {i} v{seed}" for i in range(n)]

    def teardown(self) -> None:
        import shutil

        shutil.rmtree(self._dir, ignore_errors=True)


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(max_examples=15, stateful_step_count=12, deadline=None, derandomize=True)


def test_a_store_created_for_sextant_s_own_index_gets_a_minimal_chroma_index(tmp_path: Path) -> None:
    """Its Chroma index is never searched (learning/scale.md: a minimal one stops writes growing with the store)."""
    made = ChunkStore.open(path=tmp_path, url=None, embedder="e", dim=DIM, own_index="hnsw")
    hnsw = made._chunks.configuration["hnsw"]
    assert made.dense_index == "hnsw" and hnsw["max_neighbors"] == 4 and hnsw["ef_construction"] == 16
    reopened = ChunkStore.open(path=tmp_path, url=None, embedder="e", dim=DIM)  # asked for nothing: as it was made
    assert reopened.dense_index == "hnsw"
    full = ChunkStore.open(path=tmp_path / "other", url=None, embedder="e", dim=DIM)
    assert full.dense_index is None and full._chunks.configuration["hnsw"]["max_neighbors"] == 16
    assert full._docs.configuration["hnsw"]["max_neighbors"] == 4  # records are read by id, never searched


def test_a_store_folder_created_for_sextant_s_index_keeps_the_chunks_vectors_there_alone(tmp_path: Path) -> None:
    """A writing process then never loads a vector index of every chunk into its memory (learning/scale.md)."""
    made = ChunkStore.open(path=tmp_path, url=None, embedder="e", dim=DIM, own_index="hnsw")
    record = _record("manual", 3, "a" * 64)
    made.write_documents([(record, _batch("manual", 3, 1))])
    assert made.vectors_in_index and made.metadata()["format"] == store_module.FORMAT_VERSION
    stored = made._chunks.get(ids=record.chunk_ids(), include=["embeddings"])["embeddings"]
    assert np.asarray(stored).shape == (3, 1)  # Chroma holds the stand-in alone
    assert [c.vector for c in made.get_chunks(record.chunk_ids(), vectors=True)] == [None] * 3
    assert [c.text for c in made.get_chunks(record.chunk_ids())] == [f"manual chunk {i} v1" for i in range(3)]
    with pytest.raises(StoreError, match="Sextant's index alone"):
        made.query(np.ones(DIM, np.float32), 1)
    made.close()
    reopened = ChunkStore.open(path=tmp_path, url=None, embedder="e", dim=DIM)
    assert reopened.vectors_in_index and reopened.reload()  # the reopen's probe fits the stand-in's dimension
    assert not ChunkStore.open(path=tmp_path / "plain", url=None, embedder="e", dim=DIM).vectors_in_index


def test_a_store_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    made = _open(tmp_path)
    made._chunks.modify(metadata={**made.metadata(), "format": store_module.FORMAT_VERSION + 1})
    made.close()
    with pytest.raises(StoreError, match="newer Sextant"):
        _open(tmp_path)
