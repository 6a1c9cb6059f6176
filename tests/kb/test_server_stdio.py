"""The real `sextant-kb` process over stdio with the official client: the boundary itself is tested."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import ResourceTemplateReference

from sextant.kb.server import DOCUMENT_URI
from tests.kb.kb_process import server_command, server_environment

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_stdio_process_initializes_lists_ingests_and_searches(tmp_path: Path) -> None:
    command, args = server_command(), []
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

    command, args = server_command(), []
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
