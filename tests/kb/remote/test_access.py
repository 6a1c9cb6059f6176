"""Who is calling and what their token allows: the principal of an HTTP request, the scope checks, and the
middleware that hides and refuses the writing tools to a read-only token.

The SDK's ``AuthContextMiddleware`` sets the verified token in a context variable for each HTTP request;
here the variable is set as that middleware sets it, and the server is reached through the SDK's in-memory
client (whose server tasks inherit it). ``test_http.py`` drives the same checks through the HTTP app.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import pytest
from mcp import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from sextant.kb.remote.access import Principal, http_principal, require_scope, require_write, scope_middleware
from sextant.kb.remote.tokens import KB_READ, KB_WRITE


@contextmanager
def verified(name: str, *scopes: str) -> Iterator[None]:
    """The request carries a verified token ``name`` with ``scopes``, as the SDK's HTTP middleware records it."""
    user = AuthenticatedUser(AccessToken(token="skb_test", client_id=name, scopes=list(scopes)))
    reset = auth_context_var.set(user)
    try:
        yield
    finally:
        auth_context_var.reset(reset)


def guarded_server() -> MCPServer[object]:
    """A read-only tool, a writing tool with no check of its own, and a tool that declares nothing."""
    server: MCPServer[object] = MCPServer("guarded")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def look() -> str:
        return "looked"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False))
    def write() -> str:
        return "written"

    @server.tool()
    def undeclared() -> str:
        return "done"

    server.middleware.append(scope_middleware(server))
    return server


def text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


def test_over_stdio_there_is_no_principal_and_nothing_is_refused() -> None:
    assert http_principal() is None
    require_write("adding documents")
    require_scope("kb:admin", "anything")


def test_an_http_caller_is_its_token_s_name_and_scopes() -> None:
    with verified("ci", KB_READ):
        assert http_principal() == Principal(name="ci", scopes=frozenset({KB_READ}))
    assert http_principal() is None


def test_a_read_only_token_is_refused_writing_with_what_to_do_instead() -> None:
    with verified("reader", KB_READ), pytest.raises(ToolError) as refused:
        require_write("adding documents")
    assert str(refused.value) == (
        "the token 'reader' is read-only: adding documents needs the kb:write scope. "
        "Use a token minted without --read-only (sextant-kb-token mint NAME)."
    )
    with verified("writer", KB_READ, KB_WRITE):
        require_write("adding documents")


async def test_a_read_only_token_sees_only_the_read_only_tools_and_cannot_call_the_others() -> None:
    with verified("reader", KB_READ):
        async with Client(guarded_server()) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["look"]
            assert text(await client.call_tool("look", {})) == "looked"
            for name in ("write", "undeclared"):  # the middleware is the first lock, whatever the tool checks
                refused = await client.call_tool(name, {})
                assert refused.is_error and f"calling {name} needs the {KB_WRITE} scope" in text(refused)


@pytest.mark.parametrize("scopes", [(KB_READ, KB_WRITE), None], ids=["full-token", "stdio"])
async def test_a_full_token_and_the_local_process_see_and_call_every_tool(scopes: tuple[str, ...] | None) -> None:
    with verified("writer", *scopes) if scopes else nullcontext():
        async with Client(guarded_server()) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == ["look", "undeclared", "write"]
            assert text(await client.call_tool("write", {})) == "written"
            assert text(await client.call_tool("undeclared", {})) == "done"
