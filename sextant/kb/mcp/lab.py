"""The Index Lab over MCP: an approximate index measured, or several compared on one query, over the knowledge
base's own vectors. Nothing here changes the store."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from sextant.contract.ann import AnnBenchmark, AnnComparison
from sextant.contract.tools import KB_ANN_BENCHMARK, KB_ANN_COMPARE
from sextant.kb.ann import Kind
from sextant.kb.ann import probe as ann_probe
from sextant.kb.mcp.context import READ_ONLY, Server, Tools, in_thread, kb_of


def register(server: Server, tools: Tools) -> None:
    """Add the Index Lab's tools to ``server``."""

    @tools.add(KB_ANN_BENCHMARK, "Benchmark an ANN index on the knowledge base", READ_ONLY)
    async def kb_ann_benchmark(
        ctx: Context,
        index: Annotated[Kind, Field(description="The index to build: flat (exact), hnsw, ivfpq or ivfpq_rerank.")],
        k: Annotated[int, Field(description="Neighbours per query for recall@k.", ge=1, le=100)] = 10,
        queries: Annotated[int, Field(description="Chunk vectors sampled as queries.", ge=1, le=2000)] = 100,
    ) -> AnnBenchmark:
        """Build one approximate-nearest-neighbour index over the knowledge base's chunk vectors and report its
        recall@k against exact search, build time, memory and per-query latency (with exact search's latency).

        For learning how the Index Lab's indexes trade accuracy for speed at this knowledge base's size;
        it changes nothing. The index is built with the SEXTANT_ANN_* knobs in force.
        """
        return await in_thread(ToolError, ann_probe.benchmark, kb_of(ctx), index, k=k, queries=queries)

    @tools.add(KB_ANN_COMPARE, "Compare ANN indexes on one query", READ_ONLY)
    async def kb_ann_compare(
        query: Annotated[str, Field(description="The question or keywords.", min_length=1, max_length=2000)],
        ctx: Context,
        k: Annotated[int, Field(description="Passages per index.", ge=1, le=20)] = 5,
    ) -> AnnComparison:
        """Run the same query through Chroma's index and each Index Lab index (flat, hnsw, ivfpq, ivfpq_rerank),
        side by side: the chunks each returns with their exact cosine, its latency, and its overlap with exact search.

        Dense retrieval only (no BM25, fusion or cap): this shows what the index changes, not a final answer.
        """
        return await in_thread(ToolError, ann_probe.compare, kb_of(ctx), query, k=k)
