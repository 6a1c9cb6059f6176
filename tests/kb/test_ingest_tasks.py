"""The task store on its own: owners, the end of a task (result, error, cancel), expiry, the reporter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import anyio.to_thread
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from sextant.kb.ingest_tasks import (
    MAX_WORKING,
    MIN_TTL_MS,
    IngestReporter,
    IngestTasks,
    TaskEnded,
    TaskNotFound,
    TooManyTasks,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    """Time that moves only when told to, so expiry is tested without waiting."""

    def __init__(self) -> None:
        self.now = datetime(2026, 7, 28, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


async def test_a_task_ends_with_its_result_and_only_its_owner_sees_it() -> None:
    async with IngestTasks().running() as tasks:
        release = anyio.Event()

        async def work() -> CallToolResult:
            await release.wait()
            return _result("done")

        task = tasks.start("alice", "kb_ingest", work)
        assert tasks.get("alice", task.id) is task and task.status == "working"  # readable once started
        with pytest.raises(TaskNotFound):
            tasks.get("bob", task.id)
        assert tasks.owned_by("bob") == [] and tasks.owned_by("alice") == [task]
        release.set()
        await task.ended.wait()
    assert task.status == "completed" and task.result == _result("done") and task.error is None


async def test_a_caller_runs_at_most_max_working_tasks_at_once_and_others_are_not_held_up() -> None:
    release = anyio.Event()

    async def work() -> CallToolResult:
        await release.wait()
        return _result("done")

    async with IngestTasks().running() as tasks:
        first = [tasks.start("alice", "kb_ingest", work) for _ in range(MAX_WORKING)]
        with pytest.raises(TooManyTasks, match="wait for one to end"):
            tasks.start("alice", "kb_ingest", work)
        tasks.start("bob", "kb_ingest", work)
        release.set()
        await first[0].ended.wait()
        tasks.start("alice", "kb_ingest", work)  # one ended: room again


async def test_a_protocol_error_or_a_crash_fails_the_task_with_the_error() -> None:
    async def refuses() -> CallToolResult:
        raise MCPError(-32603, "the store is gone")

    async def crashes() -> CallToolResult:
        raise RuntimeError("boom")

    async with IngestTasks().running() as tasks:
        refused, crashed = tasks.start("me", "kb_upload", refuses), tasks.start("me", "kb_upload", crashes)
        await refused.ended.wait()
        await crashed.ended.wait()
    assert refused.status == "failed" and refused.error is not None and refused.error.message == "the store is gone"
    assert crashed.status == "failed" and crashed.error is not None and "boom" in crashed.error.message
    assert "the store is gone" in refused.message


async def test_cancel_waits_for_the_work_to_stop_keeps_no_result_and_cannot_be_repeated() -> None:
    async with IngestTasks().running() as tasks:
        at_checkpoint = anyio.Event()

        async def work() -> CallToolResult:
            reporter = IngestReporter(2, _never_sent)
            await reporter.finished(0, 3, "first document stored")
            at_checkpoint.set()
            while True:  # each embedding batch is a checkpoint
                await anyio.sleep(0)
                reporter.embedding(1, 1, 4, "embedding the second")

        task = tasks.start("me", "kb_ingest", work)
        await at_checkpoint.wait()
        with pytest.raises(TaskNotFound):
            await tasks.cancel("someone else", task.id)
        await tasks.cancel("me", task.id)
        assert task.status == "cancelled" and task.result is None and task.ended.is_set()
        assert (task.progress.documents_done, task.progress.chunks_done) == (1, 3)
        assert "1 of 2 documents" in task.message
        with pytest.raises(TaskEnded):
            await tasks.cancel("me", task.id)


async def test_an_ended_task_is_forgotten_its_ttl_after_it_ended() -> None:
    clock = Clock()
    async with IngestTasks(ttl_ms=60_000, clock=clock).running() as tasks:

        async def work() -> CallToolResult:
            clock.now += timedelta(seconds=30)  # the ingest itself takes half a minute
            return _result("done")

        task = tasks.start("me", "kb_ingest", work, ttl_ms=10**9)  # asked for more than the server keeps
        short = tasks.start("me", "kb_ingest", work, ttl_ms=1)  # asked for less than a poll needs
        await task.ended.wait()
        await short.ended.wait()
        assert task.ttl_ms == 60_000 and short.ttl_ms == MIN_TTL_MS
        assert task.reported_ttl_ms >= 60_000 + 30_000  # from creation, so it covers the run too
        assert task.expires_at is not None
        clock.now = task.expires_at - timedelta(milliseconds=1)
        assert tasks.get("me", task.id) is task
        clock.now += timedelta(milliseconds=1)
        with pytest.raises(TaskNotFound):
            tasks.get("me", task.id)


def test_the_reporter_outside_a_task_sends_progress_and_never_stops() -> None:
    sent: list[tuple[float, float, str]] = []

    async def send(progress: float, total: float, message: str) -> None:
        sent.append((progress, total, message))

    async def main() -> None:
        reporter = IngestReporter(2, send)
        reporter.task_checkpoint()
        await anyio.to_thread.run_sync(reporter.embedding, 1, 2, 4, "embedding b")
        await reporter.finished(1, 4, "b: added")

    anyio.run(main)
    assert sent == [(1.5, 2, "embedding b"), (2, 2, "b: added")]


async def _never_sent(progress: float, total: float, message: str) -> None:
    raise AssertionError(f"a task's progress went out as a notification: {message}")
