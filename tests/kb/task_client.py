"""How tests speak MCP tasks through the SDK's own client, which carries the task types but no task calls.

2026-07-28: ``Tasks`` declares the extension and claims ``resultType: "task"``, so ``session.call_tool(...,
allow_claimed=True)`` hands back the ``CreatedTask``; the task verbs go through ``session.send_request`` with
their ``Mcp-Name`` header. 2025-11-25: the call carries ``task`` and the verbs are that revision's types.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import ClaimContext, ClientExtension, ResultClaim

from sextant.contract.results import IngestReport
from sextant.contract.tasks import INGEST_PROGRESS_META, TASKS_EXTENSION, IngestProgress
from sextant.kb.task_protocol import CreatedTask, DetailedTask, UpdateTaskParams

ENDED = ("completed", "failed", "cancelled")
POLL_S = 0.1  # faster than the server suggests: the tests' ingests are short
T = TypeVar("T", DetailedTask, types.GetTaskResult)


class Get(types.GetTaskRequest):
    name_param = "taskId"  # SEP-2663: the task id rides Mcp-Name, for a balancer to route on


class Cancel(types.CancelTaskRequest):
    name_param = "taskId"


class Update(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams
    name_param = "taskId"


class Tasks(ClientExtension):
    """The client half of the 2026-07-28 extension: the ``task`` result shape, resolved by polling to the end."""

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        ended = await poll(partial(get, ctx.session, created.task_id))
        assert ended.result is not None, ended
        return types.CallToolResult.model_validate(ended.result)


def documents(n: int, prefix: str = "note") -> list[dict[str, Any]]:
    """``n`` short documents, one chunk each: a cancel after the first leaves many never started."""
    return [
        {"id": f"{prefix}-{i}", "title": f"Note {i}", "content": f"Field note {i}: the heron nested by pond {i}."}
        for i in range(n)
    ]


def report_of(result: dict[str, Any] | types.CallToolResult) -> IngestReport:
    """The typed report a plain kb_ingest returns, read the way the agent reads it."""
    call = result if isinstance(result, types.CallToolResult) else types.CallToolResult.model_validate(result)
    assert not call.is_error, call.content
    text = [c.text for c in call.content if isinstance(c, types.TextContent)]
    assert json.loads(text[0]) == call.structured_content  # the same JSON as text, as for a plain call
    return IngestReport.model_validate(call.structured_content)


async def assert_whole(client: Client, stored: int, prefix: str = "note") -> None:
    """``stored`` documents of those named ``prefix-`` are listed, and every listed document has all its chunks in
    both indexes: none is half-written."""
    listed = (await client.call_tool("kb_list", {})).structured_content
    stats = (await client.call_tool("kb_stats", {})).structured_content
    assert listed is not None and stats is not None
    assert len([d for d in listed["documents"] if d["id"].startswith(f"{prefix}-")]) == stored
    assert stats["chunks"] == stats["lexical_chunks"] == sum(d["chunks"] for d in listed["documents"])


async def create(
    client: Client, tool: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
) -> CreatedTask:
    """A 2026-07-28 call that the server answers with a task."""
    created = await client.session.call_tool(tool, arguments, meta=meta, allow_claimed=True)  # type: ignore[arg-type]
    assert isinstance(created, CreatedTask), created
    return created


async def get(session: Any, task_id: str) -> DetailedTask:
    return await session.send_request(Get(params=types.GetTaskRequestParams(task_id=task_id)), DetailedTask)


async def cancel(client: Client, task_id: str) -> None:
    await client.session.send_request(Cancel(params=types.CancelTaskRequestParams(task_id=task_id)), types.Result)


async def update(client: Client, task_id: str, responses: dict[str, Any]) -> None:
    params = UpdateTaskParams(task_id=task_id, input_responses=responses)
    await client.session.send_request(Update(params=params), types.Result)


async def poll(
    fetch: Callable[[], Awaitable[T]], *, documents_done: int | None = None, seen: list[IngestProgress] | None = None
) -> T:
    """Poll a task until it ends (or, given ``documents_done``, until that many documents are done), keeping each
    progress seen in ``seen``."""
    while True:
        task = await fetch()
        progress = progress_of(task)
        if seen is not None:
            seen.append(progress)
        if task.status in ENDED or (documents_done is not None and progress.documents_done >= documents_done):
            return task
        await anyio.sleep(POLL_S)


def progress_of(task: types.Result) -> IngestProgress:
    assert task.meta is not None
    return IngestProgress.model_validate(task.meta[INGEST_PROGRESS_META])


async def create_legacy(client: Client, tool: str, arguments: dict[str, Any], ttl_ms: int = 60_000) -> types.Task:
    """A 2025-11-25 call augmented with ``task``."""
    params = types.CallToolRequestParams(name=tool, arguments=arguments, task=types.TaskMetadata(ttl=ttl_ms))
    created = await client.session.send_request(types.CallToolRequest(params=params), types.CreateTaskResult)
    return created.task


async def get_legacy(client: Client, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.GetTaskResult)


async def result_legacy(client: Client, task_id: str) -> types.CallToolResult:
    """``tasks/result``: waits for the end, then the call's own result."""
    request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CallToolResult)


async def cancel_legacy(client: Client, task_id: str) -> types.CancelTaskResult:
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    return await client.session.send_request(request, types.CancelTaskResult)


async def list_legacy(client: Client) -> list[types.Task]:
    return (await client.session.send_request(types.ListTasksRequest(), types.ListTasksResult)).tasks
