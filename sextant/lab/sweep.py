"""Recall@10 against queries/s over each index's knob, ours beside FAISS and hnswlib, in one process.

The machine is shared, so each knob value is timed ``repeats`` times with the systems taking turns
(ours, theirs, ours, …) and the median kept; every conclusion is a ratio between systems measured
in the same run. All searches get the whole query batch on one thread.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from sextant.kb.ann.base import FloatArray, IdArray, Metric
from sextant.kb.ann.flat import FlatIndex
from sextant.kb.ann.hnsw import HNSWIndex
from sextant.kb.ann.ivfpq import IVFPQIndex, IVFPQRerankIndex
from sextant.lab import references
from sextant.lab.datasets import Dataset, recall_at

K = 10
EF = (10, 16, 24, 32, 48, 64, 96, 128, 192, 256)
NPROBE = (1, 2, 4, 8, 16, 32, 64, 128)
HNSW = {"M": 16, "ef_construction": 200}
OVERSAMPLE = 8
TARGET_RECALL = 0.95

Builder = Callable[[], tuple[references.Searcher, int]]


@dataclass(slots=True)
class Curve:
    """One system's index: build cost, memory, and recall/QPS at each knob value."""

    index: str  # flat | hnsw | ivfpq | ivfpq_rerank
    system: str  # sextant | faiss | hnswlib | numpy
    knob: str
    build_s: float
    memory_bytes: int
    params: dict[str, Any]
    points: list[dict[str, float]] = field(default_factory=list)  # {knob, recall, qps}


