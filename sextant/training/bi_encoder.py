"""Fine-tune the embedder on labelled questions: in-batch negatives, on the CPU.

Each step takes ``batch_size`` questions, one judged-relevant document each, and trains every
question to score its own document above the other documents of the batch (the multiple-negatives
ranking loss of Henderson et al., 2017, over cosine similarities times ``scale``). No mined hard
negatives: in link-style judgements such as NFCorpus's, the unjudged documents a search ranks
highest are often relevant too (learning/embedder.md). For the same reason a batch never holds one
document twice, and a batch document judged relevant to another question of the batch is masked
out of that question's negatives instead of being pushed away.

Batches come from ``(seed, epoch)`` and torch is re-seeded at every step, so a run resumed from
its checkpoint takes the same steps as one that never stopped (the cross-encoder trainer's rule).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sextant.kb.embeddings import resolve_model_path
from sextant.training.pairs import Qrels
from sextant.training.trainer import StepReport, TrainingRun

Pair = tuple[str, str]  # (query id, document id)


@dataclass(frozen=True, slots=True)
class EmbedderTrainConfig:
    base: str = "all-MiniLM-L6-v2"
    # The product's chunk size: a training document is cut where the first chunk of it would end.
    max_length: int = 200
    batch_size: int = 32
    steps: int = 300
    learning_rate: float = 3e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    scale: float = 20.0  # 1 / temperature on cosine similarity
    checkpoint_every: int = 50
    seed: int = 0


def epoch_batches(
    qrels: Qrels, documents: Mapping[str, str], batch_size: int, seed: int, epoch: int
) -> list[list[Pair]]:
    """One epoch: every question once (when a relevant document is free), no document twice a batch.

    A question whose judged documents are all taken in the current batch waits for the next one;
    the last, partial batch is dropped because its loss would have fewer negatives than the rest.
    """
    rng = random.Random(f"{seed}:{epoch}")
    pending = sorted(q for q, judged in qrels.items() if any(g > 0 and d in documents for d, g in judged.items()))
    rng.shuffle(pending)
    batches: list[list[Pair]] = []
    batch: list[Pair] = []
    deferred: list[str] = []
    while pending:
        query = pending.pop()
        taken = {d for _, d in batch}
        free = sorted(d for d, g in qrels[query].items() if g > 0 and d in documents and d not in taken)
        if not free:
            deferred.append(query)
        else:
            batch.append((query, rng.choice(free)))
        if len(batch) == batch_size:
            batches.append(batch)
            batch = []
            pending.extend(reversed(deferred))
            deferred = []
    return batches


def known_positives(batch: list[Pair], qrels: Qrels) -> list[list[bool]]:
    """``mask[i][j]``: batch document ``j`` is judged relevant to question ``i`` but is not its own pair."""
    return [[i != j and qrels[q].get(d, 0) > 0 for j, (_, d) in enumerate(batch)] for i, (q, _) in enumerate(batch)]


def train_embedder(
    qrels: Qrels,
    queries: Mapping[str, str],
    documents: Mapping[str, str],
    config: EmbedderTrainConfig,
    out: Path,
    *,
    fingerprint: str,
    report: Callable[[StepReport], None] | None = None,
) -> dict[str, Any]:
    """Train, checkpointing into ``out``; resume from a checkpoint made with the same config and data.

    Saves a sentence-transformers folder in ``out`` (``SEXTANT_EMBEDDER`` takes it) and returns the
    training record.

    Raises:
        ValueError: no question has a judged document in ``documents``, or too few for one batch.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    qrels = {q: judged for q, judged in qrels.items() if q in queries}
    if not epoch_batches(qrels, documents, config.batch_size, config.seed, 0):
        raise ValueError(
            f"fewer than {config.batch_size} questions have a judged document in the corpus; lower the batch size"
        )
    torch.manual_seed(config.seed)
    model = SentenceTransformer(resolve_model_path(config.base), device="cpu")
    window = model.max_seq_length
    model.max_seq_length = config.max_length
    identity = {"config": asdict(config), "fingerprint": fingerprint}
    run = TrainingRun(model, out, identity, config, config.steps, report)

    def embed(texts: list[str]) -> Any:
        features = model.preprocess(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    model.train()
    for batch in itertools.islice(_batches_from(run.step, qrels, documents, config), config.steps - run.step):
        run.seed_step()
        similarity = embed([queries[q] for q, _ in batch]) @ embed([documents[d] for _, d in batch]).T
        logits = (similarity * config.scale).masked_fill(torch.tensor(known_positives(batch, qrels)), float("-inf"))
        run.update(torch.nn.functional.cross_entropy(logits, torch.arange(len(batch))), len(batch))

    model.eval()
    model.max_seq_length = window  # the product chunks to the base model's window, not the training cut
    model.save(str(out))
    return run.finish({"questions": len(qrels), "pairs_seen": config.steps * config.batch_size})


def _batches_from(
    step: int, qrels: Qrels, documents: Mapping[str, str], config: EmbedderTrainConfig
) -> Iterator[list[Pair]]:
    """Every batch from global step ``step`` on, epoch after epoch (epochs differ in length by a batch or so)."""
    epoch = 0
    while True:
        batches = epoch_batches(qrels, documents, config.batch_size, config.seed, epoch)
        yield from batches[step:]
        step = max(0, step - len(batches))
        epoch += 1
