"""A refusal (``KnowledgeBaseError``) is what a caller can fix: every tool answers it as a tool error in its own
words, while the same words in any other exception are the server's failure."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.refusal import KnowledgeBaseError
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio

WORDS = "no document with id 'tea'; kb_list shows the ids"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("raised", [KnowledgeBaseError, RuntimeError])
async def test_only_a_refusal_is_a_tool_error(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, raised: type) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise raised(WORDS)

    monkeypatch.setattr(kb, "stats", refuse)
    async with Client(create_server(kb)) as client:
        if raised is KnowledgeBaseError:
            result = await client.call_tool("kb_stats", {})
            assert result.is_error and isinstance(result.content[0], TextContent)
            assert result.content[0].text.endswith(WORDS)  # the SDK names the tool before them
        else:
            with pytest.raises(MCPError, match="kb_stats failed inside sextant-kb"):
                await client.call_tool("kb_stats", {})
