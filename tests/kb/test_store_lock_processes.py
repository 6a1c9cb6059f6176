"""One store, several real processes: what the shell adds shows in a running ``sextant-kb``, and nothing errors.

Issue 51's scenario as a person meets it: Claude Desktop's ``sextant-kb`` (a stdio server, kept running) and
``sextant-ingest`` / ``sextant-forget`` in a shell, on one store folder.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.kb.kb_process import server_command, server_environment, tool_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ALPHA = "# Alpha\n\nThe alpha release shipped the command palette and the Index Lab.\n"
FELINE = "# Feline\n\nOur tabby cat sleeps on the warm windowsill every afternoon.\n"
VISIBLE_WITHIN_S = 2.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def stdio_server(home: Path) -> AsyncIterator[Client]:
    """A ``sextant-kb`` started as Claude Desktop starts it: a child on stdio, the store named in its environment."""
    params = StdioServerParameters(command=server_command(), env=server_environment(home), cwd=str(home))
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


def shell(home: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``command`` run from a shell on the same store, as a person runs it."""
    return subprocess.run(
        [tool_command(command), *args],
        env=server_environment(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


async def search(client: Client, query: str) -> dict[str, Any]:
    result = await client.call_tool("kb_search", {"query": query, "k": 5})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def until(check: Any, within_s: float) -> float:
    """Seconds until ``check()`` (an async predicate) holds, polled; fails after ``within_s``."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > within_s:
            raise AssertionError(f"not seen within {within_s} s")
    return time.monotonic() - started


async def test_a_document_ingested_from_the_shell_is_found_by_a_running_server_by_meaning_and_by_words(
    tmp_path: Path,
) -> None:
    (tmp_path / "alpha.md").write_text(ALPHA, encoding="utf-8")
    (tmp_path / "feline.md").write_text(FELINE, encoding="utf-8")
    assert shell(tmp_path, "sextant-ingest", "alpha.md").returncode == 0
    async with stdio_server(tmp_path) as client:
        assert (await search(client, "what shipped in the alpha release"))["hits"][0]["document_id"] == "alpha"
        added = shell(tmp_path, "sextant-ingest", "feline.md")
        assert added.returncode == 0, added.stderr

        async def by_meaning() -> bool:
            found = await search(client, "Where does the kitty nap?")
            return not found["abstained"] and found["hits"][0]["document_id"] == "feline"

        async def by_words() -> bool:
            hits = (await search(client, "tabby cat windowsill"))["hits"]
            return bool(hits) and hits[0]["document_id"] == "feline" and hits[0]["scores"]["bm25_rank"] == 1

        await until(by_meaning, VISIBLE_WITHIN_S)
        await until(by_words, VISIBLE_WITHIN_S)
        listed = await client.call_tool("kb_list", {})
        assert {d["id"] for d in (listed.structured_content or {})["documents"]} == {"alpha", "feline"}

        forgot = shell(tmp_path, "sextant-forget", "feline", "-y")
        assert forgot.returncode == 0, forgot.stderr

        async def gone() -> bool:
            hits = (await search(client, "tabby cat windowsill"))["hits"]
            return all(h["document_id"] != "feline" for h in hits)

        await until(gone, VISIBLE_WITHIN_S)
        stats = await client.call_tool("kb_stats", {})
        assert (stats.structured_content or {})["followed_writes"] >= 2


async def test_two_servers_and_the_shell_write_at_once_and_every_write_is_kept(tmp_path: Path) -> None:
    """Two running servers ingest through MCP while the shell ingests a folder: no write is lost, none errors."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for n in range(6):
        (folder / f"shell-{n}.md").write_text(f"# Shell {n}\n\nShell note {n} about harbour pilot {n}.\n", "utf-8")
    async with stdio_server(tmp_path) as first, stdio_server(tmp_path) as second:
        shelled = subprocess.Popen(
            [tool_command("sextant-ingest"), str(folder), "-r"],
            env=server_environment(tmp_path),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6):
            for name, client in (("first", first), ("second", second)):
                content = f"{name} server note {n} about lantern keeper {n}."
                doc = {"id": f"{name}-{n}", "title": f"{name} {n}", "content": content}
                result = await client.call_tool("kb_ingest", {"documents": [doc]})
                assert not result.is_error, result.content
        _, err = shelled.communicate(timeout=300)
        assert shelled.returncode == 0, err
        expected = {f"{who}-{n}" for who in ("first", "second", "shell") for n in range(6)}
        for client in (first, second):
            listed = await client.call_tool("kb_list", {})
            assert {d["id"] for d in (listed.structured_content or {})["documents"]} == expected

            async def all_found(client: Client = client) -> bool:
                for doc_id in sorted(expected):
                    who, n = doc_id.split("-")
                    words = "harbour pilot" if who == "shell" else "lantern keeper"
                    hits = (await search(client, f"{who} note {n} about {words} {n}"))["hits"]
                    if not hits or hits[0]["document_id"] != doc_id or hits[0]["scores"]["dense_rank"] is None:
                        return False
                return True

            await until(all_found, VISIBLE_WITHIN_S)
    assert os.listdir(tmp_path / "store")  # the store folder holds the one store all three wrote to
