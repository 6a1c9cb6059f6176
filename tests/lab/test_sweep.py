"""The sweep: IVF knobs by size, the frontier read at the target recall, the goals' verdicts, one measured run."""

from __future__ import annotations

import pytest

from sextant.lab.datasets import Dataset, clustered, ground_truth
from sextant.lab.sweep import Curve, K, goals, ivf_params, measure, qps_at_recall, report


def _curve(index: str, system: str, points: list[tuple[float, float]], memory: int = 1000) -> Curve:
    return Curve(
        index, system, "knob", 1.0, memory, {}, [{"knob": i, "recall": r, "qps": q} for i, (r, q) in enumerate(points)]
    )


def test_ivf_params_scale_nlist_with_the_size_and_give_eight_dims_a_byte() -> None:
    assert ivf_params(100, 32) == {"nlist": 32, "m": 4, "nbits": 8}  # 4 sqrt(100) = 40, log2 5.3 rounds to 5
    assert ivf_params(1, 16)["nlist"] == 16  # at least 16 lists
    assert ivf_params(10**8, 384) == {"nlist": 1024, "m": 48, "nbits": 8}  # at most 1024
    assert ivf_params(1000, 12)["m"] == 3  # 12 is no multiple of 8: four dims a byte


def test_qps_at_recall_is_the_fastest_point_that_reaches_the_target() -> None:
    curve = _curve("hnsw", "sextant", [(0.80, 9000.0), (0.95, 5000.0), (0.97, 6000.0), (0.99, 1000.0)])
    assert qps_at_recall(curve) == 6000.0  # a slow sample at higher recall does not decide
    assert qps_at_recall(curve, 0.999) is None


def test_goals_are_ratios_between_systems_with_a_verdict_each() -> None:
    curves = [
        _curve("hnsw", "sextant", [(0.96, 1000.0)]),
        _curve("hnsw", "hnswlib", [(0.96, 4000.0)]),
        _curve("hnsw", "faiss", [(0.96, 2000.0)]),
        _curve("ivfpq_rerank", "sextant", [(0.90, 1.0), (0.96, 1.0)], memory=500),
        _curve("ivfpq_rerank", "faiss", [(0.95, 1.0), (0.97, 1.0)], memory=1000),
        _curve("flat", "sextant", [(1.0, 100.0)]),
        _curve("flat", "numpy", [(1.0, 110.0)]),
        _curve("flat", "faiss", [(1.0, 90.0)]),
    ]
    out = goals(curves)
    hnsw = out["hnsw_vs_hnswlib_qps_at_0.95"]
    assert hnsw["ratio"] == 0.25 and hnsw["met"] is False  # a quarter of hnswlib's speed; the goal is a third
    ivf = out["ivfpq_rerank_vs_faiss_recall"]
    assert ivf["largest_gap_same_nprobe"] == 0.05 and ivf["memory_ratio"] == 0.5 and ivf["met"] is False
    flat = out["flat_vs_bare_scan"]
    assert flat["slowdown"] == pytest.approx(1.1) and flat["met"] is True
    assert goals([c for c in curves if c.index == "flat"]).keys() == {"flat_vs_bare_scan"}  # only what ran


def test_a_measured_exact_family_finds_the_ground_truth_in_every_system() -> None:
    xb, xq = clustered(400, 16, nq=12, seed=2)
    ds = Dataset("tiny", xb, xq, ground_truth(xb, xq, "ip"), "ip")
    curves = measure(ds, repeats=1, families=("flat",))
    assert [(c.index, c.system) for c in curves] == [("flat", "numpy"), ("flat", "sextant"), ("flat", "faiss")]
    for c in curves:
        assert len(c.points) == 1 and c.points[0]["recall"] == 1.0 and c.points[0]["qps"] > 0
    assert curves[0].memory_bytes == xb.nbytes  # the bare scan holds the vectors and nothing else
    record = report(ds, curves)
    assert (record["dataset"], record["n"], record["d"], record["nq"], record["k"]) == ("tiny", 400, 16, 12, K)
    assert record["curves"][1]["system"] == "sextant" and set(record["goals"]) == {"flat_vs_bare_scan"}
