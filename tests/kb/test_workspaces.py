"""Workspaces through the MCP server: each call's workspace comes from the host's ``_meta``, never from a tool
argument, and no workspace sees or removes another's documents."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sextant.contract.meta import WORKSPACE_META
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio

ALICE = "a" * 32
BOB = "b" * 32


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _in(workspace: str | None) -> dict[str, Any] | None:
    return {WORKSPACE_META: workspace} if workspace else None


async def _call(client: Client, tool: str, arguments: dict[str, Any], workspace: str | None) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments, meta=_in(workspace))
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _add(client: Client, workspace: str | None, doc_id: str, content: str) -> None:
    report = await _call(
        client, "kb_ingest", {"documents": [{"id": doc_id, "title": doc_id, "content": content}]}, workspace
    )
    assert report["results"][0]["status"] == "added"


async def _listed(client: Client, workspace: str | None) -> set[str]:
    return {d["id"] for d in (await _call(client, "kb_list", {}, workspace))["documents"]}


async def test_each_workspace_sees_only_its_own_documents(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await _add(client, ALICE, "espresso", "Descale the espresso machine every eight weeks with citric acid.")
        await _add(client, BOB, "bees", "In early spring the beekeeper checks that the queen is laying.")
        assert await _listed(client, ALICE) == {"espresso"}
        assert await _listed(client, BOB) == {"bees"}
        assert await _listed(client, None) == set()

        hits = (await _call(client, "kb_search", {"query": "descale espresso", "k": 5}, BOB))["hits"]
        assert all(h["document_id"] == "bees" for h in hits)
        with pytest.raises(MCPError, match="no document with id 'espresso'"):
            await client.read_resource("kb://documents/espresso", meta=_in(BOB), cache_mode="bypass")
        own = await client.read_resource("kb://documents/espresso", meta=_in(ALICE), cache_mode="bypass")
        assert "citric acid" in str(own)


async def test_dropping_a_workspace_removes_its_store_and_nothing_else(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await _add(client, None, "shared", "The default store keeps its documents.")
        await _add(client, ALICE, "espresso", "Descale the espresso machine every eight weeks.")
        await _add(client, BOB, "bees", "The beekeeper checks the queen in spring.")
        folder = kb.settings.store_dir() / "workspaces" / ALICE
        assert folder.is_dir()

        assert (await _call(client, "kb_drop_workspace", {}, ALICE)) == {"existed": True}
        assert not folder.exists()
        assert await _listed(client, ALICE) == set()  # a later call finds an empty workspace, not the old one
        assert await _listed(client, BOB) == {"bees"}
        assert await _listed(client, None) == {"shared"}

        refused = await client.call_tool("kb_drop_workspace", {})
        assert refused.is_error and "sextant-forget" in str(refused.content)


async def test_a_malformed_workspace_id_is_refused_not_followed(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        for bad in ("../../etc", "A" * 32, "abc"):
            result = await client.call_tool("kb_list", {}, meta={WORKSPACE_META: bad})
            assert result.is_error and "malformed workspace id" in str(result.content)
    assert not (kb.settings.store_dir() / "etc").exists()


async def test_no_tool_lets_the_caller_name_a_workspace(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert not any("workspace" in name for name in tool.input_schema.get("properties", {})), tool.name


async def test_descriptions_state_the_retention_when_workspaces_expire(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb, workspace_ttl_s=3600)) as client:
        tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
        instructions = client.instructions or ""
    for name in ("kb_search", "kb_list", "kb_ingest", "kb_upload"):
        assert "deleted 60 minutes after it was created" in tools[name], name
    assert "deleted 60 minutes" in instructions
    async with Client(create_server(kb)) as client:
        plain = {t.name: t.description or "" for t in (await client.list_tools()).tools}
    assert "Retention" not in plain["kb_search"]
