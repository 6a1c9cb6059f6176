"""Long ingests as tasks: a tool call that runs on after its request has been answered, polled by its id.

``IngestTasks`` holds each task's state in memory (one process; a task is not shared between two
``sextant-kb --http`` processes, so a balancer routes ``tasks/*`` by their ``Mcp-Name`` header, the task id):
who started it, where it is (documents done of the total, chunks done), and at the end its tool result or
its protocol error. A task belongs to its caller (``owner``): every read names the owner, and another
owner's task is not found, exactly as an id that was never issued.

The work is the tool call itself, run in the server's task group with the request's context variables
(the caller's token, its request id). While it runs, the tool's progress goes to the task through
``IngestReporter`` instead of to ``notifications/progress``, and cancelling is cooperative: the reporter
raises ``IngestCancelled`` at its next checkpoint, between documents or between embedding batches. A
document is written in one store commit after it has been embedded, so a cancel never leaves half of one:
the documents finished before it stay whole, the one being embedded is not written, the rest never start.
A task is forgotten ``ttl_ms`` after it ended (ttlMs, as reported, counts from its creation).
"""

from __future__ import annotations

import contextvars
import logging
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import anyio
import anyio.from_thread
from anyio.abc import TaskGroup
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ErrorData, TextContent

from sextant.contract.tasks import IngestProgress

log = logging.getLogger(__name__)

Status = Literal["working", "completed", "failed", "cancelled"]
Clock = Callable[[], datetime]
SendProgress = Callable[[float, float, str], Coroutine[Any, Any, None]]

DEFAULT_TTL_MS = 60 * 60 * 1000  # an hour to read the result; a client may ask for less (2025-11-25 `task.ttl`)
MIN_TTL_MS = 1000
MAX_WORKING = 4  # per caller: each working task holds a worker thread, and the embedder is shared anyway
POLL_INTERVAL_MS = 500  # a poll is a dict read; twice a second shows each document ending soon enough


class TaskNotFound(LookupError):
    """No task of this caller has this id (never issued, another caller's, or expired)."""


class TooManyTasks(RuntimeError):
    """The caller has as many tasks working as it may (waiting for one to end fixes it)."""


class TaskEnded(ValueError):
    """The task has already ended, so it cannot be cancelled."""


class IngestCancelled(ToolError):
    """Raised at a checkpoint of an ingest whose task was cancelled (a ToolError: the SDK logs it quietly)."""


_current: contextvars.ContextVar[IngestTask | None] = contextvars.ContextVar("sextant_ingest_task", default=None)


