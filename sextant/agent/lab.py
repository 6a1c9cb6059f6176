"""The Index Lab as the browser sees it: benchmark curves from ``sextant-lab bench``, and a live comparison's request.

The curves are read from the JSON the lab writes (``SEXTANT_LAB_RESULTS``). The comparison runs the
knowledge base's ``kb_ann_compare`` tool and answers with its result, ``sextant.contract.ann.AnnComparison``,
unchanged: the browser reads the MCP contract, not a copy of it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)


class LabPoint(BaseModel):
    param: float | int | str = Field(description="The knob's value (ef_search, nprobe), or '-' for exact search.")
    recall_at_10: float
    qps: float


class LabIndex(BaseModel):
    index: str = Field(description="The index, and for reference systems the library: 'hnsw', 'hnsw · hnswlib'.")
    system: str
    knob: str
    build_s: float
    memory_bytes: int
    points: list[LabPoint]


class LabDataset(BaseModel):
    name: str
    vectors: int
    dimension: int
    indexes: list[LabIndex]


class LabOverview(BaseModel):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    available: bool
    reason: str = Field(default="", description="Why not, when unavailable.")
    created: str | None = None
    datasets: list[LabDataset] = Field(default_factory=list)


class CompareRequest(BaseModel):
    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(default=5, ge=1, le=20)


def read_overview(path: Path) -> LabOverview:
    """The lab's benchmark file reshaped for the page, or why it cannot be shown."""
    if not path.is_file():
        return LabOverview(available=False, reason=f"no benchmark results at {path}: run `sextant-lab bench`")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        datasets = [_dataset(d) for d in raw["datasets"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("cannot read the Index Lab results %s: %s", path, exc)
        return LabOverview(available=False, reason=f"the benchmark results at {path} cannot be read: {exc}")
    return LabOverview(available=True, created=raw.get("created"), datasets=datasets)


def _dataset(raw: dict[str, Any]) -> LabDataset:
    indexes = [
        LabIndex(
            index=curve["index"] if curve["system"] == "sextant" else f"{curve['index']} · {curve['system']}",
            system=curve["system"],
            knob=curve["knob"],
            build_s=curve["build_s"],
            memory_bytes=curve["memory_bytes"],
            points=[LabPoint(param=p["knob"], recall_at_10=p["recall"], qps=p["qps"]) for p in curve["points"]],
        )
        for curve in raw["curves"]
    ]
    return LabDataset(name=raw["dataset"], vectors=raw["n"], dimension=raw["d"], indexes=indexes)
