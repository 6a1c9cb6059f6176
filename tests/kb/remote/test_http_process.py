"""The real ``sextant-kb --http`` process, driven by the SDK's Streamable HTTP client: the boundary itself.

Two processes on one Chroma server serve any request interchangeably (``RoundRobin``), in both protocol eras.
Not two on one folder: Chroma's embedded vector index belongs to the process that writes it, so the other's
dense search fails ("Error creating hnsw segment reader") until it reopens the store.
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    INVALID_PARAMS,
    PROTOCOL_VERSION_META_KEY,
    CallToolResult,
    ResourceTemplateReference,
    TextContent,
)

from sextant.contract.tasks import IngestProgress
from sextant.kb.remote.tokens import KB_READ, KB_WRITE, TokenStore
from sextant.kb.server import DOCUMENT_URI
from tests.kb import task_client
from tests.kb.kb_process import server_command, server_environment
from tests.kb.remote.listening import listening
from tests.kb.task_client import Tasks
from tests.kb.test_chroma_server import chroma_url  # noqa: F401  (the fixture: a real `chroma run` process)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
READY = "sextant-kb: MCP over HTTP at "
MODERN = "2026-07-28"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Served:
    url: str
    writer: str
    reader: str
    stderr: list[str]
    home: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module (it loads the embedding model), on a port the OS picks, always stopped."""
    home = tmp_path_factory.mktemp("kb-http")
    store = TokenStore(home / "store" / "kb-tokens.json")
    writer, reader = store.mint("writer"), store.mint("reader", read_only=True)
    with _serving(home) as (url, lines):
        yield Served(url=url, writer=writer, reader=reader, stderr=lines, home=home)


@pytest.fixture(scope="module", params=["one folder", "a chroma server"])
def replicas(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, str]]:
    """Two servers sharing one tokens file, on one store folder (one machine), or on one Chroma server each with
    its own folder (BM25 cache) as on two machines: their URLs and a write token."""
    tokens = tmp_path_factory.mktemp("kb-tokens") / "kb-tokens.json"
    writer = TokenStore(tokens).mint("writer")
    shared = {"SEXTANT_KB_TOKENS_FILE": str(tokens)}
    if request.param == "one folder":  # each sees the other's writes at its next search (the store's lock)
        shared["SEXTANT_CHROMA_DIR"] = str(tmp_path_factory.mktemp("kb-one-store") / "store")
    else:
        shared["SEXTANT_CHROMA_URL"] = request.getfixturevalue("chroma_url")
        # Each search checks the store for the other's writes (by default at most every 2 s).
        shared["SEXTANT_LEXICAL_REFRESH_S"] = "0"
    with (
        _serving(tmp_path_factory.mktemp("kb-a"), shared) as (a, _),
        _serving(tmp_path_factory.mktemp("kb-b"), shared) as (b, _),
    ):
        yield a, b, writer


@contextmanager
def _serving(home: Path, env: dict[str, str] | None = None) -> Iterator[tuple[str, list[str]]]:
    """``sextant-kb --http`` on ``home``'s store: its URL once it listens, and its stderr lines so far."""
    argv = [server_command(), "--http", "--port", "0"]
    with listening(argv, READY, env=server_environment(home) | (env or {}), cwd=home) as started:
        yield started


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer's stand-in at the network boundary: each request goes to the next server in turn."""

    def __init__(self, *urls: str) -> None:
        self.servers = [httpx2.URL(url) for url in urls]
        self.sent_to: list[int] = []
        self.network = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        server = self.servers[len(self.sent_to) % len(self.servers)]
        self.sent_to.append(server.port or 80)
        request.url = request.url.copy_with(host=server.host, port=server.port)
        request.headers["host"] = f"{server.host}:{server.port}"
        return await self.network.handle_async_request(request)

    async def aclose(self) -> None:
        await self.network.aclose()


def _http(token: str | None = None, transport: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncClient:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0), transport=transport)


def _client(http: httpx2.AsyncClient, url: str, mode: str = "auto") -> Client:
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def _text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def test_no_token_or_a_wrong_one_gets_401_pointing_at_the_metadata(served: Served) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    base = served.url.removesuffix("/mcp")
    for token in (None, "skb_wrong"):
        async with _http(token) as http:
            response = await http.post(served.url, json=initialize, headers=headers)
        assert response.status_code == 401
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_the_protected_resource_metadata_is_public(served: Served) -> None:
    base = served.url.removesuffix("/mcp")
    async with _http() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            document = (await http.get(base + path)).json()
            assert document["resource"] == served.url
            assert document["bearer_methods_supported"] == ["header"]
            assert document["scopes_supported"] == [KB_READ, KB_WRITE]
            assert "authorization_servers" not in document  # none configured: Sextant mints its own tokens


