"""The results of the Index Lab's MCP tools, ``kb_ann_benchmark`` and ``kb_ann_compare``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AnnBenchmark(BaseModel):
    """One index built over the store's chunk vectors, measured against exact search on the same queries."""

    index: str
    params: dict[str, Any] = Field(description="The knobs it was built and searched with.")
    vectors: int = Field(description="Chunk vectors indexed.")
    dimension: int
    queries: int = Field(description="Chunk vectors used as queries (a seeded sample; each finds itself too).")
    k: int
    recall_at_k: float = Field(description="Share of the exact top k that the index returned, averaged.")
    build_seconds: float
    memory_bytes: int = Field(description="Bytes held by the index's arrays.")
    latency_ms_p50: float = Field(description="Median time of one query through the index.")
    latency_ms_p95: float
    exact_latency_ms_p50: float = Field(description="Median time of the same query by exact (flat) search.")
    speedup: float = Field(description="exact_latency_ms_p50 / latency_ms_p50: above 1 the index is faster.")


class AnnHit(BaseModel):
    rank: int
    chunk_id: str
    document_id: str
    cosine: float = Field(description="Exact cosine of query and chunk (whatever score the index ranked by).")


class AnnAnswer(BaseModel):
    """What one index returned for the query."""

    index: str
    hits: list[AnnHit]
    latency_ms: float = Field(description="Search time only (building is reported apart).")
    build_seconds: float = Field(description="Time to build this index over the store's vectors (0 for Chroma's).")
    overlap_with_exact: float = Field(description="Share of the exact top k this index also returned.")


class AnnComparison(BaseModel):
    """The same query through every index, side by side; exact (flat) is the reference."""

    query: str
    k: int
    vectors: int
    answers: list[AnnAnswer]
