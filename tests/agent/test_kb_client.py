"""The knowledge base as the agent sees it: tools discovered over MCP, typed calls, each scoped to its workspace."""

from __future__ import annotations

import base64
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, ImageContent, ToolAnnotations

from sextant.agent.kb_client import (
    OFFERED_TO_MODEL,
    SHARED_STORE,
    KbClient,
    KbContractBroken,
    KbFailed,
    KbNotFound,
    KbScope,
    KbUnavailable,
    ScopedKb,
    ToolOutcome,
    ToolRefused,
    stdio_server,
)
from sextant.contract.tools import KB_INGEST, KB_LIST, KB_PAGE_IMAGE, KB_UPLOAD, IngestDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import ToolSpec

PAGE = {
    "document_id": "manual",
    "page": 2,
    "width_pt": 595.0,
    "height_pt": 842.0,
    "width_px": 1190,
    "height_px": 1684,
    "highlights": 0,
    "matched": "no_quote",
}
PNG = b"\x89PNG\r\n\x1a\n-not-a-real-image"


class AnsweringConnection:
    """A test double of the connection to the knowledge-base process: every call answered with one outcome; it
    offers the model nothing and holds no documents to read."""

    def __init__(self, outcome: ToolOutcome) -> None:
        self.outcome = outcome

    def offered(self) -> list[ToolSpec]:
        return []

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome:
        return self.outcome

    async def read(self, uri: str, scope: KbScope) -> str:
        raise KbNotFound(uri)


class RecordingConnection(AnsweringConnection):
    """The answering double, each call's tool, arguments and request id kept."""

    def __init__(self, outcome: ToolOutcome) -> None:
        super().__init__(outcome)
        self.calls: list[tuple[str, dict[str, Any], str | None]] = []

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome:
        self.calls.append((name, arguments, scope.request_id))
        return self.outcome


def answering(outcome: ToolOutcome) -> ScopedKb:
    """Typed calls over the answering double."""
    return ScopedKb(AnsweringConnection(outcome), SHARED_STORE)


async def test_a_result_outside_the_contract_is_an_error_naming_the_tool_never_a_silent_none() -> None:
    renamed = {"documents": [{"id": "manual", "name": "Espresso manual"}]}
    with pytest.raises(KbContractBroken, match=r"kb_list's result does not match sextant\.contract"):
        await answering(ToolOutcome(ok=True, structured=renamed, text="")).list_documents()
    with pytest.raises(KbContractBroken, match="kb_list answered without a structured result"):
        await answering(ToolOutcome(ok=True, structured=None, text="")).list_documents()


async def test_a_tool_s_refusal_is_raised_with_its_words() -> None:
    with pytest.raises(ToolRefused, match="no document with id 'gone'") as refused:
        await answering(ToolOutcome(ok=False, structured=None, text="no document with id 'gone'")).list_documents()
    assert refused.value.tool == KB_LIST


async def test_a_refusal_without_words_still_names_its_tool() -> None:
    with pytest.raises(ToolRefused, match=r"^kb_list failed$"):
        await answering(ToolOutcome(ok=False, structured=None, text="")).list_documents()


async def test_ingest_sends_only_the_fields_given_and_upload_sends_the_bytes_as_base64() -> None:
    connection = RecordingConnection(ToolOutcome(ok=True, structured={"results": []}, text=""))
    await ScopedKb(connection, KbScope(request_id="req-1")).ingest([IngestDocument(id="a", title="A", content="text")])
    await ScopedKb(connection, KbScope(request_id="req-2")).upload("notes.md", b"# Notes\x00\xff")
    (ingest, ingest_args, ingest_id), (upload, upload_args, upload_id) = connection.calls
    assert (ingest, ingest_id, upload, upload_id) == (KB_INGEST, "req-1", KB_UPLOAD, "req-2")
    assert ingest_args == {"documents": [{"id": "a", "title": "A", "content": "text", "source": ""}]}
    assert upload_args["filename"] == "notes.md"
    assert base64.b64decode(upload_args["content_base64"]) == b"# Notes\x00\xff"


@pytest.mark.parametrize(("quote", "sent"), [(None, None), ("   ", None), ("18 grams", "18 grams")])
async def test_a_page_image_is_asked_with_a_quote_only_when_there_are_words_to_highlight(
    quote: str | None, sent: str | None
) -> None:
    connection = RecordingConnection(ToolOutcome(ok=True, structured=PAGE, text="", images=[("image/png", PNG)]))
    drawn, png = await ScopedKb(connection, SHARED_STORE).page_image("manual", 2, quote)
    [(name, arguments, _)] = connection.calls
    assert name == KB_PAGE_IMAGE and arguments.get("quote") == sent
    assert (drawn.page, drawn.matched, png) == (2, "no_quote", PNG)


