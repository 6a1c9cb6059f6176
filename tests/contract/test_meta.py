"""The ``_meta`` keys the host sets and the page-image prefix, as the real server honours them."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from sextant.contract.meta import NO_PAGE_IMAGE, WORKSPACE_META
from sextant.contract.tools import KB_INGEST, KB_LIST, KB_PAGE_IMAGE
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
NOTE = {"documents": [{"id": "note", "title": "Note", "content": "Grind finer when the shot runs fast."}]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def naming(workspace: object) -> Any:
    """A request's ``_meta`` naming ``workspace`` (typed as the SDK's meta mapping accepts it)."""
    return {WORKSPACE_META: workspace}


def listed(result: CallToolResult) -> list[str]:
    assert result.structured_content is not None
    return [d["id"] for d in result.structured_content["documents"]]


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def test_the_workspace_key_picks_the_store_each_call_reaches(kb: KnowledgeBase) -> None:
    mine = naming("c3" * 8)
    async with Client(create_server(kb)) as client:
        await client.call_tool(KB_INGEST, NOTE, meta=mine)
        assert listed(await client.call_tool(KB_LIST, {}, meta=mine)) == ["note"]
        assert listed(await client.call_tool(KB_LIST, {})) == []
        # An empty or non-string value names no workspace: the default store.
        for value in ("", 7):
            assert listed(await client.call_tool(KB_LIST, {}, meta=naming(value))) == []


async def test_a_workspace_name_the_server_cannot_use_is_refused_not_treated_as_the_default(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        refused = await client.call_tool(KB_LIST, {}, meta=naming("../escape"))
    assert refused.is_error and "workspace" in text(refused)


async def test_nothing_to_show_on_a_page_is_an_error_carrying_the_prefix_the_agent_looks_for(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await client.call_tool(KB_INGEST, NOTE)
        for document_id in ("note", "missing"):
            result = await client.call_tool(KB_PAGE_IMAGE, {"document_id": document_id, "page": 1})
            assert result.is_error and f"{NO_PAGE_IMAGE}: " in text(result), text(result)  # after the SDK's own words