async def test_a_foreign_origin_gets_403(served: Served) -> None:
    async with _http(served.writer) as http:
        response = await http.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"content-type": "application/json", "origin": "https://evil.example"},
        )
    assert response.status_code == 403


async def test_a_write_token_ingests_and_finds_what_it_added(served: Served) -> None:
    async with _http(served.writer) as http, _client(http, served.url) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"kb_search", "kb_list", "kb_ingest", "kb_upload", "kb_set_overview"} <= tools
        document = {"id": "tea", "title": "Tea", "content": "Oolong is partially oxidised, 8 to 85 percent."}
        ingest = await client.call_tool("kb_ingest", {"documents": [document]})
        assert not ingest.is_error, _text(ingest)
        found = await client.call_tool("kb_search", {"query": "how oxidised is oolong tea", "k": 1})
        assert not found.is_error and found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "tea"
        offered = await client.complete(ResourceTemplateReference(uri=DOCUMENT_URI), {"name": "doc_id", "value": "te"})
        assert offered.completion.values == ["tea"]


async def test_a_read_token_searches_and_lists_but_every_writing_tool_is_refused(served: Served) -> None:
    async with _http(served.writer) as http, _client(http, served.url) as client:
        every = (await client.list_tools()).tools
    writing = {t.name for t in every if not (t.annotations and t.annotations.read_only_hint)}
    assert {"kb_ingest", "kb_upload", "kb_set_overview"} <= writing
    async with _http(served.reader) as http, _client(http, served.url) as client:
        visible = {t.name for t in (await client.list_tools()).tools}
        assert visible == {t.name for t in every} - writing
        assert not (await client.call_tool("kb_list", {})).is_error
        searched = await client.call_tool("kb_search", {"query": "oolong", "k": 1})
        assert not searched.is_error and searched.structured_content is not None
        for name in sorted(writing):
            refused = await client.call_tool(name, {})
            assert refused.is_error and "'reader' is read-only" in _text(refused), name


def test_http_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    command, args = server_command(), list[str]()
    done = subprocess.run(
        [command, *args, "--http", "--port", "0"],
        capture_output=True,
        text=True,
        env=server_environment(tmp_path),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != 0
    assert "holds no token" in done.stderr and "sextant-kb-token mint NAME" in done.stderr


async def test_an_http_client_cannot_pick_a_workspace_through_meta(served: Served) -> None:
    # Only the trusted stdio host names workspaces; over HTTP the key is ignored and the call uses the token's store.
    workspace = {"sextant/workspace": "c" * 32}
    document = {"id": "coffee", "title": "Coffee", "content": "Arabica grows best at high altitude."}
    async with _http(served.writer) as http, _client(http, served.url) as client:
        ingest = await client.call_tool("kb_ingest", {"documents": [document]}, meta=workspace)
        assert not ingest.is_error, _text(ingest)
        listed = await client.call_tool("kb_list", {})
        assert listed.structured_content is not None
        assert "coffee" in {d["id"] for d in listed.structured_content["documents"]}
        dropped = await client.call_tool("kb_drop_workspace", {}, meta=workspace)
        assert dropped.is_error and "names no workspace" in _text(dropped)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_two_processes_on_one_store_answer_any_request_of_either_era(
    replicas: tuple[str, str, str], mode: str
) -> None:
    a, b, writer = replicas
    balancer = RoundRobin(a, b)
    doc_id = f"kettle-{mode}"
    document = {"id": doc_id, "title": "Kettle", "content": f"The {mode} kettle is descaled with vinegar monthly."}
    async with _http(writer, balancer) as http, _client(http, a, mode) as client:
        ingest = await client.call_tool("kb_ingest", {"documents": [document]})
        assert not ingest.is_error, _text(ingest)
        for _ in range(2):  # one search on each process, whichever stored the document
            found = await client.call_tool("kb_search", {"query": "how is the kettle descaled", "k": 5})
            assert not found.is_error and found.structured_content is not None
            assert doc_id in {h["document_id"] for h in found.structured_content["hits"]}
        listed = await client.call_tool("kb_list", {})
        assert listed.structured_content is not None
        assert doc_id in {d["id"] for d in listed.structured_content["documents"]}
    assert set(balancer.sent_to) == {httpx2.URL(a).port, httpx2.URL(b).port}


async def test_a_modern_request_with_its_version_only_in_meta_gets_json(served: Served) -> None:
    envelope = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    call = {"name": "kb_stats", "arguments": {}, "_meta": envelope}
    async with _http(served.reader) as http:
        discovered = await http.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}},
            headers=headers,
        )
        stats = await http.post(
            served.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, headers=headers
        )
    assert discovered.status_code == 200 and MODERN in discovered.json()["result"]["supportedVersions"]
    assert stats.status_code == 200 and stats.headers["content-type"] == "application/json"
    assert stats.json()["result"]["structuredContent"]["store"] == str(served.home / "store")


