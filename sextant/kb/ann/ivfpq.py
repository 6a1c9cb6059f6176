"""IVF-PQ (Jégou, Douze & Schmid, TPAMI 2011, section IV): an inverted file over PQ-coded residuals.

A coarse k-means quantiser splits the space into ``nlist`` cells; each vector is stored in its
cell's list as the PQ code (``m`` x ``nbits``) of its residual from the cell centroid. A query
scans only the ``nprobe`` cells whose centroids are nearest, scoring each code by asymmetric
distance tables. ``IVFPQRerankIndex`` also keeps the vectors and re-scores the best
``k * oversample`` codes exactly (FAISS's IndexIVFPQ + IndexRefineFlat).

The lists are kept packed: rows sorted by cell, with ``offsets`` (nlist + 1) marking where each
cell's rows start, so a scan reads contiguous memory and ``nprobe == nlist`` is a full scan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

import numba
import numpy as np
import numpy.typing as npt

from sextant.kb.ann.base import (
    METRIC_CODES,
    FloatArray,
    IdArray,
    Metric,
    as_ids,
    as_vectors,
    read_folder,
    scores_from_distances,
    top_k,
    worst,
    write_folder,
)
from sextant.kb.ann.distance import distance
from sextant.kb.ann.heap import drain_ascending, push_bounded
from sextant.kb.ann.kmeans import assign_nearest, kmeans
from sextant.kb.ann.pq import ProductQuantizer


class IVFPQIndex:
    """Inverted lists of PQ codes; search scans ``nprobe`` lists with ADC tables."""

    kind: ClassVar[str] = "ivfpq"
    ROW_ARRAYS: ClassVar[tuple[str, ...]] = ("codes", "ids")

    def __init__(
        self, dim: int, metric: Metric = "ip", *, nlist: int = 1024, m: int = 48, nbits: int = 8, nprobe: int = 16,
        seed: int = 0,
    ) -> None:  # fmt: skip
        self.dim = dim
        self.metric: Metric = metric
        self.nlist, self.nprobe, self.seed = nlist, nprobe, seed
        self.pq = ProductQuantizer(dim, m, nbits)
        self.centroids = np.zeros((nlist, dim), np.float32)
        self.trained = False
        self.offsets = np.zeros(nlist + 1, np.int64)
        self.rows: dict[str, npt.NDArray[Any]] = {
            "codes": np.zeros((0, m), np.uint8),
            "ids": np.zeros(0, np.int64),
        }

    @classmethod
    def build(cls, xb: FloatArray, ids: IdArray, metric: Metric = "ip", **params: Any) -> Self:
        index = cls(xb.shape[1], metric, **params)
        index.train(xb)
        index.add(xb, ids)
        return index

    def params(self) -> dict[str, Any]:
        return {"nlist": self.nlist, "m": self.pq.m, "nbits": self.pq.nbits, "nprobe": self.nprobe, "seed": self.seed}

    def __len__(self) -> int:
        return int(self.rows["ids"].shape[0])

    @property
    def ids(self) -> IdArray:
        return self.rows["ids"]

    @property
    def codes(self) -> npt.NDArray[np.uint8]:
        return self.rows["codes"]

    def list_of_rows(self) -> IdArray:
        """The cell of each row (rows are sorted by cell)."""
        return np.repeat(np.arange(self.nlist), np.diff(self.offsets))

    def train(self, x: FloatArray) -> None:
        """Learn the coarse centroids, then the PQ codebooks on the residuals."""
        x = as_vectors(x, self.dim)
        self.centroids = kmeans(x, self.nlist, seed=self.seed)
        residuals = x - self.centroids[assign_nearest(x, self.centroids)]
        self.pq.train(residuals, seed=self.seed + 1)
        self.trained = True

    def add(self, xb: FloatArray, ids: IdArray) -> None:
        """Encode vectors into their cells' lists (training first on them if untrained).

        Raises:
            ValueError: bad shapes, or an id already present.
        """
        xb = as_vectors(xb, self.dim)
        ids = as_ids(ids, xb.shape[0])
        if np.isin(ids, self.ids).any():
            raise ValueError("an id is already in the index; remove it first")
        if not self.trained:
            self.train(xb)
        cells = assign_nearest(xb, self.centroids)
        new = self._new_rows(xb, ids, self.pq.encode(xb - self.centroids[cells]))
        cells = np.concatenate([self.list_of_rows(), cells])
        order = np.argsort(cells, kind="stable")
        self.rows = {name: np.concatenate([self.rows[name], new[name]])[order] for name in self.ROW_ARRAYS}
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(cells, minlength=self.nlist))])

    def _new_rows(self, xb: FloatArray, ids: IdArray, codes: npt.NDArray[np.uint8]) -> dict[str, npt.NDArray[Any]]:
        return {"codes": codes, "ids": ids}

    def remove(self, ids: IdArray) -> int:
        gone = np.isin(self.ids, np.asarray(ids, np.int64))
        if not gone.any():
            return 0
        cells = self.list_of_rows()[~gone]
        self.rows = {name: arr[~gone] for name, arr in self.rows.items()}
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(cells, minlength=self.nlist))])
        return int(gone.sum())

    def search(self, xq: FloatArray, k: int, nprobe: int | None = None) -> tuple[FloatArray, IdArray]:
        xq = as_vectors(xq, self.dim)
        dist, rows = self._scan(xq, k, nprobe or self.nprobe)
        return self._answer(dist, rows)

    def _scan(self, xq: FloatArray, k: int, nprobe: int) -> tuple[FloatArray, IdArray]:
        """Kernel distances and rows of the ``k`` best codes in the ``nprobe`` nearest cells."""
        nprobe = min(nprobe, self.nlist)
        sq = np.einsum("ij,ij->i", self.centroids, self.centroids)
        coarse = xq @ self.centroids.T  # (nq, nlist)
        if self.metric == "l2":
            coarse = 2.0 * coarse - sq[None, :]  # -||q - c||^2 up to a per-query constant
        _, probes = top_k(coarse, nprobe)
        codebooks, metric = self.pq.codebooks, METRIC_CODES[self.metric]
        return adc_scan(xq, probes, self.centroids, codebooks, self.offsets, self.codes, k, metric)

    def _answer(self, dist: FloatArray, rows: IdArray) -> tuple[FloatArray, IdArray]:
        found = rows >= 0
        D = np.where(found, scores_from_distances(dist, self.metric), worst(self.metric)).astype(np.float32)
        I = np.where(found, self.ids[np.maximum(rows, 0)] if len(self) else -1, -1)
        return D, I

    def save(self, folder: Path) -> None:
        meta = {"metric": self.metric, "dim": self.dim, "params": self.params(), "trained": self.trained}
        arrays: dict[str, npt.NDArray[Any]] = {
            "centroids": self.centroids,
            "codebooks": self.pq.codebooks,
            "offsets": self.offsets,
            **self.rows,
        }
        write_folder(folder, self.kind, meta, arrays)

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> Self:
        meta, a = read_folder(folder, cls.kind, mmap=mmap)
        index = cls(int(meta["dim"]), meta["metric"], **meta["params"])
        index.centroids, index.pq.codebooks, index.offsets = a["centroids"], a["codebooks"], a["offsets"]
        index.rows = {name: a[name] for name in cls.ROW_ARRAYS}
        index.trained = bool(meta["trained"])
        return index

    def nbytes(self) -> int:
        arrays: list[npt.NDArray[Any]] = [self.centroids, self.pq.codebooks, self.offsets, *self.rows.values()]
        return int(sum(a.nbytes for a in arrays))


class IVFPQRerankIndex(IVFPQIndex):
    """IVF-PQ whose best ``k * oversample`` candidates are re-scored against the exact vectors."""

    kind: ClassVar[str] = "ivfpq_rerank"
    ROW_ARRAYS: ClassVar[tuple[str, ...]] = ("codes", "ids", "xb")

    def __init__(self, dim: int, metric: Metric = "ip", *, oversample: int = 8, **params: Any) -> None:
        super().__init__(dim, metric, **params)
        self.oversample = oversample
        self.rows["xb"] = np.zeros((0, dim), np.float32)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "oversample": self.oversample}

    def _new_rows(self, xb: FloatArray, ids: IdArray, codes: npt.NDArray[np.uint8]) -> dict[str, npt.NDArray[Any]]:
        return {"codes": codes, "ids": ids, "xb": xb}

    def search(
        self, xq: FloatArray, k: int, nprobe: int | None = None, oversample: int | None = None
    ) -> tuple[FloatArray, IdArray]:
        xq = as_vectors(xq, self.dim)
        _, candidates = self._scan(xq, k * (oversample or self.oversample), nprobe or self.nprobe)
        dist, rows = rescore(xq, candidates, self.rows["xb"], k, METRIC_CODES[self.metric])
        return self._answer(dist, rows)


@numba.njit(cache=True, nogil=True, fastmath=True)
def adc_scan(xq, probes, centroids, codebooks, offsets, codes, k, metric):  # type: ignore[no-untyped-def]
    """The ``k`` lowest asymmetric distances per query over the probed lists, as (distances, rows).

    Inner product: ``q.(c + r) = q.c + sum_j q_j.r_j``, one (m, ksub) table per query. Squared L2:
    ``||q - c - r||^2 = sum_j ||(q - c)_j - r_j||^2``, one table per probed cell.
    """
    nq = xq.shape[0]
    m, ksub = codebooks.shape[:2]
    dist = np.full((nq, k), np.inf, np.float32)
    rows = np.full((nq, k), -1, np.int64)
    table = np.empty((m, ksub), np.float32)
    target = np.empty(xq.shape[1], np.float32)  # what the codes approximate: q (ip) or q - c (l2)
    heap_k, heap_i = np.empty(k, np.float32), np.empty(k, np.int64)
    out_k, out_i = np.empty(k, np.float32), np.empty(k, np.int64)
    for qi in range(nq):
        q = xq[qi]
        if metric == 0:
            _fill_table(q, codebooks, table, 0)
        size = 0
        for p in range(probes.shape[1]):
            cell = probes[qi, p]
            if offsets[cell] == offsets[cell + 1]:
                continue
            if metric == 0:
                base = distance(q, centroids, cell, 0)
            else:
                base = np.float32(0.0)
                for t in range(q.shape[0]):
                    target[t] = q[t] - centroids[cell, t]
                _fill_table(target, codebooks, table, 1)
            for row in range(offsets[cell], offsets[cell + 1]):
                s = base
                for j in range(m):
                    s += table[j, codes[row, j]]
                size = push_bounded(heap_k, heap_i, size, k, s, row)
        drain_ascending(heap_k, heap_i, size, out_k, out_i)
        dist[qi, :size] = out_k[:size]
        rows[qi, :size] = out_i[:size]
    return dist, rows


@numba.njit(cache=True, nogil=True, fastmath=True)
def _fill_table(target, codebooks, table, metric):  # type: ignore[no-untyped-def]
    """``table[j, c]``: the distance between sub-vector ``j`` of ``target`` and centroid ``c`` of sub-space ``j``."""
    m, ksub, dsub = codebooks.shape
    for j in range(m):
        sub = target[j * dsub : (j + 1) * dsub]
        for c in range(ksub):
            table[j, c] = distance(sub, codebooks[j], c, metric)


@numba.njit(cache=True, nogil=True, fastmath=True)
def rescore(xq, candidates, xb, k, metric):  # type: ignore[no-untyped-def]
    """The ``k`` nearest of each query's candidate rows by exact distance, as (distances, rows)."""
    nq = xq.shape[0]
    dist = np.full((nq, k), np.inf, np.float32)
    rows = np.full((nq, k), -1, np.int64)
    heap_k, heap_i = np.empty(k, np.float32), np.empty(k, np.int64)
    out_k, out_i = np.empty(k, np.float32), np.empty(k, np.int64)
    for qi in range(nq):
        size = 0
        for c in range(candidates.shape[1]):
            row = candidates[qi, c]
            if row >= 0:
                size = push_bounded(heap_k, heap_i, size, k, distance(xq[qi], xb, row, metric), row)
        drain_ascending(heap_k, heap_i, size, out_k, out_i)
        dist[qi, :size] = out_k[:size]
        rows[qi, :size] = out_i[:size]
    return dist, rows
