"""Adding through MCP: text documents (paged), a file, progress, limits, and the notice that the documents changed."""

from __future__ import annotations

import base64

import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged
from mcp_types import (
    ResourceListChangedNotification,
    ServerNotification,
)

from sextant.contract.meta import WORKSPACE_META
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.settings import KbSettings
from tests.conftest import REPO
from tests.kb.loaders.mail_factory import message
from tests.kb.mcp.server_client import BEES, ESPRESSO, ingest

pytestmark = pytest.mark.anyio


async def test_pages_of_one_id_become_one_paged_document(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await ingest(
            client,
            {"id": "bees", "title": "Bees", "content": "The harvest is in late August.", "page": 2},
            {"id": "bees", "title": "Bees", "content": BEES, "page": 1},
        )
        hit = (await client.call_tool("kb_search", {"query": "when is the harvest", "k": 1})).structured_content
        assert hit is not None and (hit["hits"][0]["page"], hit["hits"][0]["page_label"]) == (2, "2")
        page = await client.read_resource("kb://documents/bees/pages/2")
        assert page.contents[0].text == "The harvest is in late August."  # type: ignore[union-attr]


async def test_a_handshake_client_hears_that_the_documents_changed_when_they_did(kb: KnowledgeBase) -> None:
    heard: list[ServerNotification | Exception] = []

    async def keep(message: ServerNotification | Exception) -> None:
        heard.append(message)

    document = {"id": "espresso", "title": "Espresso care", "content": ESPRESSO}
    async with Client(create_server(kb), mode="legacy", message_handler=keep) as client:
        assert [r.uri for r in (await client.list_resources()).resources] == ["ui://sextant-kb/passage"]  # the view
        await ingest(client, document)
        assert [type(m) for m in heard] == [ResourceListChangedNotification]
        await ingest(client, document)  # unchanged: nothing to re-read
        upload = {"filename": "bees.md", "content_base64": base64.b64encode(BEES.encode()).decode()}
        assert not (await client.call_tool("kb_upload", upload)).is_error
        assert [type(m) for m in heard] == [ResourceListChangedNotification] * 2
        assert [r.name for r in (await client.list_resources()).resources] == ["bees", "espresso", "passage"]

        workspace = {WORKSPACE_META: "c" * 32}
        in_workspace = await client.call_tool("kb_ingest", {"documents": [document]}, meta=workspace)
        assert not in_workspace.is_error
        dropped = await client.call_tool("kb_drop_workspace", {}, meta=workspace)
        assert dropped.structured_content == {"existed": True}
        assert [type(m) for m in heard] == [ResourceListChangedNotification] * 4


async def test_a_2026_client_listening_hears_that_the_documents_changed(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client, client.listen(resources_list_changed=True) as changes:
        assert client.protocol_version == "2026-07-28" and changes.honored.resources_list_changed
        await ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        assert isinstance(await anext(changes), ResourcesListChanged)


async def test_ingest_reports_progress(kb: KnowledgeBase) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    long_text = " ".join(["Descale the machine and backflush the group head every week."] * 200)
    async with Client(create_server(kb)) as client:
        result = await client.call_tool(
            "kb_ingest",
            {"documents": [{"id": "big", "title": "Big", "content": long_text}]},
            progress_callback=on_progress,
        )
    assert not result.is_error
    assert len(seen) >= 2 and seen[-1][0] == seen[-1][1] == 1
    assert any(m and "embedding big" in m for _, _, m in seen)


async def test_upload_parses_a_pdf_in_the_server_and_keeps_its_pages(kb: KnowledgeBase) -> None:
    import base64

    pdf = REPO / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["kb_upload"].annotations is not None and not tools["kb_upload"].annotations.read_only_hint
        encoded = base64.b64encode(pdf.read_bytes()).decode()
        result = await client.call_tool("kb_upload", {"filename": "Lighthouse History.pdf", "content_base64": encoded})
        assert result.structured_content is not None
        assert result.structured_content["results"][0]["status"] == "added"
        doc_id = result.structured_content["results"][0]["id"]
        assert doc_id == "Lighthouse-History"
        assert len(kb.document(doc_id).pages) > 1

        refused = await client.call_tool("kb_upload", {"filename": "notes.xyz", "content_base64": encoded})
        assert refused.structured_content is not None
        outcome = refused.structured_content["results"][0]
        assert outcome["status"] == "refused" and "unsupported file type" in outcome["reason"]

        broken = await client.call_tool("kb_upload", {"filename": "a.pdf", "content_base64": "not base64!"})
        assert broken.is_error


async def test_an_uploaded_message_brings_its_attachment_as_a_part(kb: KnowledgeBase) -> None:
    import base64

    notes = ("notes.md", b"# Notes\n\nThe kiln fires at 1,240 degrees.\n", "text/markdown")
    eml = message(subject="Kiln", message_id="<kiln@example.com>", attachments=[notes]).as_bytes()
    async with Client(create_server(kb)) as client:
        result = await client.call_tool(
            "kb_upload", {"filename": "kiln.eml", "content_base64": base64.b64encode(eml).decode()}
        )
        assert result.structured_content is not None
        (outcome,) = result.structured_content["results"]
        assert (outcome["id"], outcome["status"]) == ("kiln", "added")
        assert [(p["id"], p["status"]) for p in outcome["parts"]] == [("kiln.kiln-example.com-1-notes.md", "added")]
        found = await client.call_tool("kb_search", {"query": "what temperature does the kiln fire at", "k": 1})
        assert found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "kiln.kiln-example.com-1-notes.md"


async def test_upload_limits_come_from_the_settings_and_refusals_name_them(
    settings: KbSettings, embedder: Embedder
) -> None:
    import base64

    limited = settings.model_copy(update={"max_pdf_pages": 1, "max_file_bytes": 3000})
    with KnowledgeBase.open(limited, embedder=embedder) as kb:
        async with Client(create_server(kb)) as client:
            big = base64.b64encode(b"x" * 3001).decode()
            result = await client.call_tool("kb_upload", {"filename": "big.txt", "content_base64": big})
            assert result.structured_content is not None
            assert "SEXTANT_MAX_FILE_BYTES=3000" in result.structured_content["results"][0]["reason"]
            encoded = base64.b64encode(_two_page_pdf()).decode()
            result = await client.call_tool("kb_upload", {"filename": "two.pdf", "content_base64": encoded})
            assert result.structured_content is not None
            outcome = result.structured_content["results"][0]
            assert outcome["status"] == "refused" and "more than SEXTANT_MAX_PDF_PAGES=1" in outcome["reason"]
            assert kb.store.document_count() == 0


def _two_page_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for text in ("First page of the notes.", "Second page of the notes."):
        doc.new_page().insert_text((72, 72), text)
    try:
        return doc.tobytes()
    finally:
        doc.close()
