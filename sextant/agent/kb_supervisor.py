"""Keeps the knowledge-base process answering: notices when it dies or hangs, says so, restarts it.

A dead ``sextant-kb`` must never read as an empty knowledge base. The supervisor probes the process every
``probe_every_s``; a probe that fails (the process exited) or goes unanswered for ``answer_within_s`` marks
the knowledge base down at once, so every call is refused with the reason until a new process answers. A
process that exited is restarted straight away, one that hangs after ``restart_hung_after_s`` (a long
ingest keeps the server's event loop free, so a hang is not mere load). Only starts that never answer back
off, from ``BACKOFF_FIRST_S`` to ``BACKOFF_MAX_S``: a process that served and then died is not a crash loop,
and making its replacement wait would only lengthen the outage.

The first start is not retried: a knowledge base that cannot start at all is a configuration error
(``SEXTANT_KB_COMMAND``, the store path), and the agent should fail loudly instead of serving 503s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Any

from sextant.agent.kb_client import DiscoveredTool, KbClient, KbScope, KbUnavailable, ToolOutcome
from sextant.llm.chat import ToolSpec

log = logging.getLogger(__name__)

PROBE_EVERY_S = 0.5
ANSWER_WITHIN_S = 1.5
RESTART_HUNG_AFTER_S = 10.0
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 30.0


class KbSupervisor:
    """The knowledge base as the app sees it: ``KbClient``'s calls, on whichever process is alive now.

    ``server`` is what ``KbClient`` accepts (stdio parameters in the product); each start makes a new
    client from it. Use as an async context manager: entering waits for the first process to answer.
    """

    def __init__(
        self,
        server: Any,
        *,
        probe_every_s: float = PROBE_EVERY_S,
        answer_within_s: float = ANSWER_WITHIN_S,
        restart_hung_after_s: float = RESTART_HUNG_AFTER_S,
    ) -> None:
        self._server = server
        self._probe_every_s = probe_every_s
        self._answer_within_s = answer_within_s
        self._restart_hung_after_s = restart_hung_after_s
        self._client: KbClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.Future[None] | None = None
        self.tools: dict[str, DiscoveredTool] = {}
        self.reason: str | None = "the knowledge base is starting"
        self.restarts = 0

    @property
    def connected(self) -> bool:
        return self._client is not None and self.reason is None

    async def __aenter__(self) -> KbSupervisor:
        self._first = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._supervise(), name="sextant-kb supervisor")
        await self._first
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def offered(self) -> list[ToolSpec]:
        return [t.spec for t in self.tools.values() if t.offered]

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome:
        return await self._live().call(name, arguments, scope)

    async def read(self, uri: str, scope: KbScope) -> str:
        return await self._live().read(uri, scope)

    def ensure_connected(self) -> None:
        """Raise ``KbUnavailable``, with the reason, while the knowledge base is down."""
        if not self.connected:
            raise KbUnavailable(self.reason or "the knowledge base is not running")

    def _live(self) -> KbClient:
        self.ensure_connected()
        assert self._client is not None
        return self._client

    async def _supervise(self) -> None:
        delay = BACKOFF_FIRST_S
        while True:
            started = False
            try:
                async with KbClient(self._server) as client:
                    started = True
                    self._up(client)
                    delay = BACKOFF_FIRST_S
                    self._down(await self._watch(client))
            except Exception as exc:  # a failed start, or a dead process that did not close cleanly
                if not started:
                    self._down(f"the knowledge base could not be started: {exc}")
                else:
                    log.warning("the dead knowledge base did not close cleanly: %s", exc)
            self._client = None
            assert self._first is not None
            if not self._first.done():
                self._first.set_exception(KbUnavailable(self.reason or "the knowledge base did not start"))
                return
            log.warning("restarting the knowledge base in %.2f s", delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)
            self.restarts += 1

    async def _watch(self, client: KbClient) -> str:
        """Probe until the process is gone or has hung too long; why it is to be restarted."""
        loop = asyncio.get_running_loop()
        silent_since: float | None = None
        while True:
            await asyncio.sleep(self._probe_every_s)
            try:
                async with asyncio.timeout(self._answer_within_s):
                    await client.probe()
            except TimeoutError:
                now = loop.time()
                if silent_since is None:
                    silent_since = now
                    self._down(f"the knowledge base stopped answering (no reply within {self._answer_within_s:g} s)")
                elif now - silent_since >= self._restart_hung_after_s:
                    return f"the knowledge base did not answer for {now - silent_since:.0f} s"
                continue
            except Exception as exc:
                return f"the knowledge-base process exited ({exc})"
            if silent_since is not None:
                silent_since = None
                self._up(client)

    def _up(self, client: KbClient) -> None:
        self._client, self.tools, self.reason = client, client.tools, None
        if self._first is not None and not self._first.done():
            self._first.set_result(None)
        else:
            log.warning("the knowledge base is answering again (restarts so far: %d)", self.restarts)

    def _down(self, reason: str) -> None:
        if reason != self.reason:
            log.error("%s; questions and uploads get 503 until it answers again", reason)
        self.reason = reason
