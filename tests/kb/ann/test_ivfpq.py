from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sextant.kb.ann.ivfpq import IVFPQIndex, IVFPQRerankIndex
from tests.kb.ann.conftest import Data, recall

PARAMS: dict[str, Any] = {"nlist": 32, "m": 8, "nbits": 6}


@pytest.fixture(scope="module")
def rerank(data: Data) -> IVFPQRerankIndex:
    return IVFPQRerankIndex.build(data.xb, data.ids, "l2", nprobe=8, oversample=8, **PARAMS)


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_ivf_with_every_list_probed_is_a_full_scan_over_the_same_codes(data: Data, metric: str) -> None:
    index = IVFPQIndex.build(data.xb, data.ids, metric, **PARAMS)  # type: ignore[arg-type]
    decoded = index.centroids[index.list_of_rows()] + index.pq.decode(index.codes)  # (n, d)
    if metric == "ip":
        scores = data.xq @ decoded.T
        order = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    else:
        scores = ((data.xq[:, None, :] - decoded[None, :, :]) ** 2).sum(-1)
        order = np.argsort(scores, axis=1, kind="stable")[:, :10]
    D, I = index.search(data.xq, 10, nprobe=index.nlist)
    np.testing.assert_allclose(D, np.take_along_axis(scores, order, axis=1), rtol=1e-4, atol=1e-4)
    assert (index.ids[order] == I).mean() > 0.99  # ties within float rounding may swap neighbours


def test_recall_floors_and_rescoring_helps(rerank: IVFPQRerankIndex, data: Data) -> None:
    plain = recall(IVFPQIndex.search(rerank, data.xq, 10, nprobe=8)[1], data.gt_I)
    rescored = recall(rerank.search(data.xq, 10)[1], data.gt_I)
    assert plain >= 0.5 and rescored >= 0.9 and rescored > plain
    one_list = recall(rerank.search(data.xq, 10, nprobe=1)[1], data.gt_I)
    assert one_list < rescored  # nprobe is the knob


def test_rescored_with_every_candidate_is_exact(rerank: IVFPQRerankIndex, data: Data) -> None:
    D, I = rerank.search(data.xq, 10, nprobe=rerank.nlist, oversample=len(rerank))
    np.testing.assert_array_equal(I, data.gt_I)
    assert np.isfinite(D).all()


def test_remove_and_add_keep_lists_packed(data: Data) -> None:
    index = IVFPQRerankIndex.build(data.xb[:1000], data.ids[:1000], **PARAMS)
    assert index.remove(data.ids[:400]) == 400
    index.add(data.xb[1000:1200], data.ids[1000:1200])
    assert len(index) == 800 and index.offsets[-1] == 800
    cells = index.list_of_rows()
    assert (np.diff(cells) >= 0).all()
    _, I = index.search(data.xq, 10, nprobe=index.nlist, oversample=100)
    assert not np.isin(I, data.ids[:400]).any()
    with pytest.raises(ValueError, match="already"):
        index.add(data.xb[500:501], data.ids[500:501])


def test_untrained_index_trains_on_its_first_add_even_when_tiny() -> None:
    xb = np.random.default_rng(3).standard_normal((5, 16)).astype(np.float32)
    index = IVFPQRerankIndex(16, nlist=8, m=4, nbits=8)
    index.add(xb, np.arange(5))
    _, I = index.search(xb, 1, nprobe=8)
    assert I[:, 0].tolist() == [0, 1, 2, 3, 4]


def test_save_load_search_is_identical(rerank: IVFPQRerankIndex, data: Data, tmp_path: Path) -> None:
    rerank.save(tmp_path / "ivf")
    again = IVFPQRerankIndex.load(tmp_path / "ivf")
    for got, want in zip(again.search(data.xq, 10), rerank.search(data.xq, 10), strict=True):
        np.testing.assert_array_equal(got, want)
    assert again.params() == rerank.params()
