"""What the tests of the MCP server's modules share: documents, and an ingest through the tools."""

from __future__ import annotations

from typing import Any

from mcp import Client

ESPRESSO = "## Descaling\nDescale the espresso machine every eight weeks with a citric acid solution."
BEES = "## Spring\nIn early spring the beekeeper checks that the queen is laying and that honey stores last."


async def ingest(client: Client, *docs: dict[str, Any]) -> dict[str, Any]:
    """``kb_ingest`` of ``docs``, which must succeed; its structured result."""
    result = await client.call_tool("kb_ingest", {"documents": list(docs)})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content
