"""The Index Lab as the browser sees it: benchmark curves from ``sextant-lab bench`` and a live comparison.

The curves are read from the JSON the lab writes (``SEXTANT_LAB_RESULTS``); the comparison runs the
knowledge base's ``kb_ann_compare`` tool, so the agent still never imports the knowledge base.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sextant.contract.ann import AnnComparison

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


class LabHit(BaseModel):
    rank: int
    chunk_id: str
    document_id: str
    score: float = Field(description="Exact cosine of query and chunk.")


class LabAnswer(BaseModel):
    index: str
    hits: list[LabHit]
    latency_ms: float = Field(description="Search time only (building is reported apart).")
    build_s: float = Field(description="Time to build this index over the store's vectors (0 for Chroma's).")
    overlap_with_exact: float = Field(description="Share of exact search's top k this index also returned.")


class LabComparison(BaseModel):
    query: str
    k: int
    vectors: int
    indexes: list[LabAnswer]


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


def comparison(result: AnnComparison) -> LabComparison:
    """``kb_ann_compare``'s result in the page's shape."""
    return LabComparison(
        query=result.query,
        k=result.k,
        vectors=result.vectors,
        indexes=[
            LabAnswer(
                index=answer.index,
                hits=[
                    LabHit(rank=h.rank, chunk_id=h.chunk_id, document_id=h.document_id, score=h.cosine)
                    for h in answer.hits
                ],
                latency_ms=answer.latency_ms,
                build_s=answer.build_seconds,
                overlap_with_exact=answer.overlap_with_exact,
            )
            for answer in result.answers
        ],
    )
