"""The one place the server reaches past ``MCPServer`` into the SDK's low-level server.

Three requests need what ``MCPServer``'s own handlers do not give (python-sdk 2.3): ``completion/complete``'s
handler gets no request context, so it cannot see which workspace the request names in ``_meta``;
``resources/list`` lists only resources registered up front, while every stored document is a resource; and
``logging/setLevel``, which 2025-era clients still send, has no ``MCPServer`` handler since 2026-07-28 removed
it (its low-level constructor argument is deprecated). All are registered on ``_lowlevel_server`` until the
SDK passes the context to completion handlers, lets a server list resources of its own, and answers
``logging/setLevel`` for handshake-era connections.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    ListResourcesResult,
    PaginatedRequestParams,
    PromptReference,
    Resource,
    ResourceTemplateReference,
    SetLevelRequestParams,
)

from sextant.kb.completions import document_ids, page_numbers
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.mcp import client_log, passage_app
from sextant.kb.mcp.context import KbContext, Server, store_named
from sextant.kb.mcp.read import DOCUMENT_URI, PAGE_URI


def register(server: Server) -> None:
    """Answer ``completion/complete`` and ``resources/list`` for the workspace each request names, and
    ``logging/setLevel`` for the connection that sends it."""
    server._lowlevel_server.add_request_handler("completion/complete", CompleteRequestParams, _complete)
    server._lowlevel_server.add_request_handler("resources/list", PaginatedRequestParams, _list_resources)
    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, client_log.set_level)


def _knowledge_base(ctx: ServerRequestContext[KbContext, Any]) -> KnowledgeBase:
    return store_named(ctx.lifespan_context.workspaces, ctx.meta, partial(MCPError, INVALID_PARAMS))


async def _complete(ctx: ServerRequestContext[KbContext, Any], params: CompleteRequestParams) -> CompleteResult:
    """Document ids for the document templates and the prompts' document_id; page numbers of the named document
    for the page template; nothing for any other argument."""
    ref, argument = params.ref, params.argument
    names_document = (isinstance(ref, PromptReference) and argument.name == "document_id") or (
        isinstance(ref, ResourceTemplateReference) and ref.uri in (DOCUMENT_URI, PAGE_URI) and argument.name == "doc_id"
    )
    names_page = isinstance(ref, ResourceTemplateReference) and ref.uri == PAGE_URI and argument.name == "number"
    if not (names_document or names_page):
        return CompleteResult(completion=Completion(values=[]))
    documents = await anyio.to_thread.run_sync(_knowledge_base(ctx).documents)
    if names_document:
        return CompleteResult(completion=document_ids(documents, argument.value))
    chosen = ((params.context.arguments if params.context else None) or {}).get("doc_id")
    document = next((d for d in documents if d.id == chosen), None)
    return CompleteResult(completion=page_numbers(document, argument.value))


async def _list_resources(
    ctx: ServerRequestContext[KbContext, Any], params: PaginatedRequestParams | None
) -> ListResourcesResult:
    """Every document as a resource, so a host can offer them (list_changed tells it when to list again), and the
    passage view."""
    documents = await anyio.to_thread.run_sync(_knowledge_base(ctx).documents)
    return ListResourcesResult(
        resources=[
            *(
                Resource(uri=d.uri, name=d.id, title=d.title, description=d.about or None, mime_type="text/plain")
                for d in documents
            ),
            passage_app.listed(),
        ]
    )
