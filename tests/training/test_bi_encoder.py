"""Batches, masking, learning and resumption of the embedder trainer (tiny data, a few steps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.training.bi_encoder import EmbedderTrainConfig, epoch_batches, known_positives, train_embedder
from tests.training.resumption import resumed_steps

TOPICS = ["espresso descaling", "bee swarms", "rose pruning", "bread proofing", "bicycle chains", "tomato blight"]
QUERIES = {f"q{i}": f"how do I deal with {t}" for i, t in enumerate(TOPICS)}
DOCUMENTS = {f"d{i}": f"{t.title()}: a short guide to {t} for beginners." for i, t in enumerate(TOPICS)}
QRELS = {f"q{i}": {f"d{i}": 1} for i in range(len(TOPICS))}
TINY = EmbedderTrainConfig(max_length=32, batch_size=3, steps=4, learning_rate=1e-4, checkpoint_every=2, seed=5)


def test_an_epoch_takes_each_question_once_and_never_one_document_twice_in_a_batch() -> None:
    # q0 and q1 share their only document: they cannot meet in one batch.
    qrels = {**QRELS, "q1": {"d0": 1}, "q6": {"missing": 1}, "q7": {"d3": 0}}
    batches = epoch_batches(qrels, DOCUMENTS, batch_size=2, seed=0, epoch=0)
    pairs = [p for b in batches for p in b]
    assert all(len(b) == 2 for b in batches)
    assert all(len({d for _, d in b}) == len(b) for b in batches)
    assert len({q for q, _ in pairs}) == len(pairs) == 6  # q6 (no such document) and q7 (grade 0) never train
    assert all(qrels[q][d] > 0 for q, d in pairs)


def test_batches_depend_on_seed_and_epoch_only() -> None:
    assert epoch_batches(QRELS, DOCUMENTS, 3, 1, 1) == epoch_batches(QRELS, DOCUMENTS, 3, 1, 1)
    assert epoch_batches(QRELS, DOCUMENTS, 3, 1, 0) != epoch_batches(QRELS, DOCUMENTS, 3, 1, 1)
    assert len(epoch_batches(QRELS, DOCUMENTS, 4, 0, 0)) == 1  # the partial batch of two is dropped


def test_a_document_judged_relevant_to_another_question_is_not_its_negative() -> None:
    qrels = {"a": {"x": 1, "y": 2}, "b": {"y": 1}, "c": {"z": 1}}
    assert known_positives([("a", "x"), ("b", "y"), ("c", "z")], qrels) == [
        [False, True, False],
        [False, False, False],
        [False, False, False],
    ]


def test_too_few_questions_for_one_batch_is_refused_before_loading_a_model(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lower the batch size"):
        train_embedder(QRELS, QUERIES, DOCUMENTS, EmbedderTrainConfig(batch_size=7), tmp_path, fingerprint="f")


@pytest.mark.slow
def test_training_lowers_the_loss_and_saves_a_model_the_product_loads(tmp_path: Path) -> None:
    import torch

    from sextant.kb.embeddings import Embedder

    torch.set_num_threads(1)
    losses: list[float] = []
    config = EmbedderTrainConfig(max_length=32, batch_size=6, steps=8, learning_rate=2e-4, warmup=0.0, seed=1)
    record = train_embedder(
        QRELS, QUERIES, DOCUMENTS, config, tmp_path, fingerprint="f", report=lambda r: losses.append(r.loss)
    )
    assert record["steps"] == 8 and len(losses) == 8
    assert sum(losses[-2:]) < sum(losses[:2])  # the same six pairs every step: a model that learns fits them
    embedder = Embedder(str(tmp_path))
    assert embedder.max_tokens == 254  # the base window is kept for chunking, not the 32-token training cut
    q, d = embedder.embed([QUERIES["q2"]]), embedder.embed(list(DOCUMENTS.values()))
    assert int((d @ q[0]).argmax()) == 2


@pytest.mark.slow
def test_an_interrupted_run_resumes_from_its_checkpoint_to_the_same_weights(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    steps = resumed_steps(
        lambda out, report: train_embedder(QRELS, QUERIES, DOCUMENTS, TINY, out, fingerprint="f", report=report),
        lambda out: SentenceTransformer(str(out), device="cpu").state_dict(),
        tmp_path,
    )
    assert steps == [3, 4]
