"""The Index Lab through MCP: an index measured, indexes compared, the store unchanged."""

from __future__ import annotations

import pytest
from mcp import Client

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from tests.kb.mcp.server_client import BEES, ESPRESSO, ingest

pytestmark = pytest.mark.anyio


async def test_ann_tools_measure_and_compare_indexes_without_changing_anything(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("kb_ann_benchmark", "kb_ann_compare"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
        empty = await client.call_tool("kb_ann_benchmark", {"index": "hnsw"})
        assert empty.is_error and "ingest documents first" in empty.content[0].text  # type: ignore[union-attr]
        long_espresso = " ".join([ESPRESSO.split("\n")[1]] * 30)
        await ingest(
            client,
            {"id": "espresso", "title": "Espresso care", "content": long_espresso},
            {"id": "bees", "title": "Bees", "content": BEES},
        )
        generation = kb.store.generation
        bench = await client.call_tool("kb_ann_benchmark", {"index": "hnsw", "k": 3, "queries": 5})
        assert not bench.is_error and bench.structured_content is not None
        report = bench.structured_content
        assert report["index"] == "hnsw" and report["vectors"] == kb.store.chunk_count()
        # Repeated text makes near-identical chunks: ties, so recall is high but need not be 1.
        assert report["recall_at_k"] >= 0.5 and report["build_seconds"] > 0 and report["memory_bytes"] > 0
        bad = await client.call_tool("kb_ann_benchmark", {"index": "annoy"})
        assert bad.is_error

        compared = await client.call_tool("kb_ann_compare", {"query": "descale the espresso machine", "k": 2})
        assert not compared.is_error and compared.structured_content is not None
        answers = {a["index"]: a for a in compared.structured_content["answers"]}
        assert set(answers) == {"chroma", "flat", "hnsw", "ivfpq", "ivfpq_rerank"}
        assert answers["flat"]["overlap_with_exact"] == 1.0
        assert answers["flat"]["hits"][0]["document_id"] == "espresso"
        assert kb.store.generation == generation  # read-only
