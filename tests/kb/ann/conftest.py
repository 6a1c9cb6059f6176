"""Small seeded clustered sets (the shape of sentence embeddings), and the graph check every HNSW build gets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from sextant.kb.ann.base import FloatArray, IdArray
from sextant.kb.ann.flat import FlatIndex
from sextant.kb.ann.hnsw import HNSWIndex
from sextant.lab.datasets import clustered


@dataclass(frozen=True)
class Data:
    xb: FloatArray
    xq: FloatArray
    ids: IdArray  # not row numbers, so a mix-up of rows and ids shows
    gt_I: IdArray  # exact top 10 by inner product


@pytest.fixture(scope="session")
def data() -> Data:
    xb, xq = clustered(3000, 32, nq=60, intrinsic=12, seed=7)
    ids = np.arange(xb.shape[0], dtype=np.int64) * 7 + 3
    _, gt_I = FlatIndex.build(xb, ids).search(xq, 10)
    return Data(xb, xq, ids, gt_I)


def recall(I: IdArray, gt_I: IdArray) -> float:
    return float(np.mean([np.intersect1d(a, b).size / b.size for a, b in zip(I, gt_I, strict=True)]))


def checked(index: HNSWIndex) -> HNSWIndex:
    """Every graph a test builds passes the integrity check."""
    assert index.check() == []
    return index
