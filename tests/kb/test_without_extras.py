"""``sextant-kb`` as a plain install has it, over stdio: no torch, sentence-transformers, numba or lab references.

The dependency lists themselves are proven by installing the wheel in a clean environment
(``tests/test_wheel.py``); this runs on every test run, in this environment, with those packages made unimportable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.kb.kb_process import server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LAUNCHER = Path(__file__).with_name("without_extras.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_plain_install_embeds_in_int8_searches_by_meaning_and_names_the_extras_it_lacks(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(LAUNCHER)], env=server_environment(tmp_path), cwd=str(tmp_path)
    )
    async with Client(params, read_timeout_seconds=120) as client:
        cat = "Our tabby cat sleeps on the warm windowsill every afternoon."
        tax = "File the quarterly VAT return before the end of the month."
        documents = [{"id": "cat", "title": "Cat", "content": cat}, {"id": "tax", "title": "Tax", "content": tax}]
        assert not (await client.call_tool("kb_ingest", {"documents": documents})).is_error
        # No word in common with the cat's passage: only the int8 embedder can rank it first.
        found = await client.call_tool("kb_search", {"query": "where does the kitty nap?", "k": 2})
        assert not found.is_error and found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "cat"
        stats = await client.call_tool("kb_stats", {})
        assert stats.structured_content is not None
        assert stats.structured_content["embedder_runtime"] == "onnxruntime int8"
        # The Index Lab's compiled indexes are the lab extra's: a tool error that says so, not a crash.
        lab = await client.call_tool("kb_ann_benchmark", {"index": "hnsw", "queries": 1})
        assert lab.is_error and "pip install 'sextant-kb[lab]'" in lab.content[0].text  # type: ignore[union-attr]