@dataclass(eq=False)
class IngestTask:
    """One task's state. Written by its runner (and its worker thread, under ``lock``), read by pollers."""

    id: str
    owner: str
    tool: str
    created_at: datetime
    ttl_ms: int
    updated_at: datetime
    status: Status = "working"
    progress: IngestProgress = field(default_factory=lambda: IngestProgress(documents_done=0, documents_total=0))
    result: CallToolResult | None = None
    error: ErrorData | None = None
    expires_at: datetime | None = None  # set when it ends
    cancel_requested: bool = False
    ended: anyio.Event = field(default_factory=anyio.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def message(self) -> str:
        """What a person reads on a poll: where the ingest is, or how it ended."""
        p = self.progress
        where = f"{p.documents_done} of {p.documents_total} documents, {p.chunks_done} chunks"
        if self.status == "working":
            return f"{self.tool}: {where} done" if p.documents_total else f"{self.tool}: starting"
        if self.status == "cancelled":
            return f"{self.tool}: cancelled after {where}; those documents are stored whole, no other was written"
        if self.status == "failed":
            return f"{self.tool} failed: {self.error.message if self.error else 'unknown error'}"
        if self.result is not None and self.result.is_error:
            said = " ".join(c.text for c in self.result.content if isinstance(c, TextContent))
            return f"{self.tool} ended with a tool error: {said[:500]}"
        return f"{self.tool}: done, {where}"

    @property
    def reported_ttl_ms(self) -> int:
        """ttlMs from creation: until the end plus ``ttl_ms`` once ended, ``ttl_ms`` while it works."""
        if self.expires_at is None:
            return self.ttl_ms
        return int((self.expires_at - self.created_at) / timedelta(milliseconds=1))

    def checkpoint(self) -> None:
        """Stop here if the task was cancelled.

        Raises:
            IngestCancelled: a cancel was asked for.
        """
        if self.cancel_requested:
            raise IngestCancelled(f"task {self.id} was cancelled")

    def embedded(self, done: int, total: int) -> None:
        """Chunks of the current document embedded so far (called from the worker thread)."""
        with self.lock:
            self.progress = self.progress.model_copy(update={"embedding_done": done, "embedding_total": total})
        self.checkpoint()

    def document_done(self, chunks: int) -> None:
        with self.lock:
            p = self.progress
            self.progress = p.model_copy(
                update={
                    "documents_done": p.documents_done + 1,
                    "chunks_done": p.chunks_done + chunks,
                    "embedding_done": 0,
                    "embedding_total": 0,
                }
            )
        self.checkpoint()


class IngestTasks:
    """Every caller's tasks, and the task group their work runs in (``running`` opens it)."""

    def __init__(self, *, ttl_ms: int = DEFAULT_TTL_MS, clock: Clock = lambda: datetime.now(UTC)) -> None:
        self.ttl_ms = ttl_ms
        self.clock = clock
        self._tasks: dict[str, IngestTask] = {}
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[IngestTasks]:
        """Run tasks until the server stops; a task still working then is cancelled with it."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield self
            finally:
                self._group = None
                group.cancel_scope.cancel()

    def start(
        self, owner: str, tool: str, work: Callable[[], Awaitable[CallToolResult]], *, ttl_ms: int | None = None
    ) -> IngestTask:
        """Create a task and start ``work``; the task can be read before this returns (created, then answered).

        Raises:
            TooManyTasks: this owner already has ``MAX_WORKING`` tasks working.
            RuntimeError: the server is not running (no task group).
        """
        if self._group is None:
            raise RuntimeError("tasks run only while the server runs (IngestTasks.running)")
        working = [t for t in self.owned_by(owner) if t.status == "working"]
        if len(working) >= MAX_WORKING:
            raise TooManyTasks(
                f"{len(working)} ingests of this caller are already running as tasks, the most at once: "
                "wait for one to end (tasks/get) or cancel one (tasks/cancel), then call again"
            )
        now = self.clock()
        keep = self.ttl_ms if ttl_ms is None else min(max(ttl_ms, MIN_TTL_MS), self.ttl_ms)
        task = IngestTask(
            id=secrets.token_urlsafe(24), owner=owner, tool=tool, created_at=now, ttl_ms=keep, updated_at=now
        )
        self._tasks[task.id] = task
        # start_soon copies this context: the work sees the caller's token and request id.
        self._group.start_soon(self._run, task, work, name=f"task {task.id}")
        return task

    def get(self, owner: str, task_id: str) -> IngestTask:
        """The caller's task with this id.

        Raises:
            TaskNotFound: there is none (never issued, another caller's, or expired).
        """
        self._purge()
        task = self._tasks.get(task_id)
        if task is None or task.owner != owner:
            raise TaskNotFound(f"no task {task_id!r}: it was never started by this caller, or it has expired")
        return task

    def owned_by(self, owner: str) -> list[IngestTask]:
        """The caller's tasks, oldest first."""
        self._purge()
        return [t for t in self._tasks.values() if t.owner == owner]

    async def cancel(self, owner: str, task_id: str) -> IngestTask:
        """Cancel the caller's task and wait until its work has stopped (at most one embedding batch or one
        document's commit away), so that what is stored when this returns is what stays.

        Raises:
            TaskNotFound: no such task of this caller.
            TaskEnded: it had already ended.
        """
        task = self.get(owner, task_id)
        if task.status != "working":
            raise TaskEnded(f"task {task_id} has already ended ({task.status}); there is nothing to cancel")
        task.cancel_requested = True
        await task.ended.wait()
        return task

    async def _run(self, task: IngestTask, work: Callable[[], Awaitable[CallToolResult]]) -> None:
        token = _current.set(task)
        try:
            result = await work()
        except IngestCancelled:  # the SDK makes it a tool error first when the work is a tool call
            self._end(task, "cancelled")
        except MCPError as exc:
            self._end(task, "failed", error=exc.error)
        except Exception as exc:  # the work is a tool call: the SDK has turned a tool's own errors into results
            log.exception("task %s (%s) crashed", task.id, task.tool)
            self._end(task, "failed", error=ErrorData(code=-32603, message=f"{task.tool} crashed: {exc}"))
        else:
            self._end(task, "cancelled" if task.cancel_requested else "completed", result=result)
        finally:
            _current.reset(token)

    def _end(
        self, task: IngestTask, status: Status, *, result: CallToolResult | None = None, error: ErrorData | None = None
    ) -> None:
        now = self.clock()
        # A cancelled task keeps no result: what it did is in the store, and kb_list shows it.
        task.status, task.updated_at = status, now
        task.result, task.error = (None, None) if status == "cancelled" else (result, error)
        task.expires_at = now + timedelta(milliseconds=task.ttl_ms)
        task.ended.set()
        log.info("task %s (%s): %s", task.id, task.tool, task.message)

    def _purge(self) -> None:
        now = self.clock()
        for task_id in [i for i, t in self._tasks.items() if t.expires_at is not None and t.expires_at <= now]:
            del self._tasks[task_id]


class IngestReporter:
    """Where an ingest tool reports progress: to its task when it runs as one (with a cancel checkpoint at
    each report), otherwise as ``notifications/progress`` of documents done."""

    def __init__(self, documents: int, send: SendProgress) -> None:
        self.documents = documents
        self.send = send
        self.task = _current.get()
        if self.task is not None:
            with self.task.lock:
                self.task.progress = self.task.progress.model_copy(update={"documents_total": documents})

    def embedding(self, n: int, done: int, total: int, message: str) -> None:
        """``KnowledgeBase.ingest``'s progress for document ``n`` (0-based), called from its worker thread.

        Raises:
            IngestCancelled: the task was cancelled; the document is not written.
        """
        if self.task is not None:
            self.task.embedded(done, total)
        else:
            anyio.from_thread.run(self.send, n + done / max(total, 1), self.documents, message)

    def task_checkpoint(self) -> None:
        """Stop here if this runs as a task that was cancelled.

        Raises:
            IngestCancelled: it was.
        """
        if self.task is not None:
            self.task.checkpoint()

    async def finished(self, n: int, chunks: int, message: str) -> None:
        """Document ``n`` is done (stored, unchanged or refused).

        Raises:
            IngestCancelled: the task was cancelled; no later document starts.
        """
        if self.task is not None:
            self.task.document_done(chunks)
        else:
            await self.send(n + 1, self.documents, message)
