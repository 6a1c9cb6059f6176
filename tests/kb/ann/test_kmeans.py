from __future__ import annotations

import numpy as np

from sextant.kb.ann.kmeans import assign_nearest, kmeans


def test_kmeans_covers_every_cluster_and_lowers_the_error() -> None:
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((5, 8)).astype(np.float32) * 10
    x = (centres[np.repeat(np.arange(5), 200)] + rng.standard_normal((1000, 8))).astype(np.float32)
    # Lloyd from a random sample can leave two centroids in one cluster (FAISS's too), so give it room.
    found = kmeans(x, 10, seed=1)
    assert np.linalg.norm(centres[:, None] - found[None], axis=2).min(axis=1).max() < 2.0  # clusters are ~40 apart

    def error(c: np.ndarray) -> float:
        return float(((x - c[assign_nearest(x, c)]) ** 2).sum())

    assert error(found) < 0.5 * error(kmeans(x, 10, seed=1, niter=0))


def test_kmeans_is_seeded_and_copes_with_fewer_points_than_centroids() -> None:
    x = np.random.default_rng(0).standard_normal((300, 4)).astype(np.float32)
    np.testing.assert_array_equal(kmeans(x, 16, seed=3), kmeans(x, 16, seed=3))
    few = kmeans(x[:5], 16)
    assert few.shape == (16, 4) and {tuple(r) for r in few} <= {tuple(r) for r in x[:5]}
