"""Private workspaces over MCP: the host that created one deletes it here (on expiry, or when its owner asks)."""

from __future__ import annotations

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from sextant.contract.results import WorkspaceDropped
from sextant.contract.tools import KB_DROP_WORKSPACE
from sextant.kb.mcp.context import (
    DROPPING,
    Server,
    Tools,
    announce_documents_changed,
    in_thread,
    lifespan_of,
    workspace_named,
)


def register(server: Server, tools: Tools) -> None:
    """Add the workspace tool to ``server``."""

    @tools.add(KB_DROP_WORKSPACE, "Delete this workspace", DROPPING)
    async def kb_drop_workspace(ctx: Context) -> WorkspaceDropped:
        """Delete the calling workspace: every document, passage and index in it. For the host that created the
        workspace (on expiry or when its owner asks), never for answering questions. The default store cannot be
        dropped."""
        workspace = workspace_named(ctx.request_context.meta)
        if workspace is None:
            raise ToolError("this call names no workspace; the default store is removed with sextant-forget")
        workspaces = lifespan_of(ctx).workspaces
        dropped = WorkspaceDropped(existed=await in_thread(ToolError, workspaces.drop, workspace))
        if dropped.existed:
            await announce_documents_changed(ctx)
        return dropped
