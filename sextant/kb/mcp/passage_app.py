"""The cited page inside the host (MCP Apps, ``io.modelcontextprotocol/ui``): a ``ui://`` view that ``kb_search``
names, which shows a hit's passage with the query's words marked and, for a PDF, the page with the passage
highlighted (``kb_page_image``, called through the host), its page label, and the page's ``kb://`` address.

The view is one HTML file with its script inline: it loads nothing and reaches the server only through the host's
bridge, so it runs under the specification's default content security policy (no network).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from mcp_types import Resource

from sextant.kb.mcp.context import Server

PASSAGE_APP_URI: Final = "ui://sextant-kb/passage"
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
PAGE: Final = Path(__file__).with_name("app") / "passage.html"
TITLE: Final = "Cited passage and page"
RESOURCE_META: Final = {"ui": {"prefersBorder": True}}


def tool_meta() -> dict[str, Any]:
    """A tool's ``_meta`` naming the view: the specification's key, and the flat one hosts from before it still read."""
    return {"ui": {"resourceUri": PASSAGE_APP_URI}, "ui/resourceUri": PASSAGE_APP_URI}


def register(server: Server) -> None:
    """Add the view as a resource of ``server``."""

    @server.resource(PASSAGE_APP_URI, name="passage", title=TITLE, mime_type=APP_MIME_TYPE, meta=RESOURCE_META)
    def passage_app() -> str:
        """Shows a search hit's passage, its words marked, and for a PDF the highlighted page."""
        return PAGE.read_text(encoding="utf-8")


def listed() -> Resource:
    """The view as ``resources/list`` shows it."""
    return Resource(uri=PASSAGE_APP_URI, name="passage", title=TITLE, mime_type=APP_MIME_TYPE, meta=RESOURCE_META)
