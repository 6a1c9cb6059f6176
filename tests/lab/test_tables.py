"""``sextant-lab tables``: one dataset's record as a summary table and the goals' verdicts."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sextant.lab.sweep import Curve, goals
from sextant.lab.tables import markdown


def _record() -> dict[str, Any]:
    curves = [
        Curve("flat", "sextant", "-", 0.01, 2_000_000, {}, [{"knob": 0, "recall": 1.0, "qps": 500.0}]),
        Curve("flat", "numpy", "-", 0.0, 2_000_000, {}, [{"knob": 0, "recall": 1.0, "qps": 550.0}]),
        Curve("flat", "faiss", "-", 0.02, 2_000_000, {}, [{"knob": 0, "recall": 1.0, "qps": 450.0}]),
        Curve(
            "hnsw",
            "sextant",
            "ef_search",
            3.25,
            5_500_000,
            {"M": 16},
            [{"knob": 16, "recall": 0.9, "qps": 9000.0}, {"knob": 64, "recall": 0.97, "qps": 4000.0}],
        ),
        Curve("hnsw", "hnswlib", "ef_search", 1.0, 5_000_000, {"M": 16}, [{"knob": 16, "recall": 0.9, "qps": 8000.0}]),
        Curve("hnsw", "faiss", "ef_search", 1.5, 5_000_000, {"M": 16}, [{"knob": 16, "recall": 0.96, "qps": 7000.0}]),
    ]
    return {
        "dataset": "clustered-384d-1k", "n": 1000, "d": 384, "nq": 20, "metric": "ip",
        "curves": [asdict(c) for c in curves], "goals": goals(curves),
    }  # fmt: skip


def test_each_curve_is_a_row_with_its_qps_at_the_target_and_the_knob_there() -> None:
    lines = markdown(_record()).splitlines()
    assert lines[0] == "#### clustered-384d-1k (n=1,000, d=384, 20 queries, ip)"
    assert "| index | system | build s | memory MB | best recall@10 | QPS at recall ≥ 0.95 | knob there |" in lines
    assert "| hnsw | sextant | 3.2 | 5.5 | 0.970 | 4,000 | ef_search=64 |" in lines
    assert "| hnsw | hnswlib | 1.0 | 5.0 | 0.900 | — |  |" in lines  # never reaches the target
    assert "| flat | sextant | 0.0 | 2.0 | 1.000 | 500 |  |" in lines  # flat has no knob to name


def test_the_goals_follow_with_their_measured_ratios_and_verdicts() -> None:
    lines = markdown(_record()).splitlines()
    goal_rows = lines[lines.index("| goal | measured | met |") + 2 :]
    assert len(goal_rows) == 2
    hnsw = next(row for row in goal_rows if row.startswith("| hnsw_vs_hnswlib_qps_at_0.95 (>= 1/3)"))
    assert "'hnswlib_qps': None" in hnsw and hnsw.endswith("| no |")  # hnswlib never reached 0.95
    flat = next(row for row in goal_rows if row.startswith("| flat_vs_bare_scan (<= 1.2)"))
    assert "'slowdown': 1.1" in flat and flat.endswith("| yes |")
