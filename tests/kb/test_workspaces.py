"""Workspaces through the MCP server: each call's workspace comes from the host's ``_meta``, never from a tool
argument, and no workspace sees or removes another's documents; on the embedded store and on a real Chroma
server, where each workspace is a database of its own."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from sextant.contract.meta import WORKSPACE_META
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.kb.store import ChunkStore
from sextant.kb.workspaces import Workspaces, database_of
from sextant.settings import KbSettings
from tests.chroma_process import running_chroma

pytestmark = pytest.mark.anyio

ALICE = "a" * 32
BOB = "b" * 32


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.slow)])
def either_kb(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[KnowledgeBase]:
    """The default knowledge base on the embedded store, or on a real ``chroma run`` server."""
    url = request.getfixturevalue("chroma_url") if request.param == "server" else None
    settings = KbSettings(chroma_url=url, chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        yield kb
        # The module's server is shared by the tests that follow.
        for doc in kb.documents():
            kb.forget(doc.id)
        for workspace in (ALICE, BOB):
            Workspaces(kb).drop(workspace)


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


async def test_each_workspace_sees_only_its_own_documents(either_kb: KnowledgeBase) -> None:
    async with Client(create_server(either_kb)) as client:
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


async def test_dropping_a_workspace_removes_its_store_and_nothing_else(either_kb: KnowledgeBase) -> None:
    kb = either_kb
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


def _server_stores(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each database on the knowledge base's server, by name, with the document ids of its chunks."""
    url = kb.settings.chroma_url
    assert url is not None
    with urllib.request.urlopen(f"{url}/api/v2/tenants/default_tenant/databases", timeout=10) as response:
        names = [d["name"] for d in json.load(response)]
    found: dict[str, set[str]] = {}
    for name in names:
        store = ChunkStore.open(path=None, url=url, embedder=kb.embedder.name, dim=kb.embedder.dim, database=name)
        try:
            found[name] = {c.doc_id for batch in store.iter_chunks() for c in batch}
        finally:
            store.close()
    return found


@pytest.mark.slow
async def test_on_a_server_each_workspace_is_its_own_database_and_the_drop_deletes_it(
    chroma_url: str, tmp_path: Path, embedder: Embedder
) -> None:
    settings = KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        async with Client(create_server(kb)) as client:
            await _add(client, None, "shared", "The default store keeps its documents.")
            await _add(client, ALICE, "espresso", "Descale the espresso machine every eight weeks.")
            await _add(client, BOB, "bees", "The beekeeper checks the queen in spring.")
            stores = _server_stores(kb)
            assert stores[database_of(ALICE)] == {"espresso"}
            assert stores[database_of(BOB)] == {"bees"}
            assert stores["default_database"] == {"shared"}
            # What this machine derives from a workspace's database stays in its own folder.
            assert {p.name.split("-")[0] for p in (tmp_path / "store" / "workspaces" / ALICE).iterdir()} == {"bm25"}

            assert (await _call(client, "kb_drop_workspace", {}, ALICE)) == {"existed": True}
            stores = _server_stores(kb)
            assert database_of(ALICE) not in stores
            assert stores[database_of(BOB)] == {"bees"} and stores["default_database"] == {"shared"}

        # A fresh server process (a restart, or another replica) drops a workspace it never opened.
        fresh = Workspaces(kb)
        assert fresh.drop(BOB) is True
        assert fresh.drop(BOB) is False
        assert set(_server_stores(kb)) == {"default_database"}
        kb.forget("shared")


@pytest.mark.slow
def test_two_replicas_serve_one_workspace_from_the_server(chroma_url: str, tmp_path: Path, embedder: Embedder) -> None:
    """Each replica keeps its own BM25 cache of the workspace, and follows the other's writes to it."""
    replicas = [
        KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path / name, lexical_refresh_s=0, _env_file=None)  # type: ignore[call-arg]
        for name in ("a", "b")
    ]
    with (
        KnowledgeBase.open(replicas[0], embedder=embedder) as kb_a,
        KnowledgeBase.open(replicas[1], embedder=embedder) as kb_b,
    ):
        a, b = Workspaces(kb_a), Workspaces(kb_b)
        try:
            a.get(ALICE).ingest(
                "espresso", LoadedDocument(text="Descale the espresso machine every eight weeks.", title="E")
            )
            hits = b.get(ALICE).search("descale espresso", mode="lexical", abstain=False).hits
            assert [h.document_id for h in hits] == ["espresso"]
            assert b.get(BOB).documents() == []
            a.get(ALICE).forget("espresso")
            assert b.get(ALICE).search("descale espresso", mode="lexical", abstain=False).hits == []
        finally:
            a.close()
            assert b.drop(ALICE) is True and b.drop(BOB) is True


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
