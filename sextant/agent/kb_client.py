"""The knowledge base as the agent sees it: an MCP server in its own process, discovered, not imported.

The agent starts ``sextant-kb`` over stdio and owns its lifetime. Of the tools it discovers, only the
read tools named in ``OFFERED_TO_MODEL`` are offered to the model: answering a question must never change
the corpus, so ``kb_ingest`` is called by the HTTP API on a person's behalf and never by the model; nor is
``kb_page_image``, which draws a cited page for a person to see.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import shutil
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent, TextContent, TextResourceContents
from mcp_types.jsonrpc import CONNECTION_CLOSED

from sextant.agent.chat import ToolSpec

log = logging.getLogger(__name__)

OFFERED_TO_MODEL = ("kb_search", "kb_list", "kb_stats")
REQUEST_ID_META = "sextant/request_id"
# Must match sextant.kb.workspaces.WORKSPACE_META; the agent never imports the knowledge base.
WORKSPACE_META = "sextant/workspace"
# Must match sextant.kb.page_image.NO_PAGE_IMAGE: kb_page_image's errors that mean "nothing to show" start so.
NO_PAGE_IMAGE = "no page image"
# The workspace of the HTTP request being served; every MCP call the request makes is scoped to it.
current_workspace: ContextVar[str | None] = ContextVar("sextant_workspace", default=None)
# Ingest of a large upload embeds every chunk on the server's CPU.
CALL_TIMEOUT_S = 600.0


class KbUnavailable(Exception):
    """The knowledge-base process could not be started or stopped answering."""


@dataclass(frozen=True)
class DiscoveredTool:
    spec: ToolSpec
    read_only: bool
    offered: bool


@dataclass(frozen=True)
class ToolOutcome:
    ok: bool
    structured: dict[str, Any] | None
    text: str
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (MIME type, bytes) of each image block


def stdio_server(command: str | None = None, args: list[str] | None = None) -> StdioServerParameters:
    """How to start ``sextant-kb`` (with ``args`` added): the one installed beside this Python unless told
    otherwise."""
    if command:
        parts = command.split()
        return StdioServerParameters(command=parts[0], args=[*parts[1:], *(args or [])], env=dict(os.environ))
    found = shutil.which("sextant-kb", path=str(Path(sys.executable).parent)) or shutil.which("sextant-kb")
    if found is None:
        raise KbUnavailable(
            "sextant-kb is not installed beside this Python; install sextant-kb or set SEXTANT_KB_COMMAND"
        )
    return StdioServerParameters(
        command=found,
        args=list(args or []),
        env={**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")},
    )


class KbClient:
    """An open MCP session with the knowledge base. Use as an async context manager."""

    def __init__(self, server: Any) -> None:
        # ``server`` is anything ``mcp.Client`` accepts: stdio parameters in the product, an in-memory
        # server object in tests that exercise the loop without a process.
        self._client = Client(server, read_timeout_seconds=CALL_TIMEOUT_S)
        self.tools: dict[str, DiscoveredTool] = {}

    async def __aenter__(self) -> KbClient:
        try:
            await self._client.__aenter__()
            listed = await self._client.list_tools()
        except Exception as exc:
            raise KbUnavailable(f"could not start the knowledge base: {exc}") from exc
        for tool in listed.tools:
            read_only = bool(tool.annotations and tool.annotations.read_only_hint)
            spec = ToolSpec(tool.name, tool.description or "", dict(tool.input_schema))
            self.tools[tool.name] = DiscoveredTool(spec, read_only, offered=read_only and tool.name in OFFERED_TO_MODEL)
        log.info("knowledge base tools: %s", ", ".join(sorted(self.tools)))
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._client.__aexit__(exc_type, exc, tb)

    def offered(self) -> list[ToolSpec]:
        return [t.spec for t in self.tools.values() if t.offered]

    async def call(self, name: str, arguments: dict[str, Any], request_id: str | None = None) -> ToolOutcome:
        if name not in self.tools:
            raise KbUnavailable(f"the knowledge base has no tool {name!r}")
        try:
            result: CallToolResult = await self._client.call_tool(name, arguments, meta=_meta(request_id))
        except Exception as exc:
            raise KbUnavailable(f"{name} failed: {exc}") from exc
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        images = [_image(block) for block in result.content if isinstance(block, ImageContent)]
        return ToolOutcome(ok=not result.is_error, structured=result.structured_content, text=text, images=images)

    async def probe(self) -> None:
        """One round trip that changes nothing: ``server/discover`` (the 2026-07-28 revision has no ping)."""
        await self._client.session.send_discover(self._client.protocol_version)

    async def read(self, uri: str) -> str:
        # Never from the client's cache: a replaced document, or another workspace, has other text at this URI.
        try:
            result = await self._client.read_resource(uri, meta=_meta(None), cache_mode="bypass")
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                raise KbUnavailable(f"reading {uri} failed: {exc}") from exc
            raise
        return "\n".join(c.text for c in result.contents if isinstance(c, TextResourceContents))


def _image(block: ImageContent) -> tuple[str, bytes]:
    try:
        return block.mime_type, base64.b64decode(block.data, validate=True)
    except binascii.Error as exc:
        raise KbUnavailable(f"the knowledge base sent an image that is not base64: {exc}") from exc


def _meta(request_id: str | None) -> Any:
    meta = {REQUEST_ID_META: request_id, WORKSPACE_META: current_workspace.get()}
    return {key: value for key, value in meta.items() if value} or None
