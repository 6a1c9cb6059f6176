"""The Index Lab over HTTP: the benchmark curves, and one query through every index side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sextant.contract.ann import AnnComparison
from tests.agent.app_client import ClientFor

pytestmark = pytest.mark.slow


def test_the_index_lab_shows_benchmark_curves_and_compares_indexes_live(client_for: Any, tmp_path: Path) -> None:
    results = tmp_path / "lab.json"
    curve = {"index": "hnsw", "knob": "ef_search", "build_s": 1.5, "memory_bytes": 1000}
    results.write_text(
        json.dumps(
            {
                "created": "2026-11-30T04:00:00",
                "datasets": [
                    {
                        "dataset": "toy",
                        "n": 100,
                        "d": 8,
                        "curves": [
                            {**curve, "system": "sextant", "points": [{"knob": 16, "recall": 0.9, "qps": 900.0}]},
                            {**curve, "system": "hnswlib", "points": [{"knob": 16, "recall": 0.91, "qps": 1000.0}]},
                        ],
                    }
                ],
            }
        )
    )
    client = client_for(lab_results=results)
    client.post("/ingest", json={"documents": [{"id": "taxes", "title": "Taxes", "content": "File by April 15."}]})
    overview = client.get("/lab").json()
    assert overview["available"] is True
    assert [i["index"] for i in overview["datasets"][0]["indexes"]] == ["hnsw", "hnsw · hnswlib"]
    assert overview["datasets"][0]["indexes"][0]["points"] == [{"param": 16, "recall_at_10": 0.9, "qps": 900.0}]

    response = client.post("/lab/compare", json={"query": "double shot coffee", "k": 2})
    assert response.status_code == 200, response.text
    compared = response.json()
    # The browser gets kb_ann_compare's result as the contract declares it, no field renamed or dropped.
    assert AnnComparison.model_validate(compared).model_dump() == compared
    by_index = {answer["index"]: answer for answer in compared["answers"]}
    assert {"flat", "hnsw", "ivfpq", "ivfpq_rerank"} <= set(by_index)
    assert by_index["flat"]["hits"][0]["document_id"] == "espresso"
    assert by_index["flat"]["overlap_with_exact"] == 1.0
    assert by_index["flat"]["hits"][0]["cosine"] > 0 and by_index["hnsw"]["build_seconds"] > 0


def test_the_comparison_s_schema_is_the_mcp_contract_s_own(client_for: ClientFor) -> None:
    schema = client_for().get("/openapi.json").json()
    answered = schema["paths"]["/lab/compare"]["post"]["responses"]["200"]["content"]["application/json"]
    assert answered["schema"] == {"$ref": "#/components/schemas/AnnComparison"}
    assert not {"LabComparison", "LabAnswer", "LabHit"} & set(schema["components"]["schemas"])


def test_the_index_lab_says_why_when_there_are_no_results(client_for: Any, tmp_path: Path) -> None:
    overview = client_for(lab_results=tmp_path / "missing.json").get("/lab").json()
    assert overview["available"] is False and "sextant-lab bench" in overview["reason"]
    (tmp_path / "broken.json").write_text("{not json")
    broken = client_for(lab_results=tmp_path / "broken.json").get("/lab").json()
    assert broken["available"] is False and "cannot be read" in broken["reason"]


@pytest.mark.parametrize("body", [{"query": ""}, {"query": "espresso", "k": 0}, {"query": "espresso", "k": 21}])
def test_a_comparison_outside_its_bounds_is_refused(client_for: ClientFor, body: dict[str, Any]) -> None:
    assert client_for().post("/lab/compare", json=body).status_code == 422
