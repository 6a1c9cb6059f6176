"""The knowledge base as the agent sees it: an MCP server in its own process, discovered, not imported.

The agent starts ``sextant-kb`` over stdio and owns its lifetime. Of the tools it discovers, only the
read tools named in ``OFFERED_TO_MODEL`` are offered to the model: answering a question must never change
the corpus, so ``kb_ingest`` is called by the HTTP API on a person's behalf and never by the model; nor is
``kb_page_image``, which draws a cited page for a person to see.

Which store a call may touch is never ambient: every call names its ``KbScope`` (the workspace, and the request
it is made for), sent in the call's ``_meta``. The HTTP API and the loop hold a ``ScopedKb``, the connection bound
to one scope, made per request by ``sextant.agent.deps``. Its typed calls validate each tool's
``structuredContent`` into its model from ``sextant.contract``, the models the server returns, so the two sides
cannot drift apart.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent, TextContent, TextResourceContents
from mcp_types.jsonrpc import CONNECTION_CLOSED, INVALID_PARAMS, REQUEST_TIMEOUT
from pydantic import BaseModel, ValidationError

from sextant.contract.ann import AnnComparison
from sextant.contract.meta import REQUEST_ID_META, WORKSPACE_META
from sextant.contract.results import DocumentInfo, DocumentList, IngestReport, PageImage, SearchResult, WorkspaceDropped
from sextant.contract.tools import (
    KB_ANN_COMPARE,
    KB_DROP_WORKSPACE,
    KB_INGEST,
    KB_LIST,
    KB_PAGE_IMAGE,
    KB_SEARCH,
    KB_SET_OVERVIEW,
    KB_STATS,
    KB_UPLOAD,
    IngestDocument,
)
from sextant.llm.chat import ToolSpec

log = logging.getLogger(__name__)

OFFERED_TO_MODEL = (KB_SEARCH, KB_LIST, KB_STATS)
# Ingest of a large upload embeds every chunk on the server's CPU.
CALL_TIMEOUT_S = 600.0


M = TypeVar("M", bound=BaseModel)


class KbUnavailable(Exception):
    """The knowledge-base process could not be started or stopped answering (a 503: retry later)."""


class KbFailed(Exception):
    """The knowledge base answered, with a failure of its own: a protocol error, not a refusal (a 502)."""


class KbContractBroken(KbFailed):
    """A tool answered with a result its contract model does not accept: the two sides are out of step."""


class KbNotFound(Exception):
    """The knowledge base has no resource at that URI (no such document or page)."""


class ToolRefused(Exception):
    """A tool answered with an error (``isError``): a bad argument or a refusal, in the tool's words."""

    def __init__(self, tool: str, text: str) -> None:
        super().__init__(text or f"{tool} failed")
        self.tool = tool
        self.text = text


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


def result_of(name: str, outcome: ToolOutcome, model: type[M]) -> M:
    """The structured result of tool ``name`` as its contract ``model``.

    Raises:
        ToolRefused: the tool answered with an error.
        KbContractBroken: the result is missing or does not validate as ``model``.
    """
    if not outcome.ok:
        raise ToolRefused(name, outcome.text)
    if outcome.structured is None:
        raise KbContractBroken(f"{name} answered without a structured result")
    try:
        return model.model_validate(outcome.structured)
    except ValidationError as exc:
        raise KbContractBroken(f"{name}'s result does not match sextant.contract: {exc}") from exc


def search_result(outcome: ToolOutcome) -> SearchResult:
    """``kb_search``'s successful outcome as its contract model (the loop calls the tool as the model asked).

    Raises:
        KbContractBroken: the result does not validate.
    """
    return result_of(KB_SEARCH, outcome, SearchResult)


@dataclass(frozen=True)
class KbScope:
    """Which store a call may touch, and the request it is made for; both travel in the call's ``_meta``."""

    workspace: str | None = None  # None: the shared store, the only one while workspaces are off
    request_id: str | None = None  # tags the server's log lines for the call

    def meta(self) -> Any:
        meta = {REQUEST_ID_META: self.request_id, WORKSPACE_META: self.workspace}
        return {key: value for key, value in meta.items() if value} or None


# For calls made on no HTTP request's behalf: ``sextant-ask`` and the evaluation.
SHARED_STORE = KbScope()


