"""Who is calling, and what their token lets them do.

Over HTTP every request carries a verified bearer token; the SDK's ``AuthContextMiddleware`` puts it in a
context variable that reaches tool calls. Over stdio (and the in-memory client) there is none: the caller
is the local process that started the server, trusted with everything, including the ``_meta`` keys that
pick a workspace. Code that honours such keys must ignore them whenever ``http_principal()`` is not None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ListToolsResult, TextContent, Tool

from sextant.kb.remote.tokens import KB_WRITE


@dataclass(frozen=True)
class Principal:
    """A verified HTTP caller: the token's name and its scopes."""

    name: str
    scopes: frozenset[str]


def http_principal() -> Principal | None:
    """The token behind the current HTTP request, or None over stdio (the trusted local caller)."""
    token = get_access_token()
    if token is None:
        return None
    return Principal(name=token.client_id, scopes=frozenset(token.scopes))


def require_scope(scope: str, action: str) -> None:
    """Refuse ``action`` unless the caller holds ``scope``.

    Raises:
        ToolError: the caller's token lacks the scope.
    """
    principal = http_principal()
    if principal is not None and scope not in principal.scopes:
        raise ToolError(_refusal(principal, scope, action))


def require_write(action: str) -> None:
    """Refuse ``action`` to a read-only token (the writing tools call this first).

    Raises:
        ToolError: the caller's token lacks ``kb:write``.
    """
    require_scope(KB_WRITE, action)


def scope_middleware(server: MCPServer[Any]) -> ServerMiddleware[Any]:
    """MCP middleware for the HTTP app: a token without ``kb:write`` does not see, and cannot call, any tool
    not annotated read-only. It keys on the annotations, so a writing tool added later is covered unasked;
    the writing tools' own ``require_write`` calls stay as the second lock."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        principal = http_principal()
        if principal is None or KB_WRITE in principal.scopes or ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            writing = {t.name for t in await server.list_tools() if not _read_only(t)}
            if name in writing:
                refusal = _refusal(principal, KB_WRITE, f"calling {name}")
                return CallToolResult(content=[TextContent(type="text", text=refusal)], is_error=True)
            return await call_next(ctx)
        result = await call_next(ctx)
        # The chain hands results on serialized (wire names), so the listing is filtered as JSON.
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            return result | {"tools": [t for t in result["tools"] if _read_only(Tool.model_validate(t))]}
        if isinstance(result, ListToolsResult):
            return result.model_copy(update={"tools": [t for t in result.tools if _read_only(t)]})
        return result

    return middleware


def _read_only(tool: Tool) -> bool:
    return tool.annotations is not None and tool.annotations.read_only_hint is True


def _refusal(principal: Principal, scope: str, action: str) -> str:
    return (
        f"the token {principal.name!r} is read-only: {action} needs the {scope} scope. "
        "Use a token minted without --read-only (sextant-kb-token mint NAME)."
    )
