"""Lloyd's k-means (Lloyd, "Least squares quantization in PCM", 1982), seeded, as FAISS trains it.

Centroids start at a random sample of the points; the training set is subsampled to at most
``max_points_per_centroid`` points per centroid (FAISS's default of 256); an empty cluster takes
over half of the largest one (its centroid copied and nudged apart), so none is wasted. With fewer
points than centroids the points are repeated: the extra centroids are duplicates, never wrong.
"""

from __future__ import annotations

import numpy as np

from sextant.kb.ann.base import FloatArray, IdArray

BLOCK_ELEMENTS = 1 << 24


def kmeans(x: FloatArray, k: int, *, niter: int = 20, seed: int = 0, max_points_per_centroid: int = 256) -> FloatArray:
    """``k`` centroids (k, d) of the rows of ``x``."""
    n, d = x.shape
    rng = np.random.default_rng(seed)
    if n > k * max_points_per_centroid:
        x = x[np.sort(rng.choice(n, k * max_points_per_centroid, replace=False))]
        n = x.shape[0]
    centroids = x[rng.choice(n, k, replace=n < k)].astype(np.float32, copy=True)
    if n <= k:
        return centroids
    for _ in range(niter):
        assign = assign_nearest(x, centroids)
        counts = np.bincount(assign, minlength=k)
        nonempty = counts > 0
        # Sum each cluster's rows in one pass over the points sorted by cluster (np.add.at is ~10x slower).
        order = np.argsort(assign, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])[nonempty]
        sums = np.add.reduceat(x[order], starts, axis=0, dtype=np.float64)
        centroids[nonempty] = (sums / counts[nonempty, None]).astype(np.float32)
        for empty in np.flatnonzero(~nonempty):
            big = int(np.argmax(counts))
            nudge = rng.standard_normal(d, dtype=np.float32) * 1e-4 * (np.abs(centroids[big]).mean() + 1e-12)
            centroids[empty] = centroids[big] + nudge
            centroids[big] -= nudge
            counts[empty] = counts[big] // 2
            counts[big] -= counts[empty]
    return centroids


def assign_nearest(x: FloatArray, centroids: FloatArray) -> IdArray:
    """Index of the nearest centroid (L2) of each row of ``x``."""
    n, k = x.shape[0], centroids.shape[0]
    c_sq = np.einsum("ij,ij->i", centroids, centroids)
    out = np.empty(n, np.int64)
    block = max(1, BLOCK_ELEMENTS // max(k, 1))
    for lo in range(0, n, block):
        # ||x - c||^2 minus the constant ||x||^2
        dist = c_sq[None, :] - 2.0 * (x[lo : lo + block] @ centroids.T)  # (b, k)
        out[lo : lo + block] = np.argmin(dist, axis=1)
    return out
