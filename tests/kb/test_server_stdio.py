"""The real `sextant-kb` process over stdio with the official client: the boundary itself is tested."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import ResourceTemplateReference

from sextant.contract.tasks import IngestProgress
from sextant.kb.server import DOCUMENT_URI
from tests.kb import task_client
from tests.kb.kb_process import server_command, server_environment
from tests.kb.task_client import Tasks

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_stdio_process_initializes_lists_ingests_and_searches(tmp_path: Path) -> None:
    command, args = server_command(), list[str]()
    env = server_environment(tmp_path)
    # No working directory of its own: the server must not depend on being started in the repo.
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=120) as client:
        assert client.server_info is not None and client.server_info.name == "sextant-kb"
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {
            "kb_search",
            "kb_list",
            "kb_ingest",
            "kb_upload",
            "kb_set_overview",
            "kb_stats",
            "kb_ann_compare",
        } <= tools
        ingest = await client.call_tool(
            "kb_ingest",
            {"documents": [{"id": "tea", "title": "Tea", "content": "Oolong is partially oxidised, 8 to 85 percent."}]},
        )
        assert not ingest.is_error
        found = await client.call_tool("kb_search", {"query": "how oxidised is oolong tea", "k": 1})
        assert not found.is_error and found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "tea"
        offered = await client.complete(ResourceTemplateReference(uri=DOCUMENT_URI), {"name": "doc_id", "value": "t"})
        assert offered.completion.values == ["tea"]


def test_stdout_carries_nothing_but_json_rpc(tmp_path: Path) -> None:
    """Model loading, logging and warnings go to stderr; every stdout line is a protocol message."""
    import json
    import subprocess

    command, args = server_command(), list[str]()
    env = server_environment(tmp_path, log_level="DEBUG")
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    messages: list[dict[str, object]] = []
    with subprocess.Popen(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        for message in (initialize, notice, listing):
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        while not any(m.get("id") == 2 for m in messages):  # stdout closes if the server dies: bounded
            line = proc.stdout.readline()
            if not line:
                break
            messages.append(json.loads(line))  # any non-JSON line on stdout fails here
        proc.stdin.close()
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    assert {m.get("id") for m in messages} >= {1, 2}
    assert "sextant" in stderr  # DEBUG logging happened, and went to stderr


async def test_stdio_ingest_runs_as_a_2026_task_with_progress_and_a_cancel_that_leaves_whole_documents(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(command=server_command(), env=server_environment(tmp_path), cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=120, extensions=[Tasks()]) as client:
        assert client.protocol_version == "2026-07-28"
        created = await task_client.create(client, "kb_ingest", {"documents": task_client.documents(5)})
        seen: list[IngestProgress] = []
        ended = await task_client.poll(partial(task_client.get, client.session, created.task_id), seen=seen)
        assert ended.status == "completed" and ended.result is not None
        assert [r.status for r in task_client.report_of(ended.result).results] == ["added"] * 5
        assert seen[-1] == IngestProgress(documents_done=5, documents_total=5, chunks_done=5)

        big = await task_client.create(client, "kb_ingest", {"documents": task_client.documents(100, "bulk")})
        fetch = partial(task_client.get, client.session, big.task_id)
        await task_client.poll(fetch, documents_done=1)
        await task_client.cancel(client, big.task_id)
        cancelled = await fetch()
        done = task_client.progress_of(cancelled).documents_done
        assert cancelled.status == "cancelled" and done < 100
        await task_client.assert_whole(client, done, "bulk")
        found = await client.call_tool("kb_search", {"query": "where did the heron nest, pond 3", "k": 1})
        assert found.structured_content is not None and found.structured_content["hits"][0]["document_id"] == "note-3"


async def test_stdio_ingest_runs_as_a_2025_task_read_with_tasks_result(tmp_path: Path) -> None:
    params = StdioServerParameters(command=server_command(), env=server_environment(tmp_path), cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=120, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        task = await task_client.create_legacy(client, "kb_ingest", {"documents": task_client.documents(3)})
        result = await task_client.result_legacy(client, task.task_id)
        assert [r.status for r in task_client.report_of(result).results] == ["added"] * 3
        assert [t.task_id for t in await task_client.list_legacy(client)] == [task.task_id]
        big = await task_client.create_legacy(client, "kb_ingest", {"documents": task_client.documents(100, "bulk")})
        await task_client.poll(partial(task_client.get_legacy, client, big.task_id), documents_done=1)
        assert (await task_client.cancel_legacy(client, big.task_id)).status == "cancelled"
        done = task_client.progress_of(await task_client.get_legacy(client, big.task_id)).documents_done
        await task_client.assert_whole(client, done, "bulk")
        task_client.report_of(await client.call_tool("kb_ingest", {"documents": task_client.documents(1, "plain")}))
