"""What every tool shares: bad input as a tool error, the server's own failures as protocol errors, the caller's
request id in the log."""

from __future__ import annotations

import json
import logging

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
)

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.kb.store import StoreError
from tests.kb.mcp.server_client import ESPRESSO, ingest

pytestmark = pytest.mark.anyio


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
            await ingest(client, {"id": "espresso", "title": "Espresso", "content": ESPRESSO})
            await client.call_tool("kb_search", {"query": "descale"}, meta={REQUEST_ID_META: "req-from-agent"})
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    searches = [line for line in lines if line["message"].startswith("kb_search")]
    assert searches and searches[-1]["request_id"] == "req-from-agent"
