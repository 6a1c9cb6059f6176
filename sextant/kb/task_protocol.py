"""MCP tasks for the long ingests, in both protocol eras, built on the SDK's extension points.

The SDK (2.3) carries the task types but serves no task method, so this module does, without forking it:

- 2026-07-28, the tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``): an ``Extension`` advertised
  in ``server/discover``. The server decides: a ``kb_ingest`` or ``kb_upload`` from a client that declares
  the extension on that request is answered at once with ``resultType: "task"``; ``tasks/get`` returns the
  task with its result (or error) inlined once it has ended; ``tasks/cancel`` and ``tasks/update`` are
  acknowledgements. A tool error (``isError``) ends ``completed``; only a protocol error ends ``failed``.
- 2025-11-25, that revision's experimental tasks: a client that sends ``task`` on the call gets a
  ``CreateTaskResult``; ``tasks/get``, ``tasks/result`` (waits for the end), ``tasks/cancel`` and
  ``tasks/list``; the ``tasks`` capability and the tools' ``execution.taskSupport: "optional"``. There a
  tool error ends ``failed`` too (that revision's rule). The SDK shapes a ``tools/call`` result to
  ``CallToolResult`` on that wire, so the call returns one naming the task, and ``legacy_middleware``
  (a ``Server.middleware``, outside that shaping) adds the ``task`` field to it.

Any other call, and every call of a client that asks for neither, is answered as before. Each task
belongs to its caller: the bearer token over HTTP, the process that started the server over stdio.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequestParams,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    PaginatedRequestParams,
    RequestParams,
    Result,
    TextContent,
)
from mcp_types.methods import serialize_server_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from sextant.contract.tasks import INGEST_PROGRESS_META, TASKS_EXTENSION
from sextant.kb.ingest_tasks import POLL_INTERVAL_MS, IngestTask, IngestTasks, TaskEnded, TaskNotFound, TooManyTasks

LEGACY_VERSION = "2025-11-25"  # the one handshake revision with tasks
RELATED_TASK_META = "io.modelcontextprotocol/related-task"
STDIO_OWNER = "stdio"  # the process that started the server: the only caller over stdio


class TaskFields(Result):
    """The 2026-07-28 ``Task``: what ``tasks/get`` and the creating call return."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class CreatedTask(TaskFields):
    """``CreateTaskResult`` (2026-07-28): a tools/call answered with a task to poll."""

    result_type: Literal["task"] = "task"


