"""A refusal (``KnowledgeBaseError``) is what a caller can fix: every tool answers it as a tool error in its own
words, while the same words in any other exception are the server's failure."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from sextant.kb.chroma_client import StoreError
from sextant.kb.documents import LoadError
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.refusal import REFUSALS, KnowledgeBaseError, refused
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


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (LoadError("tea.pdf", "not a readable PDF"), "not a readable PDF"),  # the loader's reason, not the file name
        (KnowledgeBaseError(WORDS), WORDS),
        (StoreError("cannot open the Chroma store"), "cannot open the Chroma store"),
    ],
)
def test_a_document_refused_for_any_refusal_is_an_outcome_with_its_reason(exc: Exception, reason: str) -> None:
    assert isinstance(exc, REFUSALS)
    outcome = refused("tea", exc, title="Tea")
    assert (outcome.id, outcome.title, outcome.status, outcome.reason) == ("tea", "Tea", "refused", reason)
