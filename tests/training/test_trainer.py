"""Batches, seeding and resumption of the cross-encoder trainer (tiny models, a few steps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.training.pairs import Group
from sextant.training.trainer import TrainConfig, epoch_batches, total_steps, train
from tests.training.resumption import resumed_steps

GROUPS = [
    Group(
        f"q{i}",
        f"question {i} about topic {i}",
        f"topic {i} is explained here",
        tuple(f"unrelated text {j}" for j in range(5)),
    )
    for i in range(6)
]
TINY = TrainConfig(layers=1, max_length=32, group_size=4, groups_per_step=2, epochs=2, checkpoint_every=2, seed=3)


def test_every_group_puts_its_positive_first_then_its_own_negatives() -> None:
    batches = epoch_batches(GROUPS, TINY, epoch=0)
    assert len(batches) == 3 and all(len(b) == 2 * 4 for b in batches)
    for batch in batches:
        for lo in range(0, len(batch), 4):
            (query, positive, label), *negatives = batch[lo : lo + 4]
            assert label == 1.0 and positive.startswith("topic") and all(n[2] == 0.0 for n in negatives)
            assert {n[0] for n in negatives} == {query}


def test_batches_depend_on_seed_and_epoch_only() -> None:
    assert epoch_batches(GROUPS, TINY, 1) == epoch_batches(GROUPS, TINY, 1)
    assert epoch_batches(GROUPS, TINY, 0) != epoch_batches(GROUPS, TINY, 1)
    assert total_steps(len(GROUPS), TINY) == 6
    assert total_steps(len(GROUPS), TrainConfig(groups_per_step=2, max_steps=2)) == 2  # a cap, never a stretch


@pytest.mark.slow
def test_an_interrupted_run_resumes_from_its_checkpoint_to_the_same_weights(tmp_path: Path) -> None:
    from sentence_transformers import CrossEncoder

    steps = resumed_steps(
        lambda out, report: train(GROUPS, TINY, out, fingerprint="f", report=report),
        lambda out: CrossEncoder(str(out), device="cpu").model.state_dict(),
        tmp_path,
    )
    assert steps == [3, 4, 5, 6]
