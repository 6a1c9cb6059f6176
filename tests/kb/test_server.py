"""The MCP server driven through the SDK's in-memory client: what any MCP client sees."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    PromptReference,
    ResourceLink,
    ResourceListChangedNotification,
    ResourceTemplateReference,
    ServerNotification,
    TextContent,
)

from sextant.contract.meta import WORKSPACE_META
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import DOCUMENT_URI, PAGE_URI, create_server
from sextant.kb.store import StoreError
from sextant.settings import KbSettings

pytestmark = pytest.mark.anyio

ESPRESSO = "## Descaling\nDescale the espresso machine every eight weeks with a citric acid solution."
BEES = "## Spring\nIn early spring the beekeeper checks that the queen is laying and that honey stores last."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _ingest(client: Client, *docs: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool("kb_ingest", {"documents": list(docs)})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_tools_are_typed_annotated_and_described(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"kb_search", "kb_list", "kb_ingest", "kb_upload", "kb_stats"} <= set(tools)
    for tool in tools.values():
        assert tool.description and tool.output_schema and tool.annotations
        assert tool.annotations.open_world_hint is False
        assert not any(line.startswith(" ") for line in tool.description.splitlines())  # dedented for the model
    assert tools["kb_search"].annotations.read_only_hint is True
    assert tools["kb_ingest"].annotations.read_only_hint is False
    k = tools["kb_search"].input_schema["properties"]["k"]
    assert (k["minimum"], k["maximum"]) == (1, 20)
    assert "hits" in tools["kb_search"].output_schema["properties"]


async def test_ingest_search_list_and_stats(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        report = await _ingest(
            client,
            {"id": "espresso", "title": "Espresso care", "content": ESPRESSO, "source": "manual.md"},
            {"id": "bees", "title": "Bees", "content": BEES},
        )
        assert [r["status"] for r in report["results"]] == ["added", "added"]

        result = await client.call_tool("kb_search", {"query": "how often to descale the espresso machine", "k": 2})
        assert not result.is_error
        data = result.structured_content
        assert data is not None and data["hits"][0]["document_id"] == "espresso"
        assert data["hits"][0]["scores"]["dense"] > 0
        assert data["hits"][0]["section"] == "Descaling"  # content is read as Markdown
        # The same JSON travels as text for clients that ignore structuredContent.
        text_blocks = [c for c in result.content if isinstance(c, TextContent)]
        assert json.loads(text_blocks[0].text) == data
        links = [c for c in result.content if isinstance(c, ResourceLink)]
        assert links and links[0].uri == "kb://documents/espresso"

        listing = (await client.call_tool("kb_list", {})).structured_content
        assert listing is not None
        assert [(d["id"], d["chunks"]) for d in listing["documents"]] == [("bees", 1), ("espresso", 1)]
        stats = (await client.call_tool("kb_stats", {})).structured_content
        assert stats is not None and (stats["documents"], stats["chunks"]) == (2, 2)
        assert stats["reranker"]["active"] is False and "not configured" in stats["reranker"]["detail"]


async def test_a_search_of_an_empty_store_says_it_is_empty_and_where(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        stats = (await client.call_tool("kb_stats", {})).structured_content
        assert stats is not None and stats["documents"] == 0
        empty = (await client.call_tool("kb_search", {"query": "how often to descale"})).structured_content
        assert empty is not None and empty["abstained"] and empty["empty"] and empty["hits"] == []
        assert empty["reason"].startswith("the knowledge base is empty") and stats["store"] in empty["reason"]

        await _ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        off_corpus = (await client.call_tool("kb_search", {"query": "who won the 1998 world cup"})).structured_content
        assert off_corpus is not None and off_corpus["abstained"] and not off_corpus["empty"]
        # Within documents that do not exist: nothing matches, but the knowledge base is not empty.
        elsewhere = await client.call_tool("kb_search", {"query": "descale", "document_ids": ["missing"]})
        assert elsewhere.structured_content is not None and not elsewhere.structured_content["empty"]
        assert "nothing in the knowledge base matches" in elsewhere.structured_content["reason"]


async def test_pages_of_one_id_become_one_paged_document(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await _ingest(
            client,
            {"id": "bees", "title": "Bees", "content": "The harvest is in late August.", "page": 2},
            {"id": "bees", "title": "Bees", "content": BEES, "page": 1},
        )
        hit = (await client.call_tool("kb_search", {"query": "when is the harvest", "k": 1})).structured_content
        assert hit is not None and (hit["hits"][0]["page"], hit["hits"][0]["page_label"]) == (2, "2")
        page = await client.read_resource("kb://documents/bees/pages/2")
        assert page.contents[0].text == "The harvest is in late August."  # type: ignore[union-attr]


async def test_resources_and_prompts(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await _ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "kb://documents/{doc_id}",
            "kb://documents/{doc_id}/pages/{number}",
            "kb://chunks/{chunk_id}",
        }
        listed = (await client.list_resources()).resources
        assert [(r.uri, r.name, r.title) for r in listed] == [("kb://documents/espresso", "espresso", "Espresso care")]
        doc = await client.read_resource(listed[0].uri)
        assert doc.contents[0].text == ESPRESSO  # type: ignore[union-attr]
        hit = (await client.call_tool("kb_search", {"query": "descale", "detail": "ids"})).structured_content
        assert hit is not None
        chunk = await client.read_resource(f"kb://chunks/{hit['hits'][0]['chunk_id']}")
        assert "citric acid" in chunk.contents[0].text  # type: ignore[union-attr]

        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {"answer_with_citations", "summarise_document"}
        prompt = await client.get_prompt("answer_with_citations", {"question": "How often to descale?"})
        assert "kb_search" in prompt.messages[0].content.text  # type: ignore[union-attr]


@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_completions_offer_document_ids_and_page_numbers(kb: KnowledgeBase, mode: str, era: str) -> None:
    async with Client(create_server(kb), mode=mode) as client:
        assert client.protocol_version == era and client.server_capabilities.completions is not None
        await _ingest(
            client,
            {"id": "espresso-guide", "title": "Espresso care", "content": ESPRESSO, "page": 1},
            {"id": "espresso-guide", "title": "Espresso care", "content": BEES, "page": 2},
            {"id": "bees", "title": "Beekeeping calendar", "content": BEES},
        )

        async def values(ref: PromptReference | ResourceTemplateReference, name: str, typed: str, **chosen: str) -> Any:
            result = await client.complete(ref, {"name": name, "value": typed}, chosen or None)
            return result.completion.values

        for uri in (DOCUMENT_URI, PAGE_URI):
            template = ResourceTemplateReference(uri=uri)
            assert await values(template, "doc_id", "esp") == ["espresso-guide"]
            assert await values(template, "doc_id", "") == ["bees", "espresso-guide"]
        # A word of the title finds the id; the id's own start comes first.
        assert await values(ResourceTemplateReference(uri=DOCUMENT_URI), "doc_id", "CARE") == ["espresso-guide"]
        assert await values(PromptReference(name="summarise_document"), "document_id", "b") == ["bees"]
        pages = ResourceTemplateReference(uri=PAGE_URI)
        assert await values(pages, "number", "", doc_id="espresso-guide") == ["1", "2"]
        assert await values(pages, "number", "2", doc_id="espresso-guide") == ["2"]
        assert await values(pages, "number", "", doc_id="missing") == []
        assert await values(ResourceTemplateReference(uri="kb://chunks/{chunk_id}"), "chunk_id", "") == []
        assert await values(PromptReference(name="answer_with_citations"), "question", "how") == []


async def test_a_handshake_client_hears_that_the_documents_changed_when_they_did(kb: KnowledgeBase) -> None:
    heard: list[ServerNotification | Exception] = []

    async def keep(message: ServerNotification | Exception) -> None:
        heard.append(message)

    document = {"id": "espresso", "title": "Espresso care", "content": ESPRESSO}
    async with Client(create_server(kb), mode="legacy", message_handler=keep) as client:
        assert (await client.list_resources()).resources == []
        await _ingest(client, document)
        assert [type(m) for m in heard] == [ResourceListChangedNotification]
        await _ingest(client, document)  # unchanged: nothing to re-read
        upload = {"filename": "bees.md", "content_base64": base64.b64encode(BEES.encode()).decode()}
        assert not (await client.call_tool("kb_upload", upload)).is_error
        assert [type(m) for m in heard] == [ResourceListChangedNotification] * 2
        assert [r.name for r in (await client.list_resources()).resources] == ["bees", "espresso"]

        workspace = {WORKSPACE_META: "c" * 32}
        ingest = await client.call_tool("kb_ingest", {"documents": [document]}, meta=workspace)
        assert not ingest.is_error
        dropped = await client.call_tool("kb_drop_workspace", {}, meta=workspace)
        assert dropped.structured_content == {"existed": True}
        assert [type(m) for m in heard] == [ResourceListChangedNotification] * 4


async def test_a_2026_client_listening_hears_that_the_documents_changed(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client, client.listen(resources_list_changed=True) as changes:
        assert client.protocol_version == "2026-07-28" and changes.honored.resources_list_changed
        await _ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        assert isinstance(await anext(changes), ResourcesListChanged)


async def test_bad_input_is_a_tool_error_the_model_can_act_on(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        too_many = await client.call_tool("kb_search", {"query": "espresso", "k": 50})
        assert too_many.is_error
        bad_id = await client.call_tool("kb_ingest", {"documents": [{"id": "../x", "title": "t", "content": "c"}]})
        assert not bad_id.is_error
        assert bad_id.structured_content is not None
        outcome = bad_id.structured_content["results"][0]
        assert outcome["status"] == "refused" and "invalid document id" in outcome["reason"]
        whitespace = await client.call_tool("kb_ingest", {"documents": [{"id": "w", "title": "t", "content": " \n "}]})
        assert whitespace.structured_content is not None
        assert whitespace.structured_content["results"][0]["status"] == "refused"
        blank = await client.call_tool("kb_search", {"query": "   "})
        assert blank.is_error and "empty" in blank.content[0].text  # type: ignore[union-attr]
        with pytest.raises(Exception, match="no document"):
            await client.read_resource("kb://documents/missing")


async def test_the_servers_own_failures_are_protocol_errors_named_in_its_log_not_tool_errors(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failure of the store or a bug is not something a model could have avoided: it is answered as
    INTERNAL_ERROR with what failed, and logged, rather than as a tool error the model is told it caused."""

    def store_gone(*_: object, **__: object) -> None:
        raise StoreError("the store's collection 'sextant_chunks' is gone (migrated?); restart to open it again")

    def bug(*_: object, **__: object) -> None:
        raise ValueError("an index out of step with the store")

    async with Client(create_server(kb)) as client:
        monkeypatch.setattr(kb, "search", store_gone)
        with caplog.at_level(logging.ERROR, logger="sextant.kb.mcp.context"), pytest.raises(MCPError) as failed:
            await client.call_tool("kb_search", {"query": "espresso"})
        assert failed.value.error.code == INTERNAL_ERROR
        assert "kb_search failed: the knowledge base's store: the store's collection" in failed.value.error.message
        assert "kb_search failed: the store" in caplog.text
        monkeypatch.setattr(kb, "documents", bug)
        with pytest.raises(MCPError) as crashed:
            await client.call_tool("kb_list", {})
        assert crashed.value.error.code == INTERNAL_ERROR
        assert "kb_list failed inside sextant-kb (ValueError: an index out of step" in crashed.value.error.message


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
    from pathlib import Path

    pdf = Path(__file__).resolve().parents[2] / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
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


