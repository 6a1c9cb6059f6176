"""What every tool, resource and handler of the server works with: the typed lifespan context, the caller's
workspace and knowledge base, registering a tool, and the answers to a refusal or a failure.

A refusal (``KnowledgeBaseError``) is something the caller can fix: a tool error in its words. Anything else a
tool raises is the server's own failure: a protocol error (INTERNAL_ERROR) with a log line that names it, never
a tool error a model is told it caused.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from sextant.contract.meta import REQUEST_ID_META, WORKSPACE_META
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.mcp import client_log
from sextant.kb.refusal import KnowledgeBaseError
from sextant.kb.remote.access import http_principal
from sextant.kb.store import StoreError
from sextant.kb.watch import Watcher
from sextant.kb.workspaces import Workspaces
from sextant.logs import request_id

log = logging.getLogger(__name__)
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# Re-using an id replaces that document: destructive, but the same call twice changes nothing more.
REPLACING = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
DROPPING = REPLACING  # the same hints: destructive, and a second call changes nothing more


@dataclass(frozen=True)
class KbContext:
    """The server's lifespan context: each request reaches these through ``ctx``."""

    workspaces: Workspaces
    parser: BoundedParser  # one parsing worker for every workspace; it starts at the first upload
    bus: InMemorySubscriptionBus
    watcher: Watcher | None = None  # keeps the default knowledge base mirroring the --watch folders


Server = MCPServer[KbContext]


def lifespan_of(ctx: Context) -> KbContext:
    """The server's lifespan context (a tool's ``Context`` does not carry its type)."""
    return cast(KbContext, ctx.request_context.lifespan_context)


def workspace_named(meta: Mapping[str, Any] | None) -> str | None:
    """The workspace the host named for this request; none names the default store.

    Only the trusted host over stdio names workspaces: an HTTP client's ``_meta`` is its own to write.
    """
    if http_principal() is not None:
        return None
    named = (meta or {}).get(WORKSPACE_META)
    return named if isinstance(named, str) and named else None


def store_named(
    workspaces: Workspaces, meta: Mapping[str, Any] | None, error: Callable[[str], Exception]
) -> KnowledgeBase:
    """The knowledge base of the workspace ``meta`` names; an unusable name raises ``error`` with the reason."""
    try:
        return workspaces.get(workspace_named(meta))
    except KnowledgeBaseError as exc:
        raise error(str(exc)) from exc


def kb_of(ctx: Context, error: Callable[[str], Exception] = ToolError) -> KnowledgeBase:
    """The calling workspace's knowledge base, with this call's log lines tagged by the caller's request id."""
    meta = ctx.request_context.meta or {}
    sent = meta.get(REQUEST_ID_META)
    if isinstance(sent, str) and sent:
        request_id.set(sent[:128])
    return store_named(lifespan_of(ctx).workspaces, meta, error)


async def announce_documents_changed(ctx: Context) -> None:
    """Tell clients that the documents (kb_list, the kb://documents resources) changed: every
    subscriptions/listen stream (2026-07-28), and on the handshake era the calling connection itself."""
    await ctx.notify_resources_changed()
    if ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        await ctx.request_context.session.send_resource_list_changed()


async def in_thread(error: type[Exception], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking knowledge-base work off the event loop; a refusal (``KnowledgeBaseError``) becomes ``error``
    with its message, and anything else stays the server's own failure (``Tools.add``)."""
    try:
        return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))
    except KnowledgeBaseError as exc:
        raise error(str(exc)) from exc


class Tools:
    """Registers the server's tools: name (from ``sextant.contract.tools``), title, hints, and the docstring,
    dedented, as the description the model reads (plus the retention rule for the tools that store or show
    documents)."""

    def __init__(self, server: Server, retention: str) -> None:
        self.server = server
        self.retention = retention

    def add(
        self,
        name: str,
        title: str,
        annotations: ToolAnnotations,
        *,
        retained: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        def register(fn: F) -> F:
            description = inspect.cleandoc(fn.__doc__ or "")
            if retained and self.retention:
                description += f"\n\n{self.retention}"
            self.server.add_tool(
                _failures_as_errors(name, client_log.forwarding(fn)),
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                meta=meta,
            )
            return fn

        return register


def _failures_as_errors(name: str, tool: F) -> F:
    """``tool``, its own failures answered as a protocol error (INTERNAL_ERROR) with a log line that names them.

    A refusal (``ToolError``) is a tool error the model can act on; the SDK would answer any other exception the
    same way ("Error executing tool"), telling a model, and the agent behind it, that it caused what is the
    server's failure (a store that cannot be read, a bug).
    """

    @functools.wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except (ToolError, ResourceError, MCPError):
            raise
        except StoreError as exc:
            log.error("%s failed: the store: %s", name, exc)
            raise MCPError(INTERNAL_ERROR, f"{name} failed: the knowledge base's store: {exc}") from exc
        except Exception as exc:
            log.exception("%s failed", name)
            detail = f"{type(exc).__name__}: {exc}"[:300]
            raise MCPError(INTERNAL_ERROR, f"{name} failed inside sextant-kb ({detail})") from exc

    return cast(F, call)