def ivf_params(n: int, d: int) -> dict[str, int]:
    """nlist near 4 sqrt(n) (a power of two, at most 1024 so 1M vectors train in minutes), 8 dims per PQ byte."""
    nlist = int(min(1024, max(16, 2 ** round(np.log2(4 * np.sqrt(n))))))
    return {"nlist": nlist, "m": d // 8 if d % 8 == 0 else d // 4, "nbits": 8}


def measure(ds: Dataset, *, repeats: int = 3, families: tuple[str, ...] = ("flat", "hnsw", "ivfpq")) -> list[Curve]:
    """Every curve of the chosen index families on one dataset."""
    references.single_threaded()
    xb, ids, metric = ds.xb, np.arange(ds.xb.shape[0]), ds.metric
    curves: list[Curve] = []
    if "flat" in families:
        curves += _family(ds, "flat", "-", (0,), repeats, {
            "numpy": lambda: (_bare_scan(xb, metric), xb.nbytes),
            "sextant": lambda: _ours(FlatIndex.build(xb, ids, metric), lambda i, xq, k, _: i.search(xq, k)),
            "faiss": lambda: references.faiss_flat(xb, metric),
        })  # fmt: skip
    if "hnsw" in families:
        curves += _family(ds, "hnsw", "ef_search", EF, repeats, {
            "sextant": lambda: _ours(
                HNSWIndex.build(xb, ids, metric, **HNSW), lambda i, xq, k, ef: i.search(xq, k, ef_search=ef)
            ),
            "hnswlib": lambda: references.hnswlib_hnsw(xb, metric, **HNSW),
            "faiss": lambda: references.faiss_hnsw(xb, metric, **HNSW),
        })  # fmt: skip
    if "ivfpq" in families:
        # Squared L2 for IVF-PQ on every set: on unit vectors it ranks as the inner product does, and its
        # residual tables are far more accurate near the query (learning/ann-comparison.md).
        p = ivf_params(*xb.shape)
        ivf: dict[str, Any] = {}

        def ours_ivf() -> tuple[references.Searcher, int]:
            ivf["index"] = index = IVFPQRerankIndex.build(xb, ids, "l2", oversample=OVERSAMPLE, **p)
            search, nbytes = _ours(index, lambda i, xq, k, nprobe: IVFPQIndex.search(i, xq, k, nprobe=nprobe))
            return search, nbytes - index.rows["xb"].nbytes  # what a plain IVF-PQ index holds

        curves += _family(ds, "ivfpq", "nprobe", NPROBE, repeats, {
            "sextant": ours_ivf,
            "faiss": lambda: references.faiss_ivfpq(xb, "l2", oversample=None, **p),
        }, params=p)  # fmt: skip
        # The same trained index, re-scored: its build is the one above, its memory includes the vectors.
        curves += _family(ds, "ivfpq_rerank", "nprobe", NPROBE, repeats, {
            "sextant": lambda: _ours(ivf["index"], lambda i, xq, k, nprobe: i.search(xq, k, nprobe=nprobe)),
            "faiss": lambda: references.faiss_ivfpq(xb, "l2", oversample=OVERSAMPLE, **p),
        }, params={**p, "oversample": OVERSAMPLE})  # fmt: skip
    return curves


OurSearch = Callable[[Any, FloatArray, int, int], tuple[FloatArray, IdArray]]


def _ours(index: Any, search: OurSearch) -> tuple[references.Searcher, int]:
    return (lambda xq, k, knob: search(index, xq, k, knob)[1]), index.nbytes()


def _bare_scan(xb: FloatArray, metric: Metric) -> references.Searcher:
    """The floor for exact search: one matrix product and a partial sort, nothing else."""
    sq = np.einsum("ij,ij->i", xb, xb)

    def search(xq: FloatArray, k: int, _: int) -> IdArray:
        s = xq @ xb.T if metric == "ip" else 2.0 * (xq @ xb.T) - sq
        top = np.argpartition(-s, k, axis=1)[:, :k]
        return np.take_along_axis(top, np.argsort(-np.take_along_axis(s, top, axis=1), axis=1), axis=1)

    return search


def _family(
    ds: Dataset, index: str, knob: str, knobs: tuple[int, ...], repeats: int, builders: dict[str, Builder],
    params: dict[str, Any] | None = None,
) -> list[Curve]:  # fmt: skip
    built: dict[str, references.Searcher] = {}
    curves: dict[str, Curve] = {}
    for system, build in builders.items():
        started = time.perf_counter()
        search, nbytes = build()
        build_s = time.perf_counter() - started
        search(ds.xq[:8], K, knobs[0])  # warm: numba loads its compiled kernels on the first call
        built[system] = search
        curves[system] = Curve(
            index, system, knob, round(build_s, 3), nbytes, params or dict(HNSW if index == "hnsw" else {})
        )
    for value in knobs:
        seconds: dict[str, list[float]] = {s: [] for s in built}
        found: dict[str, IdArray] = {}
        for _ in range(repeats):
            for system, search in built.items():
                started = time.perf_counter()
                found[system] = search(ds.xq, K, value)
                seconds[system].append(time.perf_counter() - started)
        for system in built:
            qps = ds.xq.shape[0] / statistics.median(seconds[system])
            recall = recall_at(found[system], ds.gt, K)
            curves[system].points.append({"knob": value, "recall": round(recall, 4), "qps": round(qps, 1)})
    return list(curves.values())


def qps_at_recall(curve: Curve, target: float = TARGET_RECALL) -> float | None:
    """The best queries/s among the knob values that reach ``target`` recall (the Pareto frontier, as
    ann-benchmarks reads it: on a shared machine one slow sample should not decide)."""
    qps = [p["qps"] for p in curve.points if p["recall"] >= target]
    return max(qps) if qps else None


def goals(curves: list[Curve]) -> dict[str, Any]:
    """The issue's three goals, as measured ratios with a verdict each (None where a family was not run)."""
    by = {(c.index, c.system): c for c in curves}
    out: dict[str, Any] = {}
    if ("hnsw", "sextant") in by:
        ours, theirs = qps_at_recall(by["hnsw", "sextant"]), qps_at_recall(by["hnsw", "hnswlib"])
        faiss = qps_at_recall(by["hnsw", "faiss"])
        ratio = ours / theirs if ours and theirs else None
        out["hnsw_vs_hnswlib_qps_at_0.95"] = {
            "sextant_qps": ours, "hnswlib_qps": theirs, "faiss_qps": faiss, "ratio": ratio,
            "goal": ">= 1/3", "met": bool(ratio and ratio >= 1 / 3),
        }  # fmt: skip
    if ("ivfpq_rerank", "sextant") in by:
        ours_pts, faiss_pts = by["ivfpq_rerank", "sextant"].points, by["ivfpq_rerank", "faiss"].points
        gaps = [f["recall"] - o["recall"] for o, f in zip(ours_pts, faiss_pts, strict=True)]
        best = max(p["recall"] for p in ours_pts)
        out["ivfpq_rerank_vs_faiss_recall"] = {
            "sextant_best_recall": best, "faiss_best_recall": max(p["recall"] for p in faiss_pts),
            "largest_gap_same_nprobe": round(max(gaps), 4),
            "memory_ratio": by["ivfpq_rerank", "sextant"].memory_bytes / by["ivfpq_rerank", "faiss"].memory_bytes,
            "goal": ">= 0.95 and within 0.02 of FAISS", "met": bool(best >= TARGET_RECALL and max(gaps) <= 0.02),
        }  # fmt: skip
    if ("flat", "sextant") in by:
        ours_qps, bare_qps = by["flat", "sextant"].points[0]["qps"], by["flat", "numpy"].points[0]["qps"]
        out["flat_vs_bare_scan"] = {
            "sextant_qps": ours_qps, "numpy_qps": bare_qps, "faiss_qps": by["flat", "faiss"].points[0]["qps"],
            "slowdown": bare_qps / ours_qps, "goal": "<= 1.2", "met": bare_qps / ours_qps <= 1.2,
        }  # fmt: skip
    return out


def report(ds: Dataset, curves: list[Curve]) -> dict[str, Any]:
    """The JSON record of one dataset."""
    return {
        "dataset": ds.name,
        "n": int(ds.xb.shape[0]),
        "d": int(ds.xb.shape[1]),
        "nq": int(ds.xq.shape[0]),
        "metric": ds.metric,
        "k": K,
        "curves": [asdict(c) for c in curves],
        "goals": goals(curves),
    }