class DetailedTask(TaskFields):
    """``GetTaskResult`` (2026-07-28): the task, with the call's result or error once it has ended."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class UpdateTaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


def caller() -> str:
    """The owner of the tasks this request may see: its bearer token, or the local process over stdio."""
    token = get_access_token()
    # The subject tells apart tokens minted one after another under the same name.
    return STDIO_OWNER if token is None else f"token:{token.client_id}:{token.subject}"


class IngestTasksExtension(Extension):
    """Serves the task methods of both eras and turns task-eligible calls of ``tools`` into tasks."""

    identifier = TASKS_EXTENSION

    def __init__(self, tasks: IngestTasks, tools: frozenset[str]) -> None:
        self.tasks = tasks
        self.task_tools = tools

    def methods(self) -> Sequence[MethodBinding]:
        modern, legacy = frozenset(MODERN_PROTOCOL_VERSIONS), frozenset({LEGACY_VERSION})
        return [
            MethodBinding("tasks/get", GetTaskRequestParams, self._get, protocol_versions=modern | legacy),
            MethodBinding("tasks/cancel", CancelTaskRequestParams, self._cancel, protocol_versions=modern | legacy),
            MethodBinding("tasks/update", UpdateTaskParams, self._update, protocol_versions=modern),
            MethodBinding("tasks/result", GetTaskPayloadRequestParams, self._result, protocol_versions=legacy),
            MethodBinding("tasks/list", PaginatedRequestParams, self._list, protocol_versions=legacy),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if not self._runs_as_task(params, ctx):
            if ctx.protocol_version == LEGACY_VERSION and params.task is not None:
                # That revision's answer to a task asked of a tool whose execution.taskSupport is "forbidden".
                raise MCPError(METHOD_NOT_FOUND, f"{params.name} does not run as a task; call it without `task`")
            return await call_next(ctx)
        legacy = ctx.protocol_version == LEGACY_VERSION
        # 2026-07-28 servers ignore a `task` param: the server alone decides there.
        ttl_ms = params.task.ttl if legacy and params.task is not None else None
        try:
            task = self.tasks.start(caller(), params.name, partial(_tool_result, call_next, ctx), ttl_ms=ttl_ms)
        except TooManyTasks as exc:
            return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        if not legacy:
            return _modern(task, CreatedTask, ctx.protocol_version)
        # legacy_middleware turns this into the CreateTaskResult; a client that ignores tasks can read it too.
        text = f"{params.name} runs as task {task.id}: poll tasks/get with it, and read tasks/result when it has ended."
        return CallToolResult(content=[TextContent(type="text", text=text)], _meta=_related(task))

    def legacy_middleware(self) -> ServerMiddleware[Any]:
        """The 2025-11-25 surface the handlers cannot shape: the ``tasks`` capability in ``initialize``, the
        tools' ``execution.taskSupport``, and the ``task`` field of a ``CreateTaskResult``."""

        async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
            result = await call_next(ctx)
            if not isinstance(result, dict):
                return result
            if ctx.method == "initialize" and result.get("protocolVersion") == LEGACY_VERSION:
                capabilities = result.get("capabilities") or {}
                tasks: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
                return result | {"capabilities": capabilities | {"tasks": tasks}}
            if ctx.protocol_version != LEGACY_VERSION:
                return result
            if ctx.method == "tools/list" and isinstance(result.get("tools"), list):
                tools = [
                    t | {"execution": {"taskSupport": "optional"}} if t.get("name") in self.task_tools else t
                    for t in result["tools"]
                ]
                return result | {"tools": tools}
            related = (result.get("_meta") or {}).get(RELATED_TASK_META)
            if ctx.method == "tools/call" and isinstance(related, dict):
                return result | {"task": _legacy(self.tasks.get(caller(), related["taskId"]))}
            return result

        return middleware

    def _runs_as_task(self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether to answer this call with a task: a 2025-11-25 client asked for one, or a 2026-07-28 client
        declared the extension on this request (the server decides there, and every ingest may be long)."""
        if params.name not in self.task_tools:
            return False
        if ctx.protocol_version == LEGACY_VERSION:
            return params.task is not None
        declared = ctx.session.client_capabilities
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        return modern and declared is not None and TASKS_EXTENSION in (declared.extensions or {})

    def _task(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> IngestTask:
        _require_extension(ctx)
        try:
            return self.tasks.get(caller(), task_id)
        except TaskNotFound as exc:
            raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: {exc}") from exc

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return _modern(task, DetailedTask, ctx.protocol_version)
        return _legacy(task)

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        try:
            await self.tasks.cancel(task.owner, task.id)
        except TaskEnded as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from exc
        return {} if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else _legacy(task)

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        self._task(ctx, params.task_id)
        return {}  # an ingest never asks for input, so every response is to a key that is not outstanding

    async def _result(self, ctx: ServerRequestContext[Any, Any], params: GetTaskPayloadRequestParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        await task.ended.wait()
        if task.error is not None:
            raise MCPError.from_error_data(task.error)
        if task.result is None:
            raise MCPError(INVALID_PARAMS, f"task {task.id} was cancelled, so it has no result: {task.message}")
        return _tool_result_wire(task.result, ctx.protocol_version) | {"_meta": _related(task)}

    async def _list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> dict[str, Any]:
        return {"tasks": [_legacy(t) for t in self.tasks.owned_by(caller())]}


def _require_extension(ctx: ServerRequestContext[Any, Any]) -> None:
    """A 2026-07-28 client must declare the extension on every task request (-32021 otherwise)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        require_client_extension(ctx, TASKS_EXTENSION)


async def _tool_result(call_next: CallNext, ctx: ServerRequestContext[Any, Any]) -> CallToolResult:
    return CallToolResult.model_validate(await call_next(ctx))


def _tool_result_wire(result: CallToolResult, version: str) -> dict[str, Any]:
    """The result as the plain call would have carried it at ``version``."""
    return serialize_server_result(
        "tools/call", version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )


def _related(task: IngestTask) -> dict[str, Any]:
    return {RELATED_TASK_META: {"taskId": task.id}}


def _progress_meta(task: IngestTask) -> dict[str, Any]:
    with task.lock:
        return {INGEST_PROGRESS_META: task.progress.model_dump(mode="json")}


def _modern(task: IngestTask, shape: type[TaskFields], version: str) -> dict[str, Any]:
    """The task on the 2026-07-28 wire, as a ``CreatedTask`` or a ``DetailedTask``."""
    fields: dict[str, Any] = {
        "task_id": task.id,
        "status": task.status,
        "status_message": task.message,
        "created_at": _iso(task.created_at),
        "last_updated_at": _iso(task.updated_at),
        "ttl_ms": task.reported_ttl_ms,
        "poll_interval_ms": POLL_INTERVAL_MS,
        "_meta": _progress_meta(task),
    }
    if shape is DetailedTask and task.result is not None:
        fields["result"] = _tool_result_wire(task.result, version)
    if shape is DetailedTask and task.error is not None:
        fields["error"] = task.error.model_dump(mode="json", exclude_none=True)
    return shape.model_validate(fields).model_dump(by_alias=True, mode="json", exclude_none=True)


def _legacy(task: IngestTask) -> dict[str, Any]:
    """The task on the 2025-11-25 wire (``Task``), where a tool error is a failure."""
    failed = task.status == "completed" and task.result is not None and task.result.is_error
    return {
        "taskId": task.id,
        "status": "failed" if failed else task.status,
        "statusMessage": task.message,
        "createdAt": _iso(task.created_at),
        "lastUpdatedAt": _iso(task.updated_at),
        "ttl": task.reported_ttl_ms,
        "pollInterval": POLL_INTERVAL_MS,
        "_meta": _progress_meta(task),
    }


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
