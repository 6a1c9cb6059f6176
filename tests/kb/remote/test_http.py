"""The HTTP app's layers, in memory: tokens, scopes, Origin and Host checks, the resource metadata.

The MCP server here is a two-tool stand-in for Sextant's (one read-only tool, one writing tool), so these
run without the embedding model; test_http_process.py drives the real ``sextant-kb --http`` process.
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
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from sextant.kb.remote.access import http_principal, require_scope
from sextant.kb.remote.http import HttpOptions, build_app
from sextant.kb.remote.tokens import KB_READ, KB_WRITE, TokenStore
from sextant.settings import KbSettings

pytestmark = pytest.mark.anyio
BASE = "http://127.0.0.1:8765"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
JSON_RPC = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def store(tmp_path: Path) -> TokenStore:
    return TokenStore(tmp_path / "kb-tokens.json")


def two_tool_server() -> MCPServer[object]:
    server: MCPServer[object] = MCPServer("two-tools")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami() -> str:
        principal = http_principal()
        assert principal is not None
        return f"{principal.name} {' '.join(sorted(principal.scopes))}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False))
    def write() -> str:
        require_scope(KB_WRITE, "write")
        return "written"

    return server


@asynccontextmanager
async def serving(store: TokenStore, **options: Any) -> AsyncIterator[httpx2.AsyncClient]:
    """The app as if on loopback port 8765, its lifespan running, and an HTTP client talking to it."""
    app = build_app(two_tool_server(), HttpOptions(host="127.0.0.1", port=8765, tokens=store, **options))
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http,
    ):
        yield http


def mcp_client(http: httpx2.AsyncClient, token: str, mode: str = "auto") -> Client:
    http.headers["authorization"] = f"Bearer {token}"
    return Client(streamable_http_client(f"{BASE}/mcp", http_client=http), mode=mode)


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


async def test_no_token_or_a_wrong_one_gets_401_naming_the_metadata(store: TokenStore) -> None:
    store.mint("alice")
    async with serving(store) as http:
        for headers in ({}, {"authorization": "Bearer skb_not-a-token"}, {"authorization": "Basic YWxpY2U6eA=="}):
            response = await http.post("/mcp", json=INITIALIZE, headers=JSON_RPC | headers)
            assert response.status_code == 401
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
            assert f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_the_metadata_names_the_resource_scopes_and_header_tokens(store: TokenStore) -> None:
    async with serving(store) as http:
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            response = await http.get(path)  # public: a client reads it before it has a token
            assert response.status_code == 200
            assert response.json() == {
                "resource": f"{BASE}/mcp",
                "bearer_methods_supported": ["header"],
                "scopes_supported": [KB_READ, KB_WRITE],
                "resource_name": "Sextant knowledge base",
            }


async def test_a_configured_public_url_and_authorization_server_are_published(store: TokenStore) -> None:
    options = {"public_url": "https://kb.example/mcp", "authorization_servers": ("https://auth.example",)}
    async with serving(store, **options) as http:
        document = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert document["resource"] == "https://kb.example/mcp"
        assert document["authorization_servers"] == ["https://auth.example"]
        challenge = (await http.post("/mcp", json=INITIALIZE, headers=JSON_RPC)).headers["www-authenticate"]
        assert 'resource_metadata="https://kb.example/.well-known/oauth-protected-resource/mcp"' in challenge


async def test_a_foreign_origin_gets_403_even_with_a_valid_token(store: TokenStore) -> None:
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}"}
    async with serving(store) as http:
        refused = await http.post("/mcp", json=INITIALIZE, headers=headers | {"origin": "https://evil.example"})
        assert refused.status_code == 403 and refused.json()["error"] == "forbidden_origin"
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 200  # no Origin: a program


@pytest.mark.parametrize(
    "origin", ["http://localhost:8765", "http://127.0.0.1:6274", "http://[::1]:3000", "http://localhost"]
)
async def test_a_loopback_server_accepts_the_machine_s_own_pages(store: TokenStore, origin: str) -> None:
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}", "origin": origin}
    async with serving(store) as http:
        answered = await http.post("/mcp", json=INITIALIZE, headers=headers)
        assert answered.status_code == 200 and answered.headers["access-control-allow-origin"] == origin
        # A page that only looks local: a host name that starts like one, or a port that is not a number.
        for lookalike in ("http://localhost.evil.example", "http://localhost:80@evil.example"):
            refused = await http.post("/mcp", json=INITIALIZE, headers=headers | {"origin": lookalike})
            assert refused.status_code == 403, lookalike
        # The token still decides.
        anonymous = await http.post("/mcp", json=INITIALIZE, headers=JSON_RPC | {"origin": origin})
        assert anonymous.status_code == 401


async def test_a_server_beyond_loopback_accepts_only_the_origins_it_was_given(store: TokenStore) -> None:
    app = build_app(two_tool_server(), HttpOptions(host="0.0.0.0", port=8765, tokens=store))
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}", "origin": "http://localhost:8765"}
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=BASE) as http,
    ):
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 403


async def test_an_allowed_origin_passes_with_cors_headers(store: TokenStore) -> None:
    origin = "http://localhost:6274"
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}", "origin": origin}
    async with serving(store, allowed_origins=(origin,)) as http:
        preflight = await http.options(
            "/mcp",
            headers={
                "origin": origin,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin
        response = await http.post("/mcp", json=INITIALIZE, headers=headers)
        assert response.status_code == 200 and response.headers["access-control-allow-origin"] == origin
        assert "mcp-session-id" in response.headers["access-control-expose-headers"]


async def test_a_foreign_host_name_on_loopback_is_refused(store: TokenStore) -> None:
    """DNS rebinding: a page on evil.example, resolved to 127.0.0.1, sends Host: evil.example."""
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}", "host": "evil.example:8765"}
    async with serving(store) as http:
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 421


async def test_a_revoked_token_is_refused_at_its_next_request(store: TokenStore) -> None:
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}"}
    async with serving(store) as http:
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 200
        store.revoke("alice")
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 401


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_read_only_token_neither_sees_nor_calls_writing_tools(store: TokenStore, mode: str) -> None:
    token = store.mint("reader", read_only=True)
    async with serving(store) as http, mcp_client(http, token, mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["whoami"]
        assert text(await client.call_tool("whoami", {})) == f"reader {KB_READ}"
        refused = await client.call_tool("write", {})
        assert refused.is_error and "'reader' is read-only" in text(refused) and KB_WRITE in text(refused)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_full_token_sees_and_calls_every_tool(store: TokenStore, mode: str) -> None:
    token = store.mint("writer")
    async with serving(store) as http, mcp_client(http, token, mode) as client:
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["whoami", "write"]
        assert text(await client.call_tool("whoami", {})) == f"writer {KB_READ} {KB_WRITE}"
        written = await client.call_tool("write", {})
        assert not written.is_error and text(written) == "written"


async def test_without_a_token_the_caller_is_the_trusted_local_process() -> None:
    """stdio and the in-memory client: no principal, every scope, nothing refused."""
    async with Client(two_tool_server()) as client:
        assert http_principal() is None
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["whoami", "write"]
        assert text(await client.call_tool("write", {})) == "written"


def test_http_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    settings = KbSettings(chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(SystemExit, match="sextant-kb-token mint NAME"):
        HttpOptions.from_settings(settings)
    TokenStore(tmp_path / "store" / "kb-tokens.json").mint("alice")
    options = HttpOptions.from_settings(settings, port=0)
    assert (options.host, options.port, options.allowed_origins) == ("127.0.0.1", 0, ())
    # A kb_upload of the largest file parsed (SEXTANT_MAX_FILE_BYTES, base64-encoded) fits in one request.
    assert options.max_body_bytes > settings.max_file_bytes * 4 // 3


async def test_a_body_over_the_limit_gets_413_before_it_is_read_as_json_rpc(store: TokenStore) -> None:
    headers = JSON_RPC | {"authorization": f"Bearer {store.mint('alice')}"}
    async with serving(store, max_body_bytes=1024) as http:
        padded = INITIALIZE | {"padding": "x" * 2048}
        assert (await http.post("/mcp", json=padded, headers=headers)).status_code == 413
        assert (await http.post("/mcp", json=INITIALIZE, headers=headers)).status_code == 200


def test_origins_and_authorization_servers_are_comma_separated(tmp_path: Path) -> None:
    TokenStore(tmp_path / "t.json").mint("alice")
    settings = KbSettings(
        kb_tokens_file=tmp_path / "t.json",
        kb_http_origins="http://localhost:6274, https://app.example/",
        kb_authorization_servers="https://auth.example",
        _env_file=None,  # type: ignore[call-arg]
    )
    options = HttpOptions.from_settings(settings, host="::1")
    assert options.allowed_origins == ("http://localhost:6274", "https://app.example/")
    assert (options.host, options.port, options.authorization_servers) == ("::1", 8765, ("https://auth.example",))


def test_a_public_url_needs_a_scheme() -> None:
    with pytest.raises(ValidationError, match="SEXTANT_KB_PUBLIC_URL"):
        KbSettings(kb_public_url="kb.example/mcp", _env_file=None)  # type: ignore[call-arg]
