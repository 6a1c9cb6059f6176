"""A PDF with an unreadable page, uploaded through the MCP server: stored without the page, which the result names."""

from __future__ import annotations

import base64

import pymupdf
import pytest
from mcp import Client

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from tests.kb.loaders.pdf_factory import FILLER, damage_page, new_page, paragraph, to_bytes

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the upload is parsed in a worker process


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _manual(damaged: list[int]) -> str:
    doc = pymupdf.open()
    for number, topic in enumerate(["descaling", "backflushing", "grinding"], start=1):
        paragraph(new_page(doc), (72, 72, 540, 200), f"Page {number} is about {topic}. {FILLER}")
    for index in damaged:
        damage_page(doc, index)
    return base64.b64encode(to_bytes(doc)).decode()


async def test_kb_upload_stores_the_readable_pages_and_names_the_one_left_out(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        result = await client.call_tool("kb_upload", {"filename": "manual.pdf", "content_base64": _manual([1])})
        assert result.structured_content is not None
        [outcome] = result.structured_content["results"]
        assert outcome["status"] == "added" and outcome["pages"] == 3
        [skipped] = outcome["skipped_pages"]
        assert (skipped["number"], skipped["label"]) == (2, "2") and "zlib error" in skipped["reason"]

        ruined = await client.call_tool("kb_upload", {"filename": "ruined.pdf", "content_base64": _manual([0, 1, 2])})
        assert ruined.structured_content is not None
        [refused] = ruined.structured_content["results"]
        assert refused["status"] == "refused" and refused["reason"].startswith("no page could be read: page 1: ")
    text = kb.document("manual").text
    assert "descaling" in text and "grinding" in text and "backflushing" not in text
    assert kb.page_text("manual", 2) == ""
    assert [d.id for d in kb.documents()] == ["manual"]