async def test_a_2026_client_listening_over_http_hears_an_ingest(served: Served) -> None:
    document = {"id": "cocoa", "title": "Cocoa", "content": "Cocoa beans ferment for five to seven days."}
    async with (
        _http(served.writer) as http,
        _client(http, served.url, MODERN) as client,
        client.listen(resources_list_changed=True) as changes,
    ):
        ingest = await client.call_tool("kb_ingest", {"documents": [document]})
        assert not ingest.is_error, _text(ingest)
        assert isinstance(await anext(changes), ResourcesListChanged)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_over_http_an_ingest_runs_as_a_task_that_only_its_token_sees(served: Served, mode: str) -> None:
    era = "modern" if mode == MODERN else "legacy"
    small, bulk = task_client.documents(3, f"small-{era}"), task_client.documents(100, f"bulk-{era}")
    async with _http(served.writer) as http, _task_client(http, served.url, mode) as client:
        if mode == MODERN:
            # The work runs after the answer, still as this token: it cannot pick a workspace through _meta either.
            created = await task_client.create(
                client, "kb_ingest", {"documents": small}, {"sextant/workspace": "c" * 32}
            )
            seen: list[IngestProgress] = []
            ended = await task_client.poll(partial(task_client.get, client.session, created.task_id), seen=seen)
            assert ended.status == "completed" and ended.result is not None
            report = task_client.report_of(ended.result)
            assert seen[-1] == IngestProgress(documents_done=3, documents_total=3, chunks_done=3)
            task_id = created.task_id
            big_id = (await task_client.create(client, "kb_ingest", {"documents": bulk})).task_id
            fetch: Callable[[], Awaitable[Any]] = partial(task_client.get, client.session, big_id)
            await task_client.poll(fetch, documents_done=1)
            await task_client.cancel(client, big_id)
        else:
            task_id = (await task_client.create_legacy(client, "kb_ingest", {"documents": small})).task_id
            report = task_client.report_of(await task_client.result_legacy(client, task_id))
            big_id = (await task_client.create_legacy(client, "kb_ingest", {"documents": bulk})).task_id
            fetch = partial(task_client.get_legacy, client, big_id)
            await task_client.poll(fetch, documents_done=1)
            assert (await task_client.cancel_legacy(client, big_id)).status == "cancelled"
        assert [r.status for r in report.results] == ["added"] * 3
        await task_client.assert_whole(client, 3, f"small-{era}")  # in the token's store
        cancelled = await fetch()
        assert cancelled.status == "cancelled"
        await task_client.assert_whole(client, task_client.progress_of(cancelled).documents_done, f"bulk-{era}")
    async with _http(served.reader) as http, _task_client(http, served.url, mode) as client:
        for other in (task_id, big_id):
            with pytest.raises(MCPError) as hidden:
                await (
                    task_client.get(client.session, other) if mode == MODERN else task_client.get_legacy(client, other)
                )
            assert hidden.value.error.code == INVALID_PARAMS  # as if it had never been issued
        if mode == MODERN:  # a token that may not write gets the plain refusal, never a task
            refused = await client.session.call_tool("kb_ingest", {"documents": small}, allow_claimed=True)
            assert isinstance(refused, CallToolResult) and refused.is_error
        else:
            assert await task_client.list_legacy(client) == []


def _task_client(http: httpx2.AsyncClient, url: str, mode: str) -> Client:
    return Client(streamable_http_client(url, http_client=http), mode=mode, extensions=[Tasks()])
