"""A BEIR set named on a sweep's command line: ``DATASET:SPLIT``, its questions and (a seeded sample of) its qrels."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from sextant.evals import beir

SAMPLE_SEED = 13


@dataclass(frozen=True)
class BeirSplit:
    dataset: str
    split: str  # the split's name, or a qrels file's stem
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def read_split(data: Path, pair: str, limit: int | None = None) -> BeirSplit:
    """``pair`` is ``DATASET:SPLIT`` under ``data/beir``: a split ending in ``.tsv`` is a qrels file (a held-out split
    of ``held_out_split``), otherwise ``qrels/<split>.tsv``; more than ``limit`` questions are sampled, seeded."""
    dataset, split = pair.split(":", 1)
    folder = data / "beir" / dataset
    qrels_file = Path(split) if split.endswith(".tsv") else folder / "qrels" / f"{split}.tsv"
    qrels = beir.read_qrels(qrels_file)
    if limit is not None and len(qrels) > limit:
        qrels = {q: qrels[q] for q in random.Random(SAMPLE_SEED).sample(sorted(qrels), limit)}
    return BeirSplit(dataset, Path(split).stem, beir.read_queries(folder), qrels)
