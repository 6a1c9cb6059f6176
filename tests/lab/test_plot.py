"""The recall/QPS chart: one PNG per dataset record, written where asked."""

from __future__ import annotations

from pathlib import Path

from sextant.lab.plot import recall_qps

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_record_becomes_a_png_at_the_path_given_parents_made(tmp_path: Path) -> None:
    record = {
        "dataset": "tiny", "n": 1000, "d": 8, "metric": "ip",
        "curves": [
            {"index": "hnsw", "system": "sextant", "points": [
                {"knob": 64, "recall": 0.99, "qps": 2000.0}, {"knob": 16, "recall": 0.9, "qps": 8000.0},
            ]},
            {"index": "flat", "system": "numpy", "points": [{"knob": 0, "recall": 1.0, "qps": 500.0}]},
            {"index": "annoy", "system": "elsewhere", "points": [{"knob": 1, "recall": 0.5, "qps": 10.0}]},
        ],
    }  # fmt: skip
    path = tmp_path / "plots" / "nested" / "ann-tiny.png"
    assert recall_qps(record, path) == path
    data = path.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000  # a drawn chart, not an empty canvas
    # An index and a system the styles do not know are drawn in the defaults, not refused.
    assert recall_qps({**record, "curves": record["curves"][2:]}, tmp_path / "other.png").read_bytes().startswith(PNG)
