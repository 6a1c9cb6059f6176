"""Product quantisation (Jégou, Douze & Schmid, "Product quantization for nearest neighbor search", TPAMI 2011).

A vector of ``dim`` floats is cut into ``m`` sub-vectors of ``dsub = dim / m``; each is replaced by
the index of its nearest of ``ksub = 2**nbits`` centroids, learnt by k-means per sub-space. A code
is ``m`` bytes (``nbits <= 8``). Asymmetric distance (ADC): the query stays exact and is compared
with every centroid once, into a (m, ksub) table; a code's distance is then ``m`` table lookups.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sextant.kb.ann.base import FloatArray
from sextant.kb.ann.kmeans import assign_nearest, kmeans

Codes = npt.NDArray[np.uint8]


class ProductQuantizer:
    """``m`` sub-quantisers of ``2**nbits`` centroids each."""

    def __init__(self, dim: int, m: int, nbits: int = 8) -> None:
        if dim % m:
            raise ValueError(f"the dimension {dim} is not a multiple of the PQ m={m}")
        if not 1 <= nbits <= 8:
            raise ValueError(f"nbits must be 1-8 (one byte per sub-vector), got {nbits}")
        self.dim, self.m, self.nbits = dim, m, nbits
        self.dsub, self.ksub = dim // m, 1 << nbits
        self.codebooks = np.zeros((m, self.ksub, self.dsub), np.float32)  # (m, ksub, dsub)

    def train(self, x: FloatArray, *, seed: int = 0, niter: int = 25) -> None:
        """Learn each sub-space's centroids by k-means on ``x`` (n, dim)."""
        for j in range(self.m):
            self.codebooks[j] = kmeans(self._sub(x, j), self.ksub, niter=niter, seed=seed + j)

    def encode(self, x: FloatArray) -> Codes:
        """The (n, m) codes of ``x``: the nearest centroid in each sub-space."""
        codes = np.empty((x.shape[0], self.m), np.uint8)
        for j in range(self.m):
            codes[:, j] = assign_nearest(self._sub(x, j), self.codebooks[j])
        return codes

    def decode(self, codes: Codes) -> FloatArray:
        """The (n, dim) reconstructions: each code's centroids, concatenated."""
        parts = [self.codebooks[j][codes[:, j]] for j in range(self.m)]  # m x (n, dsub)
        return np.concatenate(parts, axis=1) if parts else np.zeros((codes.shape[0], 0), np.float32)

    def _sub(self, x: FloatArray, j: int) -> FloatArray:
        return np.ascontiguousarray(x[:, j * self.dsub : (j + 1) * self.dsub])
