"""``/mcp`` without sessions, in memory: both protocol eras, JSON unless a stream is asked for, the same checks.

The MCP server is a stand-in with one tool that reports progress, so these run without the embedding model;
test_http_process.py drives two real ``sextant-kb --http`` processes on one store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, TextContent, ToolAnnotations

from sextant.kb.remote.http import HttpOptions, build_app
from sextant.kb.remote.tokens import TokenStore

pytestmark = pytest.mark.anyio
BASE = "http://127.0.0.1:8765"
MODERN = "2026-07-28"
ENVELOPE = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}
ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ERAS = ["legacy", MODERN]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def counting_server() -> MCPServer[object]:
    server: MCPServer[object] = MCPServer("counting")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def count(n: int, ctx: Context) -> str:
        for done in range(1, n + 1):
            await ctx.report_progress(done, n, f"{done} of {n}")
        return f"counted {n}"

    return server


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[tuple[httpx2.AsyncClient, list[httpx2.Response]]]:
    """The app as if on loopback port 8765 with one token, and an HTTP client that keeps every response."""
    store = TokenStore(tmp_path / "kb-tokens.json")
    token = store.mint("alice")
    app = build_app(counting_server(), HttpOptions(host="127.0.0.1", port=8765, tokens=store))
    responses: list[httpx2.Response] = []

    async def keep(response: httpx2.Response) -> None:
        responses.append(response)

    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app),
            base_url=BASE,
            headers={"authorization": f"Bearer {token}"},
            event_hooks={"response": [keep]},
        ) as http,
    ):
        yield http, responses


def request(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": ENVELOPE}}


def text(content: list[Any]) -> str:
    return " ".join(c.text for c in content if isinstance(c, TextContent))


async def test_a_modern_request_with_its_version_only_in_meta_is_served_without_a_session(tmp_path: Path) -> None:
    async with serving(tmp_path) as (http, _):
        discovered = await http.post("/mcp", json=request("server/discover"), headers=ACCEPT_BOTH)
        assert discovered.status_code == 200 and discovered.headers["content-type"] == "application/json"
        assert MODERN in discovered.json()["result"]["supportedVersions"]
        called = await http.post(
            "/mcp", json=request("tools/call", {"name": "count", "arguments": {"n": 2}}), headers=ACCEPT_BOTH
        )
        assert called.status_code == 200 and called.json()["result"]["content"][0]["text"] == "counted 2"
        assert "mcp-session-id" not in discovered.headers and "mcp-session-id" not in called.headers


async def test_a_routing_header_that_contradicts_the_body_is_still_refused(tmp_path: Path) -> None:
    async with serving(tmp_path) as (http, _):
        body = request("tools/call", {"name": "count", "arguments": {"n": 1}})
        headers = ACCEPT_BOTH | {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
        refused = await http.post("/mcp", json=body, headers=headers)
        assert refused.status_code == 400 and "mcp-method header does not match" in refused.json()["error"]["message"]


async def test_a_handshake_client_gets_no_session_and_any_later_request_stands_alone(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    async with serving(tmp_path) as (http, _):
        opened = await http.post("/mcp", json=initialize, headers=ACCEPT_BOTH)
        assert opened.status_code == 200 and opened.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in opened.headers
        # As if sent to another process: nothing of the handshake is needed to answer it.
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"n": 1}}}
        called = await http.post("/mcp", json=call, headers=ACCEPT_BOTH | {"mcp-protocol-version": "2025-11-25"})
        assert called.status_code == 200 and called.json()["result"]["content"][0]["text"] == "counted 1"


async def test_a_body_that_is_not_json_rpc_gets_the_sdks_json_error(tmp_path: Path) -> None:
    async with serving(tmp_path) as (http, _):
        for era in ({}, {"mcp-protocol-version": MODERN}):
            refused = await http.post("/mcp", content=b"{not json", headers=ACCEPT_BOTH | era)
            assert refused.status_code == 400 and refused.headers["content-type"] == "application/json"
            assert refused.json()["error"]["code"] == -32700  # parse error


async def test_there_is_no_standing_stream_to_open_or_session_to_end(tmp_path: Path) -> None:
    async with serving(tmp_path) as (http, _):
        for version in ("2025-11-25", MODERN):
            headers = {"accept": "text/event-stream", "mcp-protocol-version": version}
            opened = await http.get("/mcp", headers=headers)
            assert opened.status_code == 405 and opened.headers["allow"] == "POST"
            assert (await http.delete("/mcp", headers=headers)).status_code == 405


@pytest.mark.parametrize("mode", ERAS)
async def test_responses_are_json_unless_the_call_asks_for_progress(tmp_path: Path, mode: str) -> None:
    async with (
        serving(tmp_path) as (http, responses),
        Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode=mode) as client,
    ):
        plain = await client.call_tool("count", {"n": 3})
        assert text(plain.content) == "counted 3"
        assert responses[-1].headers["content-type"] == "application/json"

        heard: list[tuple[float, float | None, str | None]] = []

        async def heard_progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append((progress, total, message))

        streamed = await client.call_tool("count", {"n": 3}, progress_callback=heard_progress)
        assert text(streamed.content) == "counted 3"
        assert responses[-1].headers["content-type"].startswith("text/event-stream")
        assert heard == [(1, 3, "1 of 3"), (2, 3, "2 of 3"), (3, 3, "3 of 3")]
        assert not any("mcp-session-id" in r.headers for r in responses)


async def test_a_modern_request_meets_the_same_token_origin_and_host_checks(tmp_path: Path) -> None:
    body = request("server/discover")
    headers = ACCEPT_BOTH | {"mcp-protocol-version": MODERN, "mcp-method": "server/discover"}
    async with serving(tmp_path) as (http, _):
        for bare in (headers, {k: v for k, v in headers.items() if not k.startswith("mcp-")}):
            unauthenticated = await http.post("/mcp", json=body, headers=bare | {"authorization": "Bearer skb_wrong"})
            assert (
                unauthenticated.status_code == 401
                and "resource_metadata=" in unauthenticated.headers["www-authenticate"]
            )
            foreign = await http.post("/mcp", json=body, headers=bare | {"origin": "https://evil.example"})
            assert foreign.status_code == 403
            rebound = await http.post("/mcp", json=body, headers=bare | {"host": "evil.example:8765"})
            assert rebound.status_code == 421