async def test_the_callers_request_id_tags_the_servers_log_lines(
    kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    from sextant.contract.meta import REQUEST_ID_META
    from sextant.logs import configure_logging

    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        configure_logging("INFO", "json")
        async with Client(create_server(kb)) as client:
            await _ingest(client, {"id": "espresso", "title": "Espresso", "content": ESPRESSO})
            await client.call_tool("kb_search", {"query": "descale"}, meta={REQUEST_ID_META: "req-from-agent"})
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    searches = [line for line in lines if line["message"].startswith("kb_search")]
    assert searches and searches[-1]["request_id"] == "req-from-agent"


async def test_ann_tools_measure_and_compare_indexes_without_changing_anything(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("kb_ann_benchmark", "kb_ann_compare"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
        empty = await client.call_tool("kb_ann_benchmark", {"index": "hnsw"})
        assert empty.is_error and "ingest documents first" in empty.content[0].text  # type: ignore[union-attr]
        long_espresso = " ".join([ESPRESSO.split("\n")[1]] * 30)
        await _ingest(
            client,
            {"id": "espresso", "title": "Espresso care", "content": long_espresso},
            {"id": "bees", "title": "Bees", "content": BEES},
        )
        generation = kb.store.generation
        bench = await client.call_tool("kb_ann_benchmark", {"index": "hnsw", "k": 3, "queries": 5})
        assert not bench.is_error and bench.structured_content is not None
        report = bench.structured_content
        assert report["index"] == "hnsw" and report["vectors"] == kb.store.chunk_count()
        # Repeated text makes near-identical chunks: ties, so recall is high but need not be 1.
        assert report["recall_at_k"] >= 0.5 and report["build_seconds"] > 0 and report["memory_bytes"] > 0
        bad = await client.call_tool("kb_ann_benchmark", {"index": "annoy"})
        assert bad.is_error

        compared = await client.call_tool("kb_ann_compare", {"query": "descale the espresso machine", "k": 2})
        assert not compared.is_error and compared.structured_content is not None
        answers = {a["index"]: a for a in compared.structured_content["answers"]}
        assert set(answers) == {"chroma", "flat", "hnsw", "ivfpq", "ivfpq_rerank"}
        assert answers["flat"]["overlap_with_exact"] == 1.0
        assert answers["flat"]["hits"][0]["document_id"] == "espresso"
        assert kb.store.generation == generation  # read-only


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


def _manual_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 100), "Descale the boiler every eight weeks. Rinse it twice afterwards.")
    doc.new_page().insert_text((72, 100), "Replace the gasket when shots leak.")
    try:
        return doc.tobytes()
    finally:
        doc.close()


def _highlighted(pixel: tuple[int, ...]) -> bool:
    red, green, blue = pixel[:3]
    return red > 200 and green > 150 and blue < 120  # yellow over white paper


async def test_page_image_renders_the_page_with_the_quote_highlighted(kb: KnowledgeBase) -> None:
    import base64

    import pymupdf
    from mcp_types import ImageContent

    async with Client(create_server(kb)) as client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["kb_page_image"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.output_schema is not None and "highlights" in tool.output_schema["properties"]
        encoded = base64.b64encode(_manual_pdf()).decode()
        await client.call_tool("kb_upload", {"filename": "manual.pdf", "content_base64": encoded})

        quote = "Descale the boiler\n every   eight weeks."  # whitespace as a passage may have it
        result = await client.call_tool("kb_page_image", {"document_id": "manual", "page": 1, "quote": quote})
        assert not result.is_error, result.content
        info = result.structured_content
        assert info is not None and (info["highlights"], info["matched"]) == (1, "quote")
        image = next(c for c in result.content if isinstance(c, ImageContent))
        assert image.mime_type == "image/png"
        pixmap = pymupdf.Pixmap(base64.b64decode(image.data))
        assert (pixmap.width, pixmap.height) == (info["width_px"], info["height_px"]) == (1190, 1684)
        x0, y0, x1, y1 = info["rects_px"][0]
        inside = [pixmap.pixel(int(x0 + (x1 - x0) * f), int(y0 + 3)) for f in (0.1, 0.5, 0.9)]
        assert all(_highlighted(p) for p in inside), inside
        assert not _highlighted(pixmap.pixel(int(x0), int(y1) + 40))  # the paper below it is not

        # Only its longest sentence is on the page: that much is highlighted. No quote: nothing is.
        spill = "Descale the boiler every eight weeks. Then see overleaf."
        partial = await client.call_tool("kb_page_image", {"document_id": "manual", "page": 1, "quote": spill})
        assert partial.structured_content is not None and partial.structured_content["matched"] == "sentence"
        plain = await client.call_tool("kb_page_image", {"document_id": "manual", "page": 2})
        assert plain.structured_content is not None
        assert (plain.structured_content["highlights"], plain.structured_content["matched"]) == (0, "no_quote")


async def test_page_image_says_why_there_is_none(kb: KnowledgeBase) -> None:
    import base64

    from mcp.shared.exceptions import MCPError

    async with Client(create_server(kb)) as client:
        await client.call_tool(
            "kb_upload", {"filename": "manual.pdf", "content_base64": base64.b64encode(_manual_pdf()).decode()}
        )
        await _ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO, "source": "manual.md"})
        for arguments, why in [
            ({"document_id": "manual", "page": 3}, "has no page 3"),
            ({"document_id": "espresso", "page": 1}, "only PDFs have them"),
            ({"document_id": "missing", "page": 1}, "no document with id 'missing'"),
        ]:
            result = await client.call_tool("kb_page_image", arguments)
            text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
            assert result.is_error and "no page image: " in text and why in text, text
        # A kept original that cannot be rendered is the server's failure, not the caller's: a protocol error.
        kept = kb.originals.get("manual")
        assert kept is not None
        kept.write_bytes(b"%PDF-1.7 damaged beyond repair")
        with pytest.raises(MCPError, match="could not be rendered"):
            await client.call_tool("kb_page_image", {"document_id": "manual", "page": 1})