class KbConnection(Protocol):
    """An open connection to the knowledge base (``KbClient``, or the ``KbSupervisor`` that keeps one alive)."""

    def offered(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome: ...

    async def read(self, uri: str, scope: KbScope) -> str: ...


@dataclass(frozen=True)
class ScopedKb:
    """The knowledge base as one request (or one sweep of a workspace) may use it: every call reaches the store
    of ``scope`` and no other.

    The typed calls raise ``ToolRefused`` when the tool refuses, ``KbUnavailable`` when the knowledge base is
    down, and ``KbContractBroken`` when its result does not match the contract.
    """

    connection: KbConnection
    scope: KbScope

    def offered(self) -> list[ToolSpec]:
        return self.connection.offered()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return await self.connection.call(name, arguments, self.scope)

    async def read(self, uri: str) -> str:
        return await self.connection.read(uri, self.scope)

    async def list_documents(self) -> DocumentList:
        return result_of(KB_LIST, await self.call(KB_LIST, {}), DocumentList)

    async def ingest(self, documents: Sequence[IngestDocument]) -> IngestReport:
        arguments = {"documents": [d.model_dump(exclude_none=True) for d in documents]}
        return result_of(KB_INGEST, await self.call(KB_INGEST, arguments), IngestReport)

    async def upload(self, filename: str, data: bytes) -> IngestReport:
        arguments = {"filename": filename, "content_base64": base64.b64encode(data).decode("ascii")}
        return result_of(KB_UPLOAD, await self.call(KB_UPLOAD, arguments), IngestReport)

    async def set_overview(self, document_id: str, overview: str, version: str | None) -> DocumentInfo:
        arguments = {"document_id": document_id, "overview": overview, "version": version}
        return result_of(KB_SET_OVERVIEW, await self.call(KB_SET_OVERVIEW, arguments), DocumentInfo)

    async def page_image(self, document_id: str, page: int, quote: str | None) -> tuple[PageImage, bytes | None]:
        """What was drawn, and the PNG (``None`` if the answer carried none)."""
        arguments: dict[str, Any] = {"document_id": document_id, "page": page}
        if quote and quote.strip():
            arguments["quote"] = quote
        outcome = await self.call(KB_PAGE_IMAGE, arguments)
        png = next((data for mime, data in outcome.images if mime == "image/png"), None)
        return result_of(KB_PAGE_IMAGE, outcome, PageImage), png

    async def drop_workspace(self) -> WorkspaceDropped:
        return result_of(KB_DROP_WORKSPACE, await self.call(KB_DROP_WORKSPACE, {}), WorkspaceDropped)

    async def ann_compare(self, query: str, k: int) -> AnnComparison:
        arguments = {"query": query, "k": k}
        return result_of(KB_ANN_COMPARE, await self.call(KB_ANN_COMPARE, arguments), AnnComparison)


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

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome:
        if name not in self.tools:
            raise KbUnavailable(f"the knowledge base has no tool {name!r}")
        try:
            result: CallToolResult = await self._client.call_tool(name, arguments, meta=scope.meta())
        except MCPError as exc:
            raise _failure(f"{name} failed", exc) from exc
        except Exception as exc:  # the transport: a closed stream, a process gone
            raise KbUnavailable(f"{name} failed: {exc}") from exc
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        images = [_image(block) for block in result.content if isinstance(block, ImageContent)]
        return ToolOutcome(ok=not result.is_error, structured=result.structured_content, text=text, images=images)

    async def probe(self) -> None:
        """One round trip that changes nothing: ``server/discover`` (the 2026-07-28 revision has no ping)."""
        await self._client.session.send_discover(self._client.protocol_version)

    async def read(self, uri: str, scope: KbScope) -> str:
        # Never from the client's cache: a replaced document, or another workspace, has other text at this URI.
        try:
            result = await self._client.read_resource(uri, meta=scope.meta(), cache_mode="bypass")
        except MCPError as exc:
            if exc.error.code == INVALID_PARAMS:  # the SDK's answer for a resource that does not exist
                raise KbNotFound(exc.error.message) from exc
            raise _failure(f"reading {uri} failed", exc) from exc
        except Exception as exc:
            raise KbUnavailable(f"reading {uri} failed: {exc}") from exc
        return "\n".join(c.text for c in result.contents if isinstance(c, TextResourceContents))


def _failure(what: str, exc: MCPError) -> KbUnavailable | KbFailed:
    """A protocol error as what it says: the session gone or a call timed out (unavailable), else the knowledge
    base's own failure, logged here as well as there."""
    if exc.error.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
        return KbUnavailable(f"{what}: {exc.error.message}")
    log.error("%s in the knowledge base: %s (code %d)", what, exc.error.message, exc.error.code)
    return KbFailed(f"{what} in the knowledge base: {exc.error.message}")


def _image(block: ImageContent) -> tuple[str, bytes]:
    try:
        return block.mime_type, base64.b64decode(block.data, validate=True)
    except binascii.Error as exc:
        raise KbContractBroken(f"the knowledge base sent an image that is not base64: {exc}") from exc
