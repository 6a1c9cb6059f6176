"""The Index Lab's results as the real server emits them: every field arrives under the contract's name, and
each means what its description says."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from mcp import Client

from sextant.contract.ann import AnnBenchmark, AnnComparison
from sextant.contract.tools import KB_ANN_BENCHMARK, KB_ANN_COMPARE, KB_INGEST
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOPICS = [
    "A double espresso uses 18 grams of finely ground coffee.",
    "Descale the espresso machine every eight weeks with citric acid.",
    "In early spring the beekeeper checks that the queen is laying.",
    "A sourdough starter is fed with flour and water every twelve hours.",
    "The self-employed file their tax return by the end of January.",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(kb: KnowledgeBase) -> AsyncIterator[Client]:
    async with Client(create_server(kb)) as opened:
        documents = [{"id": f"d{i}", "title": f"D{i}", "content": text} for i, text in enumerate(TOPICS)]
        await opened.call_tool(KB_INGEST, {"documents": documents})
        yield opened


async def test_a_benchmark_arrives_whole_and_exact_search_is_its_own_perfect_recall(client: Client) -> None:
    result = await client.call_tool(KB_ANN_BENCHMARK, {"index": "flat", "k": 3, "queries": 5})
    assert not result.is_error, result.content
    benchmark = AnnBenchmark.model_validate(result.structured_content)
    assert benchmark.model_dump(mode="json") == result.structured_content
    assert (benchmark.index, benchmark.vectors, benchmark.queries, benchmark.k) == ("flat", 5, 5, 3)
    assert benchmark.recall_at_k == 1.0 and benchmark.dimension == 384
    assert benchmark.speedup == pytest.approx(benchmark.exact_latency_ms_p50 / benchmark.latency_ms_p50, rel=0.01)


async def test_a_comparison_arrives_whole_with_exact_search_as_the_reference(client: Client) -> None:
    result = await client.call_tool(KB_ANN_COMPARE, {"query": "how often to descale", "k": 2})
    assert not result.is_error, result.content
    comparison = AnnComparison.model_validate(result.structured_content)
    assert comparison.model_dump(mode="json") == result.structured_content
    assert (comparison.query, comparison.k, comparison.vectors) == ("how often to descale", 2, 5)
    answers = {answer.index: answer for answer in comparison.answers}
    exact = answers["flat"]
    assert exact.overlap_with_exact == 1.0 and [h.rank for h in exact.hits] == [1, 2]
    assert exact.hits[0].document_id == "d1"
    assert [h.cosine for h in exact.hits] == sorted((h.cosine for h in exact.hits), reverse=True)
    for answer in comparison.answers:
        found = {h.chunk_id for h in answer.hits} & {h.chunk_id for h in exact.hits}
        assert answer.overlap_with_exact == pytest.approx(len(found) / len(exact.hits)), answer.index
