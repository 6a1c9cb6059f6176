"""Vectors to measure on: seeded clustered sets of any size, and the shared ANN sets, with exact ground truth.

Uniform noise is the wrong test for an ANN index (in high dimension every point is about equally
far from every other, so no index can beat a scan); sentence embeddings sit near low-dimensional
clusters. ``clustered`` draws that shape: cluster centres on the unit sphere with Zipf-like sizes,
each point its centre plus a spread inside the cluster's own ``intrinsic``-dimensional subspace,
plus a little isotropic noise, normalised (so inner product is cosine, as in the product).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sextant.kb.ann.base import FloatArray, IdArray, Metric
from sextant.kb.ann.flat import FlatIndex

GROUND_TRUTH_K = 100


@dataclass(frozen=True, slots=True)
class Dataset:
    """Base vectors, queries and the exact top-``GROUND_TRUTH_K`` ids of each query."""

    name: str
    xb: FloatArray
    xq: FloatArray
    gt: IdArray
    metric: Metric


def clustered(
    n: int, d: int, *, nq: int = 0, n_clusters: int | None = None, intrinsic: int = 64, spread: float = 0.8,
    noise: float = 0.6, seed: int = 0,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """``n`` base vectors and ``nq`` held-out queries from the same clusters, unit length, float32."""
    rng = np.random.default_rng(seed)
    k = n_clusters or max(4, int(np.sqrt(n + nq)))
    centres = rng.standard_normal((k, d), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    sizes = 1.0 / np.arange(1, k + 1) ** 0.5
    which = rng.choice(k, n + nq, p=sizes / sizes.sum())
    x = np.empty((n + nq, d), np.float32)
    for c in range(k):
        rows = np.flatnonzero(which == c)
        basis = rng.standard_normal((intrinsic, d), dtype=np.float32) * (spread / np.sqrt(intrinsic * d))
        x[rows] = centres[c] + rng.standard_normal((rows.size, intrinsic), dtype=np.float32) @ basis
    x += rng.standard_normal(x.shape, dtype=np.float32) * (noise / np.sqrt(d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x[:n], x[n:]


def ground_truth(xb: FloatArray, xq: FloatArray, metric: Metric, k: int = GROUND_TRUTH_K) -> IdArray:
    """Exact top-``k`` row numbers of each query, by the flat index."""
    flat = FlatIndex.build(xb, np.arange(xb.shape[0]), metric)
    return flat.search(xq, min(k, xb.shape[0]))[1]


def synthetic(n: int, *, d: int = 384, nq: int = 1000, seed: int = 0, cache: Path | None = None) -> Dataset:
    """A clustered set with its ground truth, cached as .npy under ``cache`` (ground truth is the slow part)."""
    name = f"clustered-{d}d-{_size(n)}"
    paths = {part: cache / f"{name}-s{seed}-{part}.npy" for part in ("xb", "xq", "gt")} if cache else {}
    if paths and all(p.is_file() for p in paths.values()):
        xb, xq, gt = (np.load(paths[p], allow_pickle=False) for p in ("xb", "xq", "gt"))
        return Dataset(name, xb, xq, gt, "ip")
    xb, xq = clustered(n, d, nq=nq, seed=seed)
    gt = ground_truth(xb, xq, "ip")
    if paths:
        paths["xb"].parent.mkdir(parents=True, exist_ok=True)
        np.save(paths["xb"], xb, allow_pickle=False)
        np.save(paths["xq"], xq, allow_pickle=False)
        np.save(paths["gt"], gt, allow_pickle=False)
    return Dataset(name, xb, xq, gt, "ip")


def shared(folder: Path) -> list[Dataset]:
    """The sets under ``<data>/ann/`` that are present: BIGANN 10k and Fashion-MNIST (L2, their own ground
    truth), SciFact MiniLM vectors (inner product; 500 of them held out as queries)."""
    sets: list[Dataset] = []
    for stem, suffix in (("bigann10k", "u8"), ("fmnistsmall", "f32")):
        base = folder / f"{stem}_base_{suffix}.npy"
        if base.is_file():
            xb = np.load(base, allow_pickle=False).astype(np.float32)
            xq = np.load(folder / f"{stem}_queries_{suffix}.npy", allow_pickle=False).astype(np.float32)
            gt = np.load(folder / f"{stem}_gt_top100_l2.npy", allow_pickle=False).astype(np.int64)
            sets.append(Dataset(stem, xb, xq, gt, "l2"))
    scifact = folder / "scifact_minilm_docs_f32.npy"
    if scifact.is_file():
        x = np.load(scifact, allow_pickle=False).astype(np.float32)
        order = np.random.default_rng(0).permutation(x.shape[0])
        xq, xb = x[order[:500]], x[order[500:]]
        sets.append(Dataset("scifact-minilm", xb, xq, ground_truth(xb, xq, "ip"), "ip"))
    return sets


def recall_at(I: IdArray, gt: IdArray, k: int = 10) -> float:
    """recall@k: the share of each query's true top ``k`` found in its top ``k`` answers, averaged."""
    hits = sum(np.intersect1d(found[:k], true[:k]).size for found, true in zip(I, gt, strict=True))
    return hits / (k * I.shape[0])


def _size(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)
