"""Real processes on one store, driven from synchronous code: stdio ``sextant-kb`` servers and the shell commands.

The servers are what Claude Desktop or Claude Code start (a child on stdio, the store named in its environment),
each held open through an anyio blocking portal so that a Hypothesis state machine (synchronous) can call them,
kill them with SIGKILL and start them again. The shell commands run as a person runs them. Used by
``tests/kb/test_store_lock_processes.py`` and ``bench/shared_store.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from concurrent.futures import Future
from contextlib import AbstractContextManager, ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.from_thread
import psutil
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextResourceContents

from tests.kb.kb_process import server_command, server_environment, tool_command

CALL_TIMEOUT_S = 300


@dataclass
class Server:
    """One running ``sextant-kb`` and the client session held open on it."""

    client: Client
    pid: int
    context: AbstractContextManager[Client]


class Fleet:
    """Processes on the store under ``home`` (``SEXTANT_CHROMA_DIR=home/store``, plus ``extra_env``)."""

    def __init__(self, home: Path, extra_env: dict[str, str] | None = None) -> None:
        self.home = home
        self.env = {**server_environment(home), **(extra_env or {})}
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        self.servers: list[Server | None] = []

    def close(self) -> None:
        for n in range(len(self.servers)):
            self.stop(n)
        self._stack.close()

    # --- servers ------------------------------------------------------------------------------------

    def start(self, n: int) -> None:
        """Start server ``n`` (again) and wait until it has listed its tools."""
        while len(self.servers) <= n:
            self.servers.append(None)
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        params = StdioServerParameters(command=server_command(), env=self.env, cwd=str(self.home))
        context = self.portal.wrap_async_context_manager(Client(params, read_timeout_seconds=CALL_TIMEOUT_S))
        client = context.__enter__()
        started = [
            p.pid
            for p in psutil.Process().children(recursive=True)
            if p.pid not in before and "sextant-kb" in " ".join(p.cmdline())
        ]
        assert len(started) == 1, f"expected one new sextant-kb process, found {started}"
        self.servers[n] = Server(client, started[0], context)

    def stop(self, n: int) -> None:
        """Close server ``n``'s session (the server exits with its stdin); a server already killed is only
        forgotten."""
        server, self.servers[n] = self.servers[n], None
        if server is None:
            return
        # A session whose process was killed does not close cleanly; it is gone either way.
        with suppress(Exception):
            server.context.__exit__(None, None, None)

    def kill(self, n: int) -> None:
        """SIGKILL server ``n``, as an operating system or a crash would end it, and forget its session."""
        server = self.servers[n]
        assert server is not None
        os.kill(server.pid, signal.SIGKILL)
        self.stop(n)  # the session's close waits for the process to be gone

    def call(self, n: int, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        server = self.servers[n]
        assert server is not None
        return self.portal.call(server.client.call_tool, tool, arguments)

    def call_soon(self, n: int, tool: str, arguments: dict[str, Any]) -> Future[CallToolResult]:
        """Start a call and return at once (to kill the server under it)."""
        server = self.servers[n]
        assert server is not None
        return self.portal.start_task_soon(server.client.call_tool, tool, arguments)

    def read(self, n: int, uri: str) -> str | None:
        """A resource's text through server ``n``; None when the server says there is no such resource."""
        server = self.servers[n]
        assert server is not None
        try:
            result = self.portal.call(server.client.read_resource, uri)
        except MCPError as exc:
            if exc.error.code == INVALID_PARAMS:  # the SDK's answer for a resource that does not exist
                return None
            raise
        return "\n".join(c.text for c in result.contents if isinstance(c, TextResourceContents))

    def running(self) -> list[int]:
        return [n for n, s in enumerate(self.servers) if s is not None]

    # --- the shell ----------------------------------------------------------------------------------

    def shell(self, command: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``command`` to its end, as a person runs it from a shell on the same store."""
        return subprocess.run(
            [tool_command(command), *args],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )

    def shell_soon(self, command: str, *args: str) -> subprocess.Popen[str]:
        """Start ``command`` and return at once (to run beside others, or to kill)."""
        return subprocess.Popen(
            [tool_command(command), *args],
            env=self.env,
            cwd=self.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
