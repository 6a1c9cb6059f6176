"""``sextant-adapt`` end to end on a tiny store: read it, train, and search it with the result; clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.kb.chroma_client import StoreError
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings
from sextant.training.adapt_cli import main, read_store

GUIDES = {
    "roses": ("Rose pruning", "Roses are pruned in late winter, before the buds begin to swell on the canes."),
    "bees": ("Bee swarms", "A swarm leaves the hive in late spring; a beekeeper can collect it in a box."),
    "bread": ("Bread proofing", "Dough proofs best in a warm kitchen until it has doubled in size, about an hour."),
    "chains": ("Bicycle chains", "A chain is cleaned with degreaser and oiled lightly on every link after a wet ride."),
}


@pytest.fixture
def store(tmp_path: Path, embedder: Embedder) -> Path:
    folder = tmp_path / "store"
    with KnowledgeBase.open(KbSettings(chroma_dir=folder), embedder=embedder) as kb:
        for doc_id, (title, text) in GUIDES.items():
            kb.ingest(doc_id, LoadedDocument(text=f"{title}. {text}", title=title))
    return folder


@pytest.mark.slow
def test_the_command_trains_an_encoder_for_the_store_without_writing_to_it(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "adapted"
    with KnowledgeBase.open(KbSettings(chroma_dir=store)) as kb:
        generation = kb.store.generation
    main(["--store", str(store), "--out", str(out), "--batch-size", "2", "--max-steps", "2", "--threads", "1"])

    record = json.loads((out / "sextant-training.json").read_text())
    assert record["steps"] == 2 and record["chunks"] == len(GUIDES)
    assert record["adapted_to"]["store"] == str(store)
    assert record["adapted_to"]["pseudo_questions"] == {"title": 4, "sentence": 4}
    settings = KbSettings(chroma_dir=store, query_encoder=str(out))
    with KnowledgeBase.open(settings) as kb:
        assert kb.store.generation == generation
        assert kb.stats().query_encoder == str(out) and kb.stats().embedder == "all-MiniLM-L6-v2"
        assert [h.document_id for h in kb.search("when to prune roses", 1).hits] == ["roses"]


@pytest.mark.slow
def test_a_store_that_keeps_its_vectors_in_sextant_s_index_is_read_through_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = KbSettings(chroma_dir=tmp_path / "store", ann_index="flat")
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        for doc_id, (title, text) in GUIDES.items():
            kb.ingest(doc_id, LoadedDocument(text=f"{title}. {text}", title=title))
        assert kb.store.vectors_in_index
        ids, vectors = kb.chunk_vectors()
    snapshot = read_store(settings)
    assert sorted(c.id for c in snapshot.chunks) == sorted(ids)
    by_id = dict(zip(ids, vectors, strict=True))
    assert all((by_id[c.id] == v).all() for c, v in zip(snapshot.chunks, snapshot.vectors, strict=True))


@pytest.mark.slow
def test_a_store_built_with_another_embedder_than_configured_is_refused(store: Path) -> None:
    with pytest.raises(StoreError, match="SEXTANT_EMBEDDER=all-MiniLM-L6-v2"):
        read_store(KbSettings(chroma_dir=store, embedder="some/other-model"))


def test_no_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--store", str(tmp_path / "missing"), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2 and "no store at" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_a_store_with_nothing_stored_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exited:
        main(["--store", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2 and "nothing was ever stored" in capsys.readouterr().err


@pytest.mark.slow
def test_the_local_model_s_questions_are_a_source_and_are_kept_for_a_rerun(
    store: Path, tmp_path: Path, local_test_model: None
) -> None:
    out = tmp_path / "adapted"
    args = ["--store", str(store), "--out", str(out), "--sources", "sentence", "model", "--model-questions", "2"]
    main([*args, "--batch-size", "2", "--max-steps", "1", "--threads", "1"])

    written = [json.loads(line) for line in (out / "model-questions.jsonl").read_text().splitlines()]
    asked_questions = [row["question"] for row in written if row["question"]]
    record = json.loads((out / "sextant-training.json").read_text())
    assert record["adapted_to"]["pseudo_questions"].get("model", 0) == len(asked_questions) <= 2
    assert len(written) >= 2 and {row["chunk"] for row in written} <= set(_chunk_ids(store))


def test_a_local_model_that_is_not_installed_is_a_clear_error(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXTANT_MODELS_DIR", str(tmp_path / "no-models"))
    with pytest.raises(SystemExit) as exited:
        main(["--store", str(store), "--out", str(tmp_path / "out"), "--sources", "model"])
    assert exited.value.code == 2 and "sextant-models fetch" in capsys.readouterr().err


def _chunk_ids(store: Path) -> list[str]:
    return [c.id for c in read_store(KbSettings(chroma_dir=store)).chunks]
