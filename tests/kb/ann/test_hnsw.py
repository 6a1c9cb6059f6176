from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.kb.ann.flat import FlatIndex
from sextant.kb.ann.hnsw import HNSWIndex
from tests.kb.ann.conftest import Data, checked, recall


@pytest.fixture(scope="module")
def graph(data: Data) -> HNSWIndex:
    return checked(HNSWIndex.build(data.xb, data.ids, M=8, ef_construction=64, ef_search=32))


def test_recall_against_exact_search_rises_with_ef(graph: HNSWIndex, data: Data) -> None:
    recalls = [recall(graph.search(data.xq, 10, ef_search=ef)[1], data.gt_I) for ef in (10, 40, 160)]
    assert recalls[0] >= 0.75 and recalls[1] >= 0.95 and recalls[2] >= 0.99
    assert recalls == sorted(recalls)


def test_scores_are_the_exact_inner_products_of_the_ids_returned(graph: HNSWIndex, data: Data) -> None:
    D, I = graph.search(data.xq, 10)
    row = {int(i): r for r, i in enumerate(data.ids)}
    exact = np.einsum("qd,qkd->qk", data.xq, data.xb[[[row[int(i)] for i in q] for q in I]])
    np.testing.assert_allclose(D, exact, atol=1e-5)
    assert (np.diff(D, axis=1) <= 1e-6).all()  # best first


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_ef_at_least_n_makes_search_exact(metric: str) -> None:
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((150, 8)).astype(np.float32)
    ids = np.arange(150) + 1000
    index = checked(HNSWIndex.build(xb, ids, metric, M=4, ef_construction=16))  # type: ignore[arg-type]
    exact = FlatIndex.build(xb, ids, metric)  # type: ignore[arg-type]
    D, I = index.search(xb[:20] + 0.1, 10, ef_search=150)
    D0, I0 = exact.search(xb[:20] + 0.1, 10)
    np.testing.assert_array_equal(I, I0)
    np.testing.assert_allclose(D, D0, rtol=1e-5, atol=1e-5)


def test_removed_ids_are_never_returned_and_half_deleted_rebuilds(data: Data) -> None:
    index = HNSWIndex.build(data.xb[:400], data.ids[:400], M=8, ef_construction=32)
    gone = data.ids[:150]
    assert index.remove(np.concatenate([gone, [10**9]])) == 150
    checked(index)  # deleted nodes still route, so the graph stays whole
    _, I = index.search(data.xq, 20, ef_search=400)
    assert not np.isin(I, gone).any() and len(index) == 250
    index.remove(data.ids[150:260])
    assert index.deleted_count == 0 and len(index) == 140  # rebuilt from the live nodes
    checked(index)
    _, I = index.search(data.xq, 5, ef_search=200)
    _, I0 = FlatIndex.build(data.xb[260:400], data.ids[260:400]).search(data.xq, 5)
    np.testing.assert_array_equal(I, I0)


def test_incremental_adds_keep_the_graph_sound(data: Data) -> None:
    index = HNSWIndex(32, M=6, ef_construction=24)
    for lo in range(0, 1200, 300):
        index.add(data.xb[lo : lo + 300], data.ids[lo : lo + 300])
        checked(index)
    assert len(index) == 1200
    with pytest.raises(ValueError, match="already"):
        index.add(data.xb[:1], data.ids[:1])


def test_save_load_search_is_identical(graph: HNSWIndex, data: Data, tmp_path: Path) -> None:
    graph.save(tmp_path / "g")
    again = checked(HNSWIndex.load(tmp_path / "g"))
    for got, want in zip(again.search(data.xq, 10), graph.search(data.xq, 10), strict=True):
        np.testing.assert_array_equal(got, want)
    assert again.params() == graph.params() and again.nbytes() == graph.nbytes()


def test_the_check_reports_a_broken_graph() -> None:
    xb = np.random.default_rng(2).standard_normal((40, 4)).astype(np.float32)
    index = checked(HNSWIndex.build(xb, np.arange(40), M=4, ef_construction=8))
    index._links0[3, 0] = 3
    index._count0[5] = 0
    index._links0[7, 1] = index._links0[7, 0]
    problems = " ".join(index.check())
    assert "links to itself" in problems and "duplicate" in problems
