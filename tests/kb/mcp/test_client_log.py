"""The server's log lines reach the client whose call they belong to, at the level that client asked for.

Real processes: a ``sextant-kb`` on stdio, and ``sextant-ingest`` writing to its store from a shell; the search
after the write follows it and logs so (INFO), which is the line a client hears.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import EmptyResult, LoggingMessageNotificationParams

from tests.kb.kb_process import server_command, server_environment, tool_command

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    # The logging capability this tests is deprecated as of 2026-07-28 (SEP-2577): both eras still use it.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

FOLLOWED = "followed another process's writes"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _shell_ingest(home: Path, name: str, text: str) -> None:
    path = home / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [tool_command("sextant-ingest"), str(path)],
        env=server_environment(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


async def _search(client: Client) -> None:
    assert not (await client.call_tool("kb_search", {"query": "tabby cat", "k": 1})).is_error


class Heard:
    """The client's logging callback: every line it heard."""

    def __init__(self) -> None:
        self.lines: list[LoggingMessageNotificationParams] = []

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.lines.append(params)

    def followed(self) -> list[str]:
        return [str(line.data) for line in self.lines if FOLLOWED in str(line.data)]


def _server(home: Path) -> StdioServerParameters:
    env = server_environment(home, log_level="INFO")
    return StdioServerParameters(command=server_command(), env=env, cwd=str(home))


async def test_a_handshake_client_hears_the_lines_at_or_above_the_level_it_set(tmp_path: Path) -> None:
    heard = Heard()
    async with Client(_server(tmp_path), read_timeout_seconds=120, mode="legacy", logging_callback=heard) as client:
        assert client.server_capabilities.logging is not None
        # Before it sets a level, a client hears warnings and worse only.
        _shell_ingest(tmp_path, "one", "Our tabby cat sleeps on the warm windowsill.")
        await _search(client)
        assert heard.followed() == []
        assert isinstance(await client.set_logging_level("info"), EmptyResult)
        _shell_ingest(tmp_path, "two", "The tabby cat chases moths at dusk.")
        await _search(client)
        (followed,) = heard.followed()
        assert [line.level for line in heard.lines if FOLLOWED in str(line.data)] == ["info"]
        assert "chunks indexed" in followed
        # A level above the line's silences it again, for the rest of the connection.
        await client.set_logging_level("warning")
        _shell_ingest(tmp_path, "three", "A tabby cat has an M on its forehead.")
        await _search(client)
        assert len(heard.followed()) == 1


async def test_a_2026_client_hears_the_lines_only_for_requests_that_opt_in(tmp_path: Path) -> None:
    heard = Heard()
    params = _server(tmp_path)
    opted: dict[str, Any] = {"read_timeout_seconds": 120, "logging_callback": heard}
    async with Client(params, **opted, log_level="info") as client:
        assert client.protocol_version == "2026-07-28"
        _shell_ingest(tmp_path, "one", "Our tabby cat sleeps on the warm windowsill.")
        await _search(client)
        assert len(heard.followed()) == 1
        with pytest.raises(MCPError, match="Method not found"):  # removed in 2026-07-28
            await client.set_logging_level("debug")
    async with Client(params, **opted) as client:
        _shell_ingest(tmp_path, "two", "The tabby cat chases moths at dusk.")
        await _search(client)
        assert len(heard.followed()) == 1  # no opt-in, no line
