"""The MCP App view: named by kb_search, served as a ``ui://`` resource, and self-contained (no network of its own).

Its behaviour inside a host is tested in headless Chromium (``frontend/e2e/mcp-app.e2e.mjs``).
"""

from __future__ import annotations

import re

import pytest
from mcp import Client

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.mcp.passage_app import APP_MIME_TYPE, PASSAGE_APP_URI
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio


async def test_kb_search_names_the_view_and_the_view_is_served_as_an_mcp_app(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        (search,) = [tool for tool in (await client.list_tools()).tools if tool.name == "kb_search"]
        assert search.meta is not None and search.meta["ui"]["resourceUri"] == PASSAGE_APP_URI
        assert search.meta["ui/resourceUri"] == PASSAGE_APP_URI  # the flat key of hosts from before the spec
        (content,) = (await client.read_resource(PASSAGE_APP_URI)).contents
        assert content.mime_type == APP_MIME_TYPE == "text/html;profile=mcp-app"
        assert content.meta == {"ui": {"prefersBorder": True}}
        page = content.text  # type: ignore[union-attr]
        assert page.startswith("<!DOCTYPE html>") and '"ui/initialize"' in page and "kb_page_image" in page


async def test_the_view_loads_nothing_from_anywhere(kb: KnowledgeBase) -> None:
    """Under the specification's default content security policy a view may load nothing: all of it is inline."""
    async with Client(create_server(kb)) as client:
        page = (await client.read_resource(PASSAGE_APP_URI)).contents[0].text  # type: ignore[union-attr]
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=\"(?!data:)", page)
    assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|EventSource|importScripts)\s*\(", page)
    assert "innerHTML" not in page  # passages are shown as text, never parsed as HTML
