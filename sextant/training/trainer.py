"""Fine-tune a cross-encoder on mined groups: one positive against hard negatives, on the CPU.

The starting point is a sentence-transformers encoder (all-MiniLM-L6-v2 by default), optionally
cut to its first ``layers`` transformer layers (cost is linear in depth), with a fresh one-logit
head. The loss per group is the localized contrastive estimate of Gao et al., "Rethink Training of
BERT Rerankers in Multi-Stage Retrieval Pipeline" (ECIR 2021): softmax cross-entropy of the positive
against its group's negatives, which orders; plus binary cross-entropy on every pair, which keeps
``sigmoid(logit)`` a usable relevance probability for the product's abstention and scores.

Determinism and resumption: the order of groups and the negatives drawn for each come from
``(seed, epoch)``, and torch is re-seeded at every step, so a run resumed from its checkpoint
takes the same steps as one that never stopped.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sextant.kb.embeddings import resolve_model_path
from sextant.training.pairs import Group

log = logging.getLogger(__name__)

Batch = TypeVar("Batch")

CHECKPOINT = "checkpoint.pt"
TRAINING_RECORD = "sextant-training.json"


@dataclass(frozen=True, slots=True)
class TrainConfig:
    base: str = "all-MiniLM-L6-v2"
    # All six layers at 1e-4 for 750 steps: the recipe measured in learning/reranker.md (28 min on 2 cores);
    # two layers overfit SciFact's 645 queries before they ranked as well.
    layers: int = 6
    max_length: int = 128
    group_size: int = 8  # 1 positive + 7 negatives
    groups_per_step: int = 4
    epochs: int = 5
    learning_rate: float = 1e-4
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_steps: int | None = 750
    checkpoint_every: int = 50
    seed: int = 0


@dataclass(frozen=True, slots=True)
class StepReport:
    step: int
    steps: int
    loss: float
    pairs_per_second: float


def build_cross_encoder(base: str, layers: int | None, max_length: int) -> Any:
    """A CrossEncoder with ``base``'s weights (first ``layers`` layers) and a fresh one-logit head.

    Raises:
        ValueError: ``layers`` is more than the base model has.
    """
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(resolve_model_path(base), num_labels=1, max_length=max_length, device="cpu")
    encoder = _encoder_layers(model.model)
    if layers is not None and layers != len(encoder):
        if not 1 <= layers <= len(encoder):
            raise ValueError(f"{base!r} has {len(encoder)} layers; cannot keep {layers}")
        del encoder[layers:]
        model.model.config.num_hidden_layers = layers
    return model


def _encoder_layers(hf_model: Any) -> Any:
    """The list of transformer layers of a BERT-family sequence classifier."""
    backbone = getattr(hf_model, hf_model.base_model_prefix)
    return backbone.encoder.layer


def steps_per_epoch(groups: int, config: TrainConfig) -> int:
    return math.ceil(groups / config.groups_per_step)


def total_steps(groups: int, config: TrainConfig) -> int:
    return run_length(groups, config.groups_per_step, config.epochs, config.max_steps)


def run_length(items: int, per_step: int, epochs: int, max_steps: int | None) -> int:
    """Steps for ``epochs`` passes over ``items`` taken ``per_step`` at a time; ``max_steps`` caps, never stretches."""
    steps = math.ceil(items / per_step) * epochs
    return min(steps, max_steps) if max_steps else steps


def batches_from(step: int, per_epoch: int, batches_of: Callable[[int], list[Batch]]) -> Iterator[Batch]:
    """Every batch from global step ``step`` on, epoch after epoch, for epochs of ``per_epoch`` batches each.

    ``batches_of(epoch)`` must depend on the epoch alone, so a run resumed at ``step`` takes the
    same batches as one that never stopped.
    """
    epoch, skip = divmod(step, per_epoch)
    while True:
        yield from batches_of(epoch)[skip:]
        skip = 0
        epoch += 1


def epoch_batches(groups: Sequence[Group], config: TrainConfig, epoch: int) -> list[list[tuple[str, str, float]]]:
    """Every step's (query, passage, label) pairs for one epoch, positive first in each group."""
    rng = random.Random(f"{config.seed}:{epoch}")
    order = list(range(len(groups)))
    rng.shuffle(order)
    batches: list[list[tuple[str, str, float]]] = []
    for lo in range(0, len(order), config.groups_per_step):
        pairs: list[tuple[str, str, float]] = []
        for i in order[lo : lo + config.groups_per_step]:
            group = groups[i]
            negatives = _draw(rng, group.negatives, config.group_size - 1)
            pairs.append((group.query, group.positive, 1.0))
            pairs.extend((group.query, n, 0.0) for n in negatives)
        batches.append(pairs)
    return batches


def _draw(rng: random.Random, pool: Sequence[str], n: int) -> list[str]:
    """``n`` negatives from the pool, with repeats only when the pool is smaller than ``n``."""
    if not pool:
        raise ValueError("a group has no negatives; mine with a deeper search or more random negatives")
    if len(pool) >= n:
        return rng.sample(list(pool), n)
    return [rng.choice(pool) for _ in range(n)]


