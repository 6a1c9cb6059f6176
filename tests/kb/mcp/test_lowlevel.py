"""Completions and the resource list, answered for the workspace each request names."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp_types import (
    PromptReference,
    ResourceTemplateReference,
)

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import DOCUMENT_URI, PAGE_URI, create_server
from tests.kb.mcp.server_client import BEES, ESPRESSO, ingest

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_completions_offer_document_ids_and_page_numbers(kb: KnowledgeBase, mode: str, era: str) -> None:
    async with Client(create_server(kb), mode=mode) as client:
        assert client.protocol_version == era and client.server_capabilities.completions is not None
        await ingest(
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
