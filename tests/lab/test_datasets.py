"""The lab's vectors: seeded clustered sets, exact ground truth, the cache, and the shared sets when present."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sextant.lab.datasets import GROUND_TRUTH_K, clustered, ground_truth, recall_at, shared, synthetic


def test_clustered_sets_are_seeded_unit_float32_rows() -> None:
    xb, xq = clustered(300, 16, nq=20, seed=4)
    assert (xb.shape, xq.shape) == ((300, 16), (20, 16)) and xb.dtype == xq.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(np.vstack([xb, xq]), axis=1), 1.0, rtol=1e-5)
    again, _ = clustered(300, 16, nq=20, seed=4)
    np.testing.assert_array_equal(xb, again)
    assert not np.array_equal(xb, clustered(300, 16, nq=20, seed=5)[0])


def test_clustered_points_sit_nearer_their_neighbours_than_uniform_noise_does() -> None:
    # The reason the set exists: an ANN index has structure to find, unlike isotropic noise.
    xb, _ = clustered(500, 32, n_clusters=5, seed=1)
    noise = np.random.default_rng(1).standard_normal((500, 32)).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)

    def nearest_cosine(x: np.ndarray) -> float:
        sims = x @ x.T
        np.fill_diagonal(sims, -np.inf)
        return float(sims.max(axis=1).mean())

    assert nearest_cosine(xb) > nearest_cosine(noise) + 0.15  # seeded: 0.74 against 0.51


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_ground_truth_is_the_exact_ranking_of_rows(metric: str) -> None:
    rng = np.random.default_rng(2)
    xb, xq = rng.standard_normal((50, 6)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    gt = ground_truth(xb, xq, metric, k=7)  # type: ignore[arg-type]
    scores = -(xq @ xb.T) if metric == "ip" else ((xq[:, None] - xb[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(gt, np.argsort(scores, axis=1)[:, :7])
    assert ground_truth(xb[:5], xq, metric).shape == (4, 5)  # k capped at n  # type: ignore[arg-type]


def test_a_synthetic_set_is_cached_and_read_back_instead_of_recomputed(tmp_path: Path) -> None:
    ds = synthetic(1500, d=8, nq=10, seed=3, cache=tmp_path)
    assert (ds.name, ds.metric) == ("clustered-8d-1500", "ip")
    assert ds.gt.shape == (10, GROUND_TRUTH_K)
    np.testing.assert_array_equal(ds.gt, ground_truth(ds.xb, ds.xq, "ip"))
    gt_file = tmp_path / "clustered-8d-1500-s3-gt.npy"
    np.save(gt_file, np.zeros_like(ds.gt), allow_pickle=False)  # a marker only the cache can return
    again = synthetic(1500, d=8, nq=10, seed=3, cache=tmp_path)
    np.testing.assert_array_equal(again.xb, ds.xb)
    assert not again.gt.any()
    assert synthetic(2000, d=8, nq=2).name == "clustered-8d-2k"


def test_shared_reads_the_sets_present_and_holds_out_scifact_queries(tmp_path: Path) -> None:
    assert shared(tmp_path) == []
    rng = np.random.default_rng(0)
    np.save(tmp_path / "bigann10k_base_u8.npy", rng.integers(0, 255, (30, 4)).astype(np.uint8))
    np.save(tmp_path / "bigann10k_queries_u8.npy", rng.integers(0, 255, (3, 4)).astype(np.uint8))
    np.save(tmp_path / "bigann10k_gt_top100_l2.npy", rng.integers(0, 30, (3, 100)).astype(np.int32))
    scifact = rng.standard_normal((520, 4)).astype(np.float32)
    np.save(tmp_path / "scifact_minilm_docs_f32.npy", scifact)
    sets = {ds.name: ds for ds in shared(tmp_path)}
    assert list(sets) == ["bigann10k", "scifact-minilm"]  # Fashion-MNIST is absent, so skipped
    big = sets["bigann10k"]
    assert big.metric == "l2" and big.xb.dtype == np.float32 and big.gt.dtype == np.int64
    sci = sets["scifact-minilm"]
    assert (sci.metric, sci.xq.shape, sci.xb.shape) == ("ip", (500, 4), (20, 4))
    np.testing.assert_array_equal(sci.gt, ground_truth(sci.xb, sci.xq, "ip"))


def test_recall_at_k_is_the_share_of_each_true_top_k_found() -> None:
    gt = np.array([[1, 2, 3, 9], [4, 5, 6, 9]])
    found = np.array([[3, 1, 7, 2], [8, 8, 4, 9]])
    # Only each row's first k answers count: row 1's 2 comes fourth, row 2's 9 is not in its true top 3.
    assert recall_at(found, gt, k=3) == pytest.approx((2 + 1) / 6)
    assert recall_at(gt, gt, k=4) == 1.0