def train(
    groups: Sequence[Group],
    config: TrainConfig,
    out: Path,
    *,
    fingerprint: str,
    report: Callable[[StepReport], None] | None = None,
) -> dict[str, Any]:
    """Train, checkpointing into ``out``; resume from a checkpoint made with the same config and data.

    Saves a sentence-transformers CrossEncoder folder in ``out`` and returns the training record.
    """
    import torch

    torch.manual_seed(config.seed)  # the fresh head's initial weights
    model = build_cross_encoder(config.base, config.layers, config.max_length)
    net, tokenizer = model.model, model.tokenizer
    steps = total_steps(len(groups), config)
    run = TrainingRun(net, out, {"config": asdict(config), "fingerprint": fingerprint}, config, steps, report)
    net.train()
    per_epoch = steps_per_epoch(len(groups), config)
    group_size = config.group_size
    every_batch = batches_from(run.step, per_epoch, lambda epoch: epoch_batches(groups, config, epoch))
    for pairs in itertools.islice(every_batch, steps - run.step):
        run.seed_step()
        features = tokenizer(
            [q for q, _, _ in pairs],
            [p for _, p, _ in pairs],
            padding=True,
            truncation="longest_first",
            max_length=config.max_length,
            return_tensors="pt",
        )
        logits = net(**features).logits.view(-1)  # (groups * group_size,)
        labels = torch.tensor([label for _, _, label in pairs])
        listwise = torch.nn.functional.cross_entropy(
            logits.view(-1, group_size), torch.zeros(len(pairs) // group_size, dtype=torch.long)
        )
        pointwise = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
        run.update(listwise + pointwise, len(pairs))

    net.eval()
    model.save(str(out))
    return run.finish({"groups": len(groups), "pairs_seen": steps * config.groups_per_step * group_size})


class RunConfig(Protocol):
    """What a run reads from a trainer's (frozen) configuration."""

    @property
    def learning_rate(self) -> float: ...
    @property
    def weight_decay(self) -> float: ...
    @property
    def warmup(self) -> float: ...
    @property
    def checkpoint_every(self) -> int: ...
    @property
    def seed(self) -> int: ...


class TrainingRun:
    """The part every trainer shares: AdamW with warm-up, one update per step, reports, checkpoints.

    Torch is re-seeded before every step (``seed_step``) so dropout masks, like the batches, depend
    only on the step: a run resumed from its checkpoint takes the same steps as one that never stopped.
    """

    def __init__(
        self,
        net: Any,
        out: Path,
        identity: dict[str, Any],
        config: RunConfig,
        steps: int,
        report: Callable[[StepReport], None] | None,
    ) -> None:
        """A run of ``steps`` over ``net``, resumed from ``out``'s checkpoint if made with the same ``identity``."""
        import torch

        self.net, self.out, self.identity, self.config = net, out, identity, config
        self.steps, self.report = steps, report
        self.optimiser = torch.optim.AdamW(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
        self.schedule = _warmup_then_linear_decay(self.optimiser, steps, config.warmup)
        self.step, self.seconds = _resume(out / CHECKPOINT, identity, net, self.optimiser, self.schedule)
        self.started = self.tick = time.perf_counter()

    def seed_step(self) -> None:
        import torch

        torch.manual_seed(self.config.seed * 1_000_003 + self.step)
        self.tick = time.perf_counter()

    def update(self, loss: Any, examples: int) -> None:
        """One optimiser step on ``loss``; report it, and checkpoint every ``checkpoint_every`` steps."""
        import torch

        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        self.optimiser.step()
        self.schedule.step()
        self.optimiser.zero_grad()
        self.step += 1
        if self.report:
            self.report(StepReport(self.step, self.steps, loss.item(), examples / (time.perf_counter() - self.tick)))
        if self.step % self.config.checkpoint_every == 0 and self.step < self.steps:
            elapsed = self.seconds + time.perf_counter() - self.started
            state = (self.net, self.optimiser, self.schedule)
            _save_checkpoint(self.out / CHECKPOINT, self.identity, self.step, elapsed, *state)

    def finish(self, facts: dict[str, Any]) -> dict[str, Any]:
        """Write the training record (identity, ``facts``, steps, time) beside the saved model; drop the checkpoint."""
        import torch

        seconds = self.seconds + time.perf_counter() - self.started
        record = {
            **self.identity,
            **facts,
            "steps": self.steps,
            "train_seconds": round(seconds, 1),
            "torch_threads": torch.get_num_threads(),
        }
        write_training_record(self.out, record)
        (self.out / CHECKPOINT).unlink(missing_ok=True)
        return record


def write_training_record(folder: Path, record: dict[str, Any]) -> None:
    """The record of how ``folder``'s model was made, beside it (commands add what they know to it)."""
    (folder / TRAINING_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _warmup_then_linear_decay(optimiser: Any, steps: int, warmup_fraction: float) -> Any:
    """The learning rate rises over the first ``warmup_fraction`` of ``steps``, then falls linearly to 0."""
    import torch

    warmup = max(1, int(warmup_fraction * steps))
    return torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )


def _save_checkpoint(path: Path, identity: dict[str, Any], step: int, seconds: float, *state: Any) -> None:
    import torch

    net, optimiser, schedule = state
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "identity": json.dumps(identity, sort_keys=True),
            "step": step,
            "seconds": seconds,
            "model": net.state_dict(),
            "optimiser": optimiser.state_dict(),
            "schedule": schedule.state_dict(),
        },
        tmp,
    )
    tmp.replace(path)


def _resume(path: Path, identity: dict[str, Any], *state: Any) -> tuple[int, float]:
    """``(step, seconds so far)`` from a matching checkpoint, else ``(0, 0.0)``."""
    import torch

    if not path.is_file():
        return 0, 0.0
    saved = torch.load(path, map_location="cpu", weights_only=True)
    if saved["identity"] != json.dumps(identity, sort_keys=True):
        log.warning("ignoring %s: it was made with another configuration or other training data", path)
        return 0, 0.0
    net, optimiser, schedule = state
    net.load_state_dict(saved["model"])
    optimiser.load_state_dict(saved["optimiser"])
    schedule.load_state_dict(saved["schedule"])
    log.info("resuming from step %d of a checkpoint in %s", saved["step"], path.parent)
    return int(saved["step"]), float(saved["seconds"])