async def test_a_page_image_answer_without_a_png_reads_as_none() -> None:
    kb = answering(ToolOutcome(ok=True, structured=PAGE, text="", images=[("image/jpeg", b"\xff\xd8")]))
    assert (await kb.page_image("manual", 2, None))[1] is None


@pytest.mark.slow
async def test_only_the_read_tools_named_for_the_model_are_offered_to_it(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        assert {spec.name for spec in client.offered()} == set(OFFERED_TO_MODEL)
        assert client.tools[KB_LIST].read_only and not client.tools[KB_INGEST].read_only
        assert not client.tools[KB_PAGE_IMAGE].offered  # read-only, but for a person's eyes
        assert client.tools[KB_INGEST].spec.input_schema["required"] == ["documents"]


@pytest.mark.slow
async def test_a_tool_the_server_does_not_have_is_unavailable_not_refused(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        with pytest.raises(KbUnavailable, match="the knowledge base has no tool 'kb_translate'"):
            await client.call("kb_translate", {}, SHARED_STORE)


@pytest.mark.slow
async def test_every_call_is_scoped_to_the_workspace_it_is_bound_to(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        mine, theirs = ScopedKb(client, KbScope("a1" * 8)), ScopedKb(client, KbScope("b2" * 8))
        await mine.ingest([IngestDocument(id="mine", title="Mine", content="Grind finer for espresso.")])
        assert [d.id for d in (await mine.list_documents()).documents] == ["mine"]
        assert (await theirs.list_documents()).documents == []
        shared = ScopedKb(client, SHARED_STORE)
        assert (await shared.list_documents()).documents == []  # the shared store never saw it


@pytest.mark.slow
async def test_a_resource_is_read_afresh_after_its_document_is_replaced(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        shared = ScopedKb(client, SHARED_STORE)
        await shared.ingest([IngestDocument(id="note", title="Note", content="The first version.")])
        assert "The first version." in await shared.read("kb://documents/note")
        await shared.ingest([IngestDocument(id="note", title="Note", content="The second version.")])
        again = await shared.read("kb://documents/note")
    assert "The second version." in again and "first" not in again


async def test_an_image_that_is_not_base64_is_the_knowledge_base_failing_not_a_picture() -> None:
    server: MCPServer[object] = MCPServer("a broken knowledge base")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def kb_page_image() -> list[ImageContent]:
        return [ImageContent(type="image", data="not base64!", mime_type="image/png")]

    async with KbClient(server) as client:
        with pytest.raises(KbContractBroken, match="the knowledge base sent an image that is not base64"):
            await client.call(KB_PAGE_IMAGE, {}, SHARED_STORE)


async def test_a_knowledge_base_that_fails_a_call_is_failed_not_unavailable_and_a_missing_page_is_not_found(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each failure its own kind: the process answering with its own error (502) is not the process being gone
    (503), and neither is a resource that does not exist (404)."""
    server: MCPServer[object] = MCPServer("a knowledge base whose store broke")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def kb_search(query: str) -> str:
        raise MCPError(INTERNAL_ERROR, "kb_search failed: the knowledge base's store: it is gone")

    @server.resource("kb://documents/{doc_id}")
    def document(doc_id: str) -> str:
        if doc_id == "broken":
            raise RuntimeError("a bug")
        raise ResourceNotFoundError(f"no document with id {doc_id!r}")

    async with KbClient(server) as client:
        with caplog.at_level(logging.ERROR), pytest.raises(KbFailed, match="store: it is gone") as failed:
            await client.call("kb_search", {"query": "tea"}, SHARED_STORE)
        assert not isinstance(failed.value, KbUnavailable)
        assert "kb_search failed in the knowledge base" in caplog.text
        with pytest.raises(KbNotFound, match="no document with id 'missing'"):
            await client.read("kb://documents/missing", SHARED_STORE)
        with pytest.raises(KbFailed, match="reading kb://documents/broken failed"):
            await client.read("kb://documents/broken", SHARED_STORE)


def test_a_configured_command_is_split_into_the_program_and_its_arguments() -> None:
    server = stdio_server("uv run sextant-kb --store /tmp/kb", ["--workspace-ttl", "60"])
    assert server.command == "uv"
    assert server.args == ["run", "sextant-kb", "--store", "/tmp/kb", "--workspace-ttl", "60"]


def test_the_default_is_the_sextant_kb_beside_this_python_kept_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    server = stdio_server(None, ["--workspace-ttl", "60"])
    assert Path(server.command) == Path(sys.executable).parent / "sextant-kb"
    assert server.args == ["--workspace-ttl", "60"]
    assert server.env is not None and server.env["HF_HUB_OFFLINE"] == "1"


def test_without_an_installed_sextant_kb_the_error_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KbUnavailable, match="set SEXTANT_KB_COMMAND"):
        stdio_server()
