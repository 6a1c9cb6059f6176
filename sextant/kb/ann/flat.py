"""Exact search: one matrix product against every stored vector, then a partial sort for the top k.

The oracle every approximate index is tested against. Queries are taken in blocks so the score
matrix stays near 128 MB whatever the number of vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from sextant.kb.ann.base import (
    FloatArray,
    IdArray,
    Metric,
    as_ids,
    as_vectors,
    grown,
    read_folder,
    top_k,
    worst,
    write_folder,
)

BLOCK_ELEMENTS = 1 << 25  # float32 scores per query block: 128 MB


class FlatIndex:
    """Every vector kept as it is; search scans them all."""

    kind: ClassVar[str] = "flat"

    def __init__(self, dim: int, metric: Metric = "ip") -> None:
        self.dim = dim
        self.metric: Metric = metric
        self._xb = np.zeros((0, dim), np.float32)
        self._ids = np.zeros(0, np.int64)
        self._sqnorms = np.zeros(0, np.float32)  # ||x||^2, for l2
        self._n = 0
        self._row: dict[int, int] = {}

    @classmethod
    def build(cls, xb: FloatArray, ids: IdArray, metric: Metric = "ip") -> Self:
        index = cls(xb.shape[1], metric)
        index.add(xb, ids)
        return index

    def __len__(self) -> int:
        return self._n

    @property
    def xb(self) -> FloatArray:
        """The stored vectors, in row order (a view)."""
        return self._xb[: self._n]

    @property
    def ids(self) -> IdArray:
        return self._ids[: self._n]

    def add(self, xb: FloatArray, ids: IdArray) -> None:
        """Append vectors.

        Raises:
            ValueError: bad shapes, or an id already present.
        """
        xb = as_vectors(xb, self.dim)
        ids = as_ids(ids, xb.shape[0])
        if any(int(i) in self._row for i in ids):
            raise ValueError("an id is already in the index; remove it first")
        n0, n1 = self._n, self._n + xb.shape[0]
        self._xb = grown(self._xb, n1)
        self._ids = grown(self._ids, n1)
        self._sqnorms = grown(self._sqnorms, n1)
        self._xb[n0:n1] = xb
        self._ids[n0:n1] = ids
        self._sqnorms[n0:n1] = np.einsum("ij,ij->i", xb, xb)
        self._row.update((int(i), n0 + r) for r, i in enumerate(ids))
        self._n = n1

    def remove(self, ids: IdArray) -> int:
        rows = [self._row[int(i)] for i in np.asarray(ids).reshape(-1) if int(i) in self._row]
        if not rows:
            return 0
        keep = np.ones(self._n, bool)
        keep[rows] = False
        xb, kept_ids, sq = self.xb[keep], self.ids[keep], self._sqnorms[: self._n][keep]
        self._n = int(keep.sum())
        self._xb[: self._n], self._ids[: self._n], self._sqnorms[: self._n] = xb, kept_ids, sq
        self._row = {int(i): r for r, i in enumerate(kept_ids)}
        return len(rows)

    def search(self, xq: FloatArray, k: int) -> tuple[FloatArray, IdArray]:
        xq = as_vectors(xq, self.dim)
        nq, n = xq.shape[0], self._n
        D = np.full((nq, k), worst(self.metric), np.float32)
        I = np.full((nq, k), -1, np.int64)
        kk = min(k, n)
        if kk == 0:
            return D, I
        block = max(1, BLOCK_ELEMENTS // n)
        for lo in range(0, nq, block):
            hi = min(nq, lo + block)
            scores = xq[lo:hi] @ self.xb.T  # (b, n)
            if self.metric == "l2":
                # ||q - x||^2 = ||q||^2 - 2 q.x + ||x||^2, ranked lowest first: keep it as a score to maximise
                scores *= 2.0
                scores -= self._sqnorms[:n]
            rows, order = top_k(scores, kk)
            D[lo:hi, :kk] = scores[rows, order]
            I[lo:hi, :kk] = self._ids[order]
        if self.metric == "l2":
            D[:, :kk] = np.einsum("ij,ij->i", xq, xq)[:, None] - D[:, :kk]
        return D, I

    def save(self, folder: Path) -> None:
        write_folder(folder, self.kind, {"metric": self.metric, "dim": self.dim}, {"xb": self.xb, "ids": self.ids})

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> Self:
        """(Copied into memory even with ``mmap``: a flat index's rows move on removal.)"""
        meta, arrays = read_folder(folder, cls.kind, mmap=mmap)
        index = cls(int(meta["dim"]), meta["metric"])
        index.add(arrays["xb"], arrays["ids"])
        return index

    def nbytes(self) -> int:
        return int(self.xb.nbytes + self.ids.nbytes + (self._n * 4 if self.metric == "l2" else 0))

    def params(self) -> dict[str, Any]:
        return {}
