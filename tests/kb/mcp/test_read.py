"""Reading through MCP: search, the list, statistics, a page as an image, the resources and the prompts."""

from __future__ import annotations

import base64
import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    ResourceLink,
    TextContent,
)

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from tests.kb.mcp.server_client import BEES, ESPRESSO, ingest

pytestmark = pytest.mark.anyio


async def test_ingest_search_list_and_stats(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        report = await ingest(
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

        await ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        off_corpus = (await client.call_tool("kb_search", {"query": "who won the 1998 world cup"})).structured_content
        assert off_corpus is not None and off_corpus["abstained"] and not off_corpus["empty"]
        # Within documents that do not exist: nothing matches, but the knowledge base is not empty.
        elsewhere = await client.call_tool("kb_search", {"query": "descale", "document_ids": ["missing"]})
        assert elsewhere.structured_content is not None and not elsewhere.structured_content["empty"]
        assert "nothing in the knowledge base matches" in elsewhere.structured_content["reason"]


async def test_resources_and_prompts(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        await ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO})
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "kb://documents/{doc_id}",
            "kb://documents/{doc_id}/pages/{number}",
            "kb://chunks/{chunk_id}",
        }
        listed = (await client.list_resources()).resources
        assert [(r.uri, r.name, r.title) for r in listed] == [
            ("kb://documents/espresso", "espresso", "Espresso care"),
            ("ui://sextant-kb/passage", "passage", "Cited passage and page"),
        ]
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

    async with Client(create_server(kb)) as client:
        await client.call_tool(
            "kb_upload", {"filename": "manual.pdf", "content_base64": base64.b64encode(_manual_pdf()).decode()}
        )
        await ingest(client, {"id": "espresso", "title": "Espresso care", "content": ESPRESSO, "source": "manual.md"})
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
