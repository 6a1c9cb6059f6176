"""Fine-tune the query side of the embedder on labelled questions; the stored document vectors stay.

The encoder that embeds questions starts as a copy of the store's own embedder and is trained so
that each question scores the chunks of its judged documents above every other chunk in the store:
the loss is the softmax cross-entropy over all stored chunks, with the positive mass summed over
the judged documents' chunks (a question may have many, and the product ranks a document by its
best chunk). The documents' vectors are read from the store and never change, so a store keeps
working as it is and training costs only the short questions' forward and backward passes. With
every chunk in the softmax no negatives are mined or sampled: the unjudged chunks a search ranks
highest are among them, weighted by how close they are, which is why this beat the in-batch
trainer (``bi_encoder.py``) on NFCorpus's link-style judgements (learning/query-encoder.md).

Batches come from ``(seed, epoch)`` and torch is re-seeded at every step, so a run resumed from
its checkpoint takes the same steps as one that never stopped (the rule of the other trainers).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.embeddings import QueryEncoderRecord, resolve_model_path, write_query_encoder_record
from sextant.training.pairs import Qrels
from sextant.training.trainer import StepReport, TrainingRun, batches_from, run_length


@dataclass(frozen=True, slots=True)
class QueryEncoderTrainConfig:
    max_length: int = 64  # questions, not passages
    batch_size: int = 64
    # Ten passes: 410 steps on NFCorpus's 2,590 training questions, about 5 minutes on 2 cores
    # (learning/query-encoder.md); a small set gets as many passes, not as many steps.
    epochs: int = 10
    max_steps: int | None = None
    learning_rate: float = 3e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    scale: float = 20.0  # 1 / temperature on cosine similarity
    checkpoint_every: int = 50
    seed: int = 0


@dataclass(frozen=True, slots=True)
class StoredVectors:
    """Every chunk vector of a store (unit rows) and the document each row belongs to."""

    vectors: npt.NDArray[np.float32]
    documents: Sequence[str]
    embedder: str  # the store's embedder: the encoder to start from, recorded for the compatibility check


def epoch_batches(questions: Sequence[str], batch_size: int, seed: int, epoch: int) -> list[list[str]]:
    """Every question once, shuffled by ``(seed, epoch)``; the last batch may be smaller."""
    order = sorted(questions)
    random.Random(f"{seed}:{epoch}").shuffle(order)
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def total_steps(questions: int, config: QueryEncoderTrainConfig) -> int:
    return run_length(questions, config.batch_size, config.epochs, config.max_steps)


def positive_rows(qrels: Qrels, documents: Sequence[str]) -> dict[str, list[int]]:
    """For each question, the rows of the chunks of its judged-relevant documents (questions with none left out)."""
    rows_of: dict[str, list[int]] = {}
    for row, doc in enumerate(documents):
        rows_of.setdefault(doc, []).append(row)
    positives = {
        q: sorted(row for d, g in judged.items() if g > 0 for row in rows_of.get(d, ())) for q, judged in qrels.items()
    }
    return {q: rows for q, rows in positives.items() if rows}


def train_query_encoder(
    qrels: Qrels,
    queries: Mapping[str, str],
    stored: StoredVectors,
    config: QueryEncoderTrainConfig,
    out: Path,
    *,
    fingerprint: str,
    report: Callable[[StepReport], None] | None = None,
) -> dict[str, Any]:
    """Train, checkpointing into ``out``; resume from a checkpoint made with the same config and data.

    Saves a sentence-transformers folder in ``out`` with the record ``SEXTANT_QUERY_ENCODER`` checks
    against the store, and returns the training record.

    Raises:
        ValueError: no question with text has a judged document among the stored chunks.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    positives = positive_rows({q: j for q, j in qrels.items() if q in queries}, stored.documents)
    if not positives:
        raise ValueError("no training question has a judged document in the store; ingest the corpus first")
    torch.manual_seed(config.seed)
    model = SentenceTransformer(resolve_model_path(stored.embedder), device="cpu")
    if model.get_embedding_dimension() != stored.vectors.shape[1]:
        raise ValueError(
            f"embedder {stored.embedder!r} gives {model.get_embedding_dimension()} dimensions; "
            f"the store holds {stored.vectors.shape[1]}"
        )
    window = model.max_seq_length
    model.max_seq_length = config.max_length
    identity = {"config": asdict(config), "fingerprint": fingerprint, "document_embedder": stored.embedder}
    steps = total_steps(len(positives), config)
    run = TrainingRun(model, out, identity, config, steps, report)
    chunks = torch.from_numpy(np.ascontiguousarray(stored.vectors, dtype=np.float32))

    questions = sorted(positives)
    per_epoch = math.ceil(len(questions) / config.batch_size)
    every_batch = batches_from(
        run.step, per_epoch, lambda epoch: epoch_batches(questions, config.batch_size, config.seed, epoch)
    )
    model.train()
    for batch in itertools.islice(every_batch, steps - run.step):
        run.seed_step()
        features = model.preprocess([queries[q] for q in batch])
        embedded = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)
        logits = embedded @ chunks.T * config.scale
        judged = torch.zeros_like(logits, dtype=torch.bool)
        for i, q in enumerate(batch):
            judged[i, positives[q]] = True
        loss = torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~judged, float("-inf")), 1)
        run.update(loss.mean(), len(batch))

    model.eval()
    model.max_seq_length = window  # a long question is embedded as far as the base model reads
    model.save(str(out))
    write_query_encoder_record(out, QueryEncoderRecord(document_embedder=stored.embedder, dim=chunks.shape[1]))
    return run.finish({"questions": len(positives), "chunks": int(chunks.shape[0])})
