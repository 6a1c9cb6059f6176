"""Batches, positives, learning and resumption of the query-encoder trainer (tiny data, a few steps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.embeddings import QUERY_ENCODER_RECORD
from sextant.training.query_encoder import (
    QueryEncoderTrainConfig,
    StoredVectors,
    epoch_batches,
    positive_rows,
    total_steps,
    train_query_encoder,
)
from tests.training.resumption import resumed_steps

TOPICS = ["espresso descaling", "bee swarms", "rose pruning", "bread proofing", "bicycle chains", "tomato blight"]
# Questions that share no word with their document: the base model has to learn the mapping.
QUERIES = {f"q{i}": f"topic number {i}" for i in range(len(TOPICS))}
QRELS = {f"q{i}": {f"d{i}": 1} for i in range(len(TOPICS))}
TINY = QueryEncoderTrainConfig(max_length=16, batch_size=4, epochs=2, learning_rate=1e-4, checkpoint_every=2, seed=5)


@pytest.fixture(scope="module")
def stored() -> StoredVectors:
    """Two chunks per document, embedded by the packaged model as a store would hold them."""
    from sextant.kb.embeddings import load_embedder

    embedder = load_embedder("all-MiniLM-L6-v2")
    texts = [f"{t.title()}: part {part} of a short guide to {t}." for t in TOPICS for part in (1, 2)]
    documents = [f"d{i}" for i in range(len(TOPICS)) for _ in (1, 2)]
    return StoredVectors(vectors=embedder.embed(texts), documents=documents, embedder="all-MiniLM-L6-v2")


def test_an_epoch_takes_every_question_once_in_an_order_set_by_seed_and_epoch() -> None:
    questions = [f"q{i}" for i in range(10)]
    batches = epoch_batches(questions, 4, seed=1, epoch=0)
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(q for b in batches for q in b) == sorted(questions)
    assert batches == epoch_batches(list(reversed(questions)), 4, seed=1, epoch=0)
    assert batches != epoch_batches(questions, 4, seed=1, epoch=1)


def test_positives_are_every_chunk_of_every_judged_document() -> None:
    documents = ["a", "b", "a", "c", "b"]
    qrels = {"q1": {"a": 1, "c": 2, "b": 0}, "q2": {"missing": 1}, "q3": {"b": 1}}
    assert positive_rows(qrels, documents) == {"q1": [0, 2, 3], "q3": [1, 4]}


def test_steps_are_passes_over_the_questions_up_to_a_cap() -> None:
    assert total_steps(130, QueryEncoderTrainConfig(batch_size=64, epochs=10)) == 30
    assert total_steps(130, QueryEncoderTrainConfig(batch_size=64, epochs=10, max_steps=7)) == 7


def test_no_judged_document_in_the_store_is_refused_before_loading_a_model(tmp_path: Path) -> None:
    stored = StoredVectors(vectors=np.zeros((2, 384), np.float32), documents=["x", "y"], embedder="all-MiniLM-L6-v2")
    with pytest.raises(ValueError, match="ingest the corpus"):
        train_query_encoder(QRELS, QUERIES, stored, TINY, tmp_path, fingerprint="f")


@pytest.mark.slow
def test_training_ranks_each_question_s_document_first_and_records_the_document_embedder(
    tmp_path: Path, stored: StoredVectors
) -> None:
    import torch

    from sextant.kb.embeddings import Embedder

    torch.set_num_threads(1)

    def hits(model: Embedder) -> int:
        scores = model.embed(list(QUERIES.values())) @ stored.vectors.T
        return sum(stored.documents[int(row.argmax())] == f"d{i}" for i, row in enumerate(scores))

    before = hits(Embedder("all-MiniLM-L6-v2"))
    losses: list[float] = []
    config = QueryEncoderTrainConfig(max_length=16, batch_size=6, epochs=30, learning_rate=3e-4, warmup=0.0, seed=1)
    record = train_query_encoder(
        QRELS, QUERIES, stored, config, tmp_path, fingerprint="f", report=lambda r: losses.append(r.loss)
    )
    assert record["steps"] == 30 and record["chunks"] == 12 and record["document_embedder"] == "all-MiniLM-L6-v2"
    assert sum(losses[-3:]) < sum(losses[:3])
    trained = Embedder(str(tmp_path))
    assert before < 6 and hits(trained) == 6  # "topic number i" means nothing to the base model
    assert trained.max_tokens == 254  # the base window, not the 16-token training cut
    assert (tmp_path / QUERY_ENCODER_RECORD).is_file()


@pytest.mark.slow
def test_an_interrupted_run_resumes_from_its_checkpoint_to_the_same_weights(
    tmp_path: Path, stored: StoredVectors
) -> None:
    from sentence_transformers import SentenceTransformer

    steps = resumed_steps(
        lambda out, report: train_query_encoder(QRELS, QUERIES, stored, TINY, out, fingerprint="f", report=report),
        lambda out: SentenceTransformer(str(out), device="cpu").state_dict(),
        tmp_path,
    )
    assert steps == [3, 4]  # the resumed run crosses into the second pass at step 3
