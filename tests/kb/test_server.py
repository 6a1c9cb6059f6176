"""The MCP server put together: the tools of every concern, typed, annotated and described, as the SDK's in-memory
client sees them."""

from __future__ import annotations

import pytest
from mcp import Client

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio


async def test_tools_are_typed_annotated_and_described(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"kb_search", "kb_list", "kb_ingest", "kb_upload", "kb_stats"} <= set(tools)
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.annotations
        assert tool.annotations.open_world_hint is False
        assert not any(line.startswith(" ") for line in tool.description.splitlines())  # dedented for the model
    assert tools["kb_search"].annotations.read_only_hint is True
    assert tools["kb_ingest"].annotations.read_only_hint is False
    k = tools["kb_search"].input_schema["properties"]["k"]
    assert (k["minimum"], k["maximum"]) == (1, 20)
    assert "hits" in tools["kb_search"].output_schema["properties"]
