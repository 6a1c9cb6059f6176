"""The Index Lab as the browser sees it: the benchmark file reshaped for the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sextant.agent.lab import read_overview


def curve(system: str, index: str, knob: str, *points: tuple[float | str, float, float]) -> dict[str, Any]:
    """One curve as ``sextant-lab bench`` writes it: each point is (knob value, recall@10, queries per second)."""
    measured = [{"knob": value, "recall": recall, "qps": qps} for value, recall, qps in points]
    return {"index": index, "system": system, "knob": knob, "build_s": 2.5, "memory_bytes": 4096, "points": measured}


TOY = {
    "dataset": "toy",
    "n": 100,
    "d": 8,
    "curves": [
        curve("sextant", "ivfpq", "nprobe", (4, 0.8, 500.0)),
        curve("faiss", "ivfpq", "nprobe", (4, 0.82, 900.0)),
        curve("sextant", "flat", "-", ("-", 1.0, 50.0)),
    ],
}
RESULTS = {"created": "2026-11-30T04:00:00", "datasets": [TOY]}


def written(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "lab.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_the_curves_are_named_by_index_and_reference_library_with_their_points(tmp_path: Path) -> None:
    overview = read_overview(written(tmp_path, RESULTS))
    assert overview.available and overview.created == "2026-11-30T04:00:00" and overview.reason == ""
    [dataset] = overview.datasets
    assert (dataset.name, dataset.vectors, dataset.dimension) == ("toy", 100, 8)
    assert [(i.index, i.system) for i in dataset.indexes] == [
        ("ivfpq", "sextant"),
        ("ivfpq · faiss", "faiss"),
        ("flat", "sextant"),
    ]
    ours = dataset.indexes[0]
    assert (ours.knob, ours.build_s, ours.memory_bytes) == ("nprobe", 2.5, 4096)
    assert [p.model_dump() for p in ours.points] == [{"param": 4, "recall_at_10": 0.8, "qps": 500.0}]
    assert dataset.indexes[2].points[0].param == "-"


def test_without_results_the_page_is_told_which_command_writes_them(tmp_path: Path) -> None:
    overview = read_overview(tmp_path / "missing.json")
    assert not overview.available and overview.datasets == []
    assert overview.reason == f"no benchmark results at {tmp_path / 'missing.json'}: run `sextant-lab bench`"


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        {"created": "x"},
        {"datasets": [{"dataset": "toy", "n": 1, "d": 2}]},
        {"datasets": [{"dataset": "toy", "n": 1, "d": 2, "curves": [{"index": "hnsw"}]}]},
        {"datasets": "toy"},
    ],
    ids=["not-json", "no-datasets", "no-curves", "curve-missing-fields", "datasets-not-a-list"],
)
def test_a_file_that_cannot_be_read_is_unavailable_with_the_reason(tmp_path: Path, content: Any) -> None:
    overview = read_overview(written(tmp_path, content))
    assert not overview.available and overview.datasets == []
    assert overview.reason.startswith(f"the benchmark results at {tmp_path / 'lab.json'} cannot be read: ")
