from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.ann.flat import FlatIndex
from tests.kb.ann.conftest import Data


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_flat_is_a_brute_force_scan(data: Data, metric: str) -> None:
    index = FlatIndex.build(data.xb, data.ids, metric)  # type: ignore[arg-type]
    D, I = index.search(data.xq, 10)
    if metric == "ip":
        scores = data.xq @ data.xb.T
        order = np.argsort(-scores, axis=1)[:, :10]
    else:
        scores = ((data.xq[:, None, :] - data.xb[None, :, :]) ** 2).sum(-1)
        order = np.argsort(scores, axis=1)[:, :10]
    np.testing.assert_array_equal(I, data.ids[order])
    np.testing.assert_allclose(D, np.take_along_axis(scores, order, axis=1), rtol=1e-4, atol=1e-4)


def test_a_short_answer_is_padded_and_removed_ids_are_gone() -> None:
    xb = np.eye(4, dtype=np.float32)
    index = FlatIndex.build(xb, np.array([10, 11, 12, 13]))
    assert index.remove(np.array([11, 99])) == 1
    D, I = index.search(xb[:1], 5)
    assert I.tolist() == [[10, 12, 13, -1, -1]]
    assert D[0, 0] == 1.0 and D[0, -1] == -np.inf
    with pytest.raises(ValueError, match="already"):
        index.add(xb[:1], np.array([10]))
    with pytest.raises(ValueError, match="shape"):
        index.add(np.zeros((1, 3), np.float32), np.array([20]))


def test_save_load_search_is_identical(data: Data, tmp_path: Path) -> None:
    index = FlatIndex.build(data.xb, data.ids, "l2")
    index.save(tmp_path / "flat")
    again = FlatIndex.load(tmp_path / "flat")
    for got, want in zip(again.search(data.xq, 10), index.search(data.xq, 10), strict=True):
        np.testing.assert_array_equal(got, want)
