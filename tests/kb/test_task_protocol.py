"""Long ingests as MCP tasks, through the SDK's in-memory client in both protocol eras.

2026-07-28 (the tasks extension): a client that declares it gets a task for kb_ingest/kb_upload and polls
tasks/get. 2025-11-25 (experimental tasks): a client that asks with ``task`` gets one, and reads tasks/result.
"""

from __future__ import annotations

import base64
from functools import partial

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult

from sextant.contract.tasks import TASKS_EXTENSION, IngestProgress
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import TASK_TOOLS, create_server
from tests.kb import task_client
from tests.kb.task_client import Tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_2026_client_gets_a_task_polls_its_progress_and_reads_the_plain_result(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb), extensions=[Tasks()]) as client:
        assert client.server_capabilities.extensions == {TASKS_EXTENSION: {}}
        plain = await client.session.call_tool("kb_list", {}, allow_claimed=True)  # no ingest: never a task
        assert isinstance(plain, CallToolResult)
        created = await task_client.create(client, "kb_ingest", {"documents": task_client.documents(6)})
        assert created.status == "working" and created.ttl_ms and created.poll_interval_ms
        seen: list[IngestProgress] = []
        ended = await task_client.poll(partial(task_client.get, client.session, created.task_id), seen=seen)
        assert ended.status == "completed" and ended.error is None and ended.result is not None
        assert [r.status for r in task_client.report_of(ended.result).results] == ["added"] * 6
        assert seen[-1] == IngestProgress(documents_done=6, documents_total=6, chunks_done=6)
        assert all(p.documents_total in (0, 6) for p in seen)  # 0 only before the ingest has begun
        assert "6 of 6 documents" in (ended.status_message or "")
        await task_client.update(client, created.task_id, {"never-asked": {"action": "accept"}})  # ignored
        await task_client.assert_whole(client, 6)
        # The extension's own resolver polls to the end, so call_tool returns the plain result as before.
        resolved = await client.call_tool("kb_ingest", {"documents": task_client.documents(2, "more")})
        assert [r.status for r in task_client.report_of(resolved).results] == ["added", "added"]


async def test_a_2026_cancel_stops_between_documents_and_leaves_only_whole_ones(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb), extensions=[Tasks()]) as client:
        created = await task_client.create(client, "kb_ingest", {"documents": task_client.documents(100)})
        fetch = partial(task_client.get, client.session, created.task_id)
        await task_client.poll(fetch, documents_done=1)
        await task_client.cancel(client, created.task_id)
        ended = await fetch()
        done = task_client.progress_of(ended).documents_done
        assert ended.status == "cancelled" and ended.result is None and 1 <= done < 100
        await task_client.assert_whole(client, done)
        with pytest.raises(MCPError) as again:
            await task_client.cancel(client, created.task_id)
        assert again.value.error.code == INVALID_PARAMS


async def test_without_the_extension_a_2026_call_is_plain_and_task_calls_are_refused(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        task_client.report_of(await client.call_tool("kb_ingest", {"documents": task_client.documents(1)}))
        with pytest.raises(MCPError) as refused:
            await task_client.get(client.session, "any")
        assert refused.value.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    async with Client(create_server(kb), extensions=[Tasks()]) as client:
        for verb in (partial(task_client.get, client.session), partial(task_client.update, client, responses={})):
            with pytest.raises(MCPError) as unknown:
                await verb("never-issued")
            assert unknown.value.error.code == INVALID_PARAMS


async def test_a_tool_error_completes_a_2026_task_and_fails_a_2025_one(kb: KnowledgeBase) -> None:
    bad = {"filename": "x.md", "content_base64": "not base64!"}
    async with Client(create_server(kb), extensions=[Tasks()]) as client:
        created = await task_client.create(client, "kb_upload", bad)
        ended = await task_client.poll(partial(task_client.get, client.session, created.task_id))
        assert ended.status == "completed" and ended.result is not None and ended.result["isError"] is True
    async with Client(create_server(kb), mode="legacy") as client:
        task = await task_client.create_legacy(client, "kb_upload", bad)
        result = await task_client.result_legacy(client, task.task_id)
        assert result.is_error and "base64" in str(result.content)
        failed = await task_client.get_legacy(client, task.task_id)
        assert failed.status == "failed" and "base64" in (failed.status_message or "")


async def test_a_2025_client_sees_the_capability_and_task_support_and_reads_tasks_result(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb), mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        tasks = client.server_capabilities.tasks
        assert tasks is not None and tasks.requests and tasks.requests.tools and tasks.requests.tools.call
        tools = {t.name: t for t in (await client.list_tools()).tools}
        supported = {name for name, t in tools.items() if t.execution and t.execution.task_support == "optional"}
        assert supported == TASK_TOOLS
        assert all(t.annotations and t.output_schema for t in tools.values())  # typed and annotated as before

        plain = await client.call_tool("kb_ingest", {"documents": task_client.documents(1, "plain")})
        task_client.report_of(plain)  # no task asked: the plain result
        with pytest.raises(MCPError) as forbidden:  # only the tools that say taskSupport "optional" run as tasks
            await task_client.create_legacy(client, "kb_search", {"query": "heron"})
        assert forbidden.value.error.code == METHOD_NOT_FOUND
        task = await task_client.create_legacy(
            client, "kb_ingest", {"documents": task_client.documents(4)}, ttl_ms=120_000
        )
        assert task.status == "working" and task.ttl == 120_000
        result = await task_client.result_legacy(client, task.task_id)  # waits for the end
        assert [r.status for r in task_client.report_of(result).results] == ["added"] * 4
        assert result.meta == {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        ended = await task_client.get_legacy(client, task.task_id)
        assert ended.status == "completed"
        assert task_client.progress_of(ended) == IngestProgress(documents_done=4, documents_total=4, chunks_done=4)
        assert [t.task_id for t in await task_client.list_legacy(client)] == [task.task_id]
        await task_client.assert_whole(client, 4)


async def test_a_2025_cancel_answers_cancelled_and_leaves_only_whole_documents(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb), mode="legacy") as client:
        task = await task_client.create_legacy(client, "kb_ingest", {"documents": task_client.documents(100)})
        await task_client.poll(partial(task_client.get_legacy, client, task.task_id), documents_done=1)
        cancelled = await task_client.cancel_legacy(client, task.task_id)
        assert cancelled.status == "cancelled"  # that revision: cancelled before the answer
        with pytest.raises(MCPError, match="cancelled"):
            await task_client.result_legacy(client, task.task_id)
        await task_client.assert_whole(
            client, task_client.progress_of(await task_client.get_legacy(client, task.task_id)).documents_done
        )


async def test_a_kb_upload_runs_as_a_task_too(kb: KnowledgeBase) -> None:
    upload = {"filename": "heron.md", "content_base64": base64.b64encode(b"# Herons\nHerons nest in reeds.").decode()}
    async with Client(create_server(kb), extensions=[Tasks()]) as client:
        created = await task_client.create(client, "kb_upload", upload)
        ended = await task_client.poll(partial(task_client.get, client.session, created.task_id))
        assert ended.status == "completed" and ended.result is not None
        assert [(r.id, r.status) for r in task_client.report_of(ended.result).results] == [("heron", "added")]
        assert task_client.progress_of(ended) == IngestProgress(documents_done=1, documents_total=1, chunks_done=1)
