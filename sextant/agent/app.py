"""The agent's HTTP API (FastAPI): questions in, cited answers out, streamed over SSE.

The app owns one knowledge-base process for its lifetime, started in the lifespan, supervised, and reached
over MCP. Every response carries ``X-Request-ID``; the same id is on each log line and in the metadata of
each MCP call the request makes. A W3C ``traceparent`` sent with the request (one is minted otherwise) is the
trace context of the whole request, so the SDK carries it into each MCP call's ``_meta`` beside the id.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import re
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, File, HTTPException, Query, Request, Response, UploadFile
from fastapi import Path as PathParam
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from fastapi.responses import StreamingResponse
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from pydantic import TypeAdapter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sextant.agent.api import (
    DocumentsResponse,
    Health,
    IngestRequest,
    IngestResponse,
    IngestResult,
    ModelHealth,
    PageText,
    QueryRequest,
    QueryResponse,
    ToolInfo,
    WorkspaceCreated,
    WorkspaceDeleted,
    WorkspaceInfo,
    WorkspaceLimits,
)
from sextant.agent.budget import DailyBudget
from sextant.agent.chat import ChatModel
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    DoneEvent,
    ErrorEvent,
    SourcesEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from sextant.agent.kb_client import NO_PAGE_IMAGE, KbUnavailable, current_workspace, stdio_server
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.agent.lab import CompareRequest, LabComparison, LabOverview, comparison, read_overview
from sextant.agent.loop import AgentLoop, HistoryItem
from sextant.agent.models.factory import ModelChoice, build_model
from sextant.agent.ops import Metrics, ProxyGate, TimedModel, TimedTools
from sextant.agent.overviews import write_overview
from sextant.agent.passages import Passage
from sextant.agent.settings import AgentSettings
from sextant.agent.workspaces import LimitReached, Workspace, WorkspaceBook
from sextant.logs import request_id as current_request_id
from sextant.settings import default_data_path

log = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_UPLOAD_FILES = 20
# Every other body is JSON; byte-capped even when the client sends no Content-Length.
MAX_BODY_BYTES = 25 * 1024 * 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# How often expired workspaces are looked for: one is gone within this long after its last request ends.
SWEEP_S = 10.0
# What a 503 for a knowledge base that is down tells the client to wait: about one restart.
KB_RETRY_S = 5


@dataclass
class AgentState:
    settings: AgentSettings
    kb: KbSupervisor
    choice: ModelChoice
    budget: DailyBudget
    limiter: MovingWindowRateLimiter
    rate: RateLimitItemPerSecond
    metrics: Metrics
    workspaces: WorkspaceBook | None = None
    questions_today: DailyBudget | None = None
    uploads_today: DailyBudget | None = None
    model_reachable: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # One writer per workspace at a time, so the documents limit cannot be raced past.
    writers: dict[str, asyncio.Lock] = field(default_factory=dict)

    @property
    def model(self) -> ChatModel | None:
        return self.choice.model


def create_app(
    settings: AgentSettings | None = None,
    *,
    kb_server: Any = None,
    model: ModelChoice | None = None,
    budget: DailyBudget | None = None,
    state_dir: Path | None = None,
) -> FastAPI:
    """Build the app. ``kb_server`` and ``model`` replace what the settings would start (tests pass
    an in-memory server or the scripted model); by default the app spawns ``sextant-kb`` itself.
    ``state_dir`` holds the spend record and the workspace book (default: the user-data folder)."""
    settings = settings or AgentSettings()
    metrics = Metrics(settings.daily_budget_usd)
    state_dir = state_dir or (settings.state_dir.expanduser() if settings.state_dir else default_data_path("agent"))
    workspaces_on = settings.workspaces == "on"

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        choice = model or build_model(settings)
        kb_args = ["--workspace-ttl", str(settings.workspace_ttl)] if workspaces_on else []
        server = kb_server if kb_server is not None else stdio_server(settings.kb_command, kb_args)
        async with KbSupervisor(server) as kb:
            state = AgentState(
                settings=settings,
                kb=kb,
                choice=choice,
                budget=budget or DailyBudget(settings.daily_budget_usd, state_dir / "spend.json"),
                limiter=MovingWindowRateLimiter(MemoryStorage()),
                rate=RateLimitItemPerSecond(settings.rate_limit, settings.rate_window),
                metrics=metrics,
            )
            if workspaces_on:
                state.workspaces = WorkspaceBook(
                    state_dir / "workspaces.json", ttl_s=settings.workspace_ttl, max_active=settings.max_workspaces
                )
                # Counts, not dollars: the same capped, persisted daily tally as the spend.
                state.questions_today = DailyBudget(settings.daily_questions, state_dir / "questions-today.json")
                state.uploads_today = DailyBudget(settings.daily_uploads, state_dir / "uploads-today.json")
            app.state.agent = state
            log.info("agent ready: %s; knowledge base has %d tools", choice.detail, len(kb.tools))
            sweeper = asyncio.create_task(_sweep_forever(state)) if workspaces_on else None
            try:
                yield
            finally:
                if sweeper is not None:
                    sweeper.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await sweeper
                if choice.model is not None:
                    await choice.model.aclose()

    app = FastAPI(
        title="Sextant agent",
        version="0.1.0",
        description="Questions answered from your documents, with every claim cited to a page and passage.",
        lifespan=lifespan,
        max_body_size=MAX_BODY_BYTES,
    )
    if settings.proxy_secret is not None:
        # Innermost: a refusal still gets CORS headers and a request id from the layers outside it.
        app.add_middleware(ProxyGate, secret=settings.proxy_secret.get_secret_value())
    app.add_middleware(
        CORSMiddleware,
        allow_origins=settings.origins(),
        allow_methods=["GET", "POST", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "X-Request-ID", "traceparent", "tracestate"],
        expose_headers=["X-Request-ID", "Retry-After"],
    )
    app.add_middleware(RequestContext)
    # Outermost, so refusals (403, 429) and failures are counted too.
    app.add_middleware(metrics.middleware)
    _routes(app)
    app.openapi = partial(_openapi_with_events, app)  # type: ignore[method-assign]
    return app


def _openapi_with_events(app: FastAPI) -> dict[str, Any]:
    """The generated schema plus the SSE event models, which a streamed response cannot declare itself."""
    if app.openapi_schema is None:
        spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        events = TypeAdapter(AgentEvent).json_schema(ref_template="#/components/schemas/{model}")
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        for name, definition in events.pop("$defs", {}).items():
            schemas.setdefault(name, definition)
        schemas["AgentEvent"] = events
        app.openapi_schema = spec
    return app.openapi_schema


def state_of(request: Request) -> AgentState:
    state: AgentState = request.app.state.agent
    return state


State = Annotated[AgentState, Depends(state_of)]


async def rate_limited(request: Request, state: State) -> None:
    """Per-client request rate on the endpoints that cost work (not on /health)."""
    client = request.client.host if request.client else "unknown"
    if not await state.limiter.hit(state.rate, "sextant", client):
        reset, _ = await state.limiter.get_window_stats(state.rate, "sextant", client)
        retry = max(1, int(reset - time.time()))
        raise HTTPException(
            429,
            f"rate limit: {state.settings.rate_limit} requests per {state.settings.rate_window} s",
            headers={"Retry-After": str(retry)},
        )


def _budget_applies(state: AgentState) -> bool:
    return state.model is not None and state.model.priced and state.budget.capped


def _budget_meaning(state: AgentState) -> str:
    if not state.budget.capped:
        return "no cap (SEXTANT_DAILY_BUDGET_USD=0)"
    if state.model is None or not state.model.priced:
        return f"${state.budget.limit_usd:.2f} per UTC day, not applied: the model in use costs nothing"
    return f"${state.budget.limit_usd:.2f} per UTC day on {state.model.name}; past it, questions get 429"


async def within_budget(state: State) -> None:
    if _budget_applies(state) and state.budget.exhausted():
        raise HTTPException(
            429,
            f"today's model budget (${state.settings.daily_budget_usd:.2f}, SEXTANT_DAILY_BUDGET_USD) is spent; "
            "it resets at 00:00 UTC",
            headers={"Retry-After": str(state.budget.seconds_until_reset())},
        )


async def workspace_scope(request: Request, state: State) -> AsyncIterator[Workspace | None]:
    """With workspaces on: the caller's workspace, from its bearer token, for every MCP call this request makes.

    The workspace counts as busy until the response (a stream included) has been sent, so it is never
    deleted under a running request.
    """
    book = state.workspaces
    if book is None:
        yield None
        return
    workspace = _bearer_workspace(request, book)
    book.begin(workspace)
    current_workspace.set(workspace.id)
    try:
        yield workspace
    finally:
        book.end(workspace)


Scoped = Annotated[Workspace | None, Depends(workspace_scope)]


def _bearer_workspace(request: Request, book: WorkspaceBook) -> Workspace:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    workspace = book.resolve(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if workspace is None:
        raise HTTPException(
            401,
            "a workspace token is required (Authorization: Bearer …); create a workspace with POST /workspaces. "
            "An expired or deleted workspace's token no longer opens anything.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return workspace


async def question_allowed(state: State, workspace: Scoped) -> None:
    """Count the question against its workspace and the day (workspaces on)."""
    if workspace is None or state.workspaces is None or state.questions_today is None:
        return
    settings = state.settings
    try:
        if state.questions_today.exhausted():
            raise LimitReached("SEXTANT_DAILY_QUESTIONS", settings.daily_questions, "today's questions are used up")
        state.workspaces.count_question(workspace, settings.workspace_questions)
    except LimitReached as exc:
        raise _refusal(exc, retry_after=state.questions_today.seconds_until_reset()) from exc
    state.questions_today.add(1)


async def ingest_allowed(state: State, workspace: Scoped, adding: int) -> None:
    """Refuse an ingest or upload that would pass the workspace's documents limit or the day's uploads."""
    if workspace is None or state.uploads_today is None:
        return
    settings = state.settings
    if state.uploads_today.spent() + adding > settings.daily_uploads:
        exc = LimitReached("SEXTANT_DAILY_UPLOADS", settings.daily_uploads, "today's uploads are used up")
        raise _refusal(exc, retry_after=state.uploads_today.seconds_until_reset())
    held = len((await _kb_call(state, "kb_list", {})).get("documents", []))
    if held + adding > settings.workspace_documents:
        exc = LimitReached(
            "SEXTANT_WORKSPACE_DOCUMENTS",
            settings.workspace_documents,
            f"this workspace holds {held} documents; delete the workspace or start a new one",
        )
        raise _refusal(exc, status=409)


def _refusal(exc: LimitReached, *, status: int = 429, retry_after: int | None = None) -> HTTPException:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return HTTPException(status, str(exc), headers=headers)


def _writer(state: AgentState, workspace: Workspace | None) -> asyncio.Lock:
    return state.writers.setdefault(workspace.id if workspace else "", asyncio.Lock())


async def sweep(state: AgentState) -> int:
    """Delete every expired or closed workspace that no request is using; how many went."""
    if state.workspaces is None:
        return 0
    dropped = 0
    for workspace in state.workspaces.due():
        token = current_workspace.set(workspace.id)
        try:
            outcome = await state.kb.call("kb_drop_workspace", {})
        except KbUnavailable as exc:
            log.error("cannot delete workspace %s yet: %s", workspace.id[:8], exc)
            continue
        finally:
            current_workspace.reset(token)
        if not outcome.ok:
            log.error("cannot delete workspace %s yet: %s", workspace.id[:8], outcome.text)
            continue
        state.workspaces.remove(workspace)
        state.writers.pop(workspace.id, None)
        dropped += 1
    return dropped


async def _sweep_forever(state: AgentState) -> None:
    while True:
        try:
            await sweep(state)
        except Exception:  # the sweep must outlive one bad pass; the next one retries
            log.exception("workspace sweep failed")
        await asyncio.sleep(SWEEP_S)


async def kb_answering(state: State) -> None:
    """Refuse work while the knowledge base is down: an answer or upload now would be built on nothing."""
    if not state.kb.connected:
        raise _kb_down(KbUnavailable(state.kb.reason or "the knowledge base is not running"))


def _kb_down(exc: KbUnavailable) -> HTTPException:
    return HTTPException(503, f"the knowledge base is unavailable: {exc}", headers={"Retry-After": str(KB_RETRY_S)})


Answering = Depends(kb_answering)
Limited = Depends(rate_limited)
Budgeted = Depends(within_budget)
Asking = Depends(question_allowed)


def _loop(state: AgentState) -> AgentLoop:
    return AgentLoop(
        TimedTools(state.kb, state.metrics),
        TimedModel(state.model, state.metrics) if state.model is not None else None,
        budget=state.budget if _budget_applies(state) else None,
        verify=state.settings.verify,
        unsupported=state.settings.unsupported,
        quotes=state.settings.quotes,
        web_search=state.settings.web_search == "on",
        max_output_tokens=state.settings.max_output_tokens,
    )


async def _run(state: AgentState, body: QueryRequest) -> AsyncIterator[AgentEvent]:
    history = [HistoryItem(turn.role, turn.text) for turn in body.history]
    async for event in _loop(state).run(
        body.question, history=history, held=body.passages, request_id=current_request_id.get()
    ):
        if isinstance(event, AnswerEvent) and state.model is not None:
            state.model_reachable = event.mode == "model" or "could not be reached" not in event.reason
        yield event


def _routes(app: FastAPI) -> None:
    @app.post("/workspaces", dependencies=[Limited], status_code=201)
    async def create_workspace(state: State) -> WorkspaceCreated:
        """Create a private, expiring workspace (only with SEXTANT_WORKSPACES=on). Its token is shown once; send it
        as `Authorization: Bearer <token>` on every other request."""
        book = _book(state)
        try:
            workspace, token = book.create()
        except LimitReached as exc:
            raise _refusal(exc, retry_after=int(SWEEP_S)) from exc
        return WorkspaceCreated(token=token, **_workspace_info(state, workspace).model_dump())

    @app.get("/workspaces/current")
    async def current(state: State, workspace: Scoped) -> WorkspaceInfo:
        """The caller's workspace: when it expires, what it has used, its limits."""
        _book(state)
        assert workspace is not None
        return _workspace_info(state, workspace)

    @app.delete("/workspaces/current")
    async def delete_workspace(request: Request, state: State) -> WorkspaceDeleted:
        """Delete the caller's workspace and every document in it. Its token stops working at once; a request
        still running in it finishes first."""
        book = _book(state)
        workspace = _bearer_workspace(request, book)
        book.close(workspace)
        await sweep(state)
        return WorkspaceDeleted(status="deleting" if workspace in book.due() or workspace.in_flight else "deleted")

    @app.post("/query", dependencies=[Limited, Answering, Budgeted, Asking])
    async def query(body: QueryRequest, state: State) -> QueryResponse:
        """Answer a question; the whole answer at once."""
        sources: list[Passage] = list(body.passages)
        trace: list[ToolCallEvent | ToolResultEvent] = []
        answer: AnswerEvent | None = None
        try:
            async for event in _run(state, body):
                if isinstance(event, SourcesEvent):
                    sources = event.passages
                elif isinstance(event, ToolCallEvent | ToolResultEvent):
                    trace.append(event)
                elif isinstance(event, AnswerEvent):
                    answer = event
        except KbUnavailable as exc:
            raise _kb_down(exc) from exc
        if answer is None:
            raise HTTPException(500, "the agent finished without an answer")
        return QueryResponse(
            request_id=current_request_id.get() or "",
            answer=answer.text,
            mode=answer.mode,
            model=answer.model,
            reason=answer.reason,
            sources=sources,
            citations=answer.citations,
            statements=answer.statements,
            verification=answer.verification,
            usage=answer.usage,
            turns=answer.turns,
            trace=trace,
        )

    @app.post(
        "/query/stream",
        dependencies=[Limited, Answering, Budgeted, Asking],
        response_class=StreamingResponse,
        responses={
            200: {
                "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/AgentEvent"}}},
                "description": "Server-sent events: each frame's `event:` is the `event` field of its JSON `data:`.",
            }
        },
    )
    async def query_stream(body: QueryRequest, state: State) -> StreamingResponse:
        """Answer a question as server-sent events: tool_call, tool_result, sources, token, citation, answer,
        done (or error, then done)."""
        rid = current_request_id.get() or ""

        async def frames() -> AsyncIterator[str]:
            started = time.perf_counter()
            try:
                async for event in _run(state, body):
                    yield sse(event)
            except KbUnavailable as exc:
                log.error("question failed: the knowledge base is unavailable: %s", exc)
                yield sse(ErrorEvent(message=f"the knowledge base is unavailable: {exc}"))
            except Exception as exc:
                log.exception("query failed")
                yield sse(ErrorEvent(message=f"the answer failed: {exc}"))
            yield sse(DoneEvent(request_id=rid, elapsed_ms=round((time.perf_counter() - started) * 1000, 1)))

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.post("/ingest", dependencies=[Limited, Answering])
    async def ingest(body: IngestRequest, state: State, workspace: Scoped) -> IngestResponse:
        """Add text documents (Markdown is understood); re-using an id replaces that document."""
        documents = [d.model_dump(exclude_none=True) for d in body.documents]
        async with _writer(state, workspace):
            await ingest_allowed(state, workspace, len({d.id for d in body.documents}))
            outcome = await _kb_call(state, "kb_ingest", {"documents": documents})
        if state.uploads_today is not None:
            state.uploads_today.add(len(documents))
        results = [IngestResult.model_validate(r) for r in outcome.get("results", [])]
        for result in results:
            result.overview = await _add_overview(state, result)
        return IngestResponse(request_id=current_request_id.get() or "", results=results)

    @app.post(
        "/upload", dependencies=[Limited, Answering], max_body_size=MAX_UPLOAD_FILES * MAX_UPLOAD_BYTES + 1024 * 1024
    )
    async def upload(
        files: Annotated[list[UploadFile], File(description="PDF, DOCX, Markdown or text files.")],
        state: State,
        workspace: Scoped,
    ) -> IngestResponse:
        """Upload files; each is parsed on the server by the knowledge base's loaders, page numbers kept."""
        if len(files) > MAX_UPLOAD_FILES:
            raise HTTPException(413, f"at most {MAX_UPLOAD_FILES} files per upload")
        async with _writer(state, workspace):
            await ingest_allowed(state, workspace, len(files))
            if state.uploads_today is not None:
                state.uploads_today.add(len(files))
            results = await _upload_each(state, files)
        if all(r.status == "refused" for r in results):
            # Nothing was stored: a client that checks only the status must see the refusal and its reasons.
            status = 503 if not state.kb.connected else 422
            raise HTTPException(status, "; ".join(f"{r.name}: {r.reason}" for r in results))
        return IngestResponse(request_id=current_request_id.get() or "", results=results)

    async def _upload_each(state: AgentState, files: list[UploadFile]) -> list[IngestResult]:
        results: list[IngestResult] = []
        for upload in files:
            name = upload.filename or "upload"
            data = await upload.read(MAX_UPLOAD_BYTES + 1)
            if len(data) > MAX_UPLOAD_BYTES:
                limit_mb = MAX_UPLOAD_BYTES // (1024 * 1024)
                results.append(_refused(name, f"larger than the agent's upload limit of {limit_mb} MB per file"))
                continue
            if not data:
                results.append(_refused(name, "the file is empty"))
                continue
            arguments = {"filename": name, "content_base64": base64.b64encode(data).decode("ascii")}
            try:
                outcome = await _kb_call(state, "kb_upload", arguments)
            except HTTPException as exc:
                results.append(_refused(name, str(exc.detail)))
                continue
            for item in outcome.get("results", []):
                result = IngestResult.model_validate({**item, "name": name})
                result.overview = await _add_overview(state, result)
                results.append(result)
        return results

    @app.get("/documents", dependencies=[Depends(workspace_scope)])
    async def documents(state: State) -> DocumentsResponse:
        """Every document in the knowledge base."""
        return DocumentsResponse.model_validate(await _kb_call(state, "kb_list", {}))

    @app.get("/documents/{doc_id}/pages/{number}", dependencies=[Depends(workspace_scope)])
    async def page(
        doc_id: Annotated[str, PathParam(pattern=r"^[A-Za-z0-9._-]{1,128}$")],
        number: Annotated[int, PathParam(ge=1, le=100_000)],
        state: State,
    ) -> PageText:
        """The text of one page of a document, for reading around a cited passage."""
        try:
            text = await state.kb.read(f"kb://documents/{doc_id}/pages/{number}")
        except KbUnavailable as exc:
            raise _kb_down(exc) from exc
        except Exception as exc:  # the server's refusal to read the URI: no such document or page
            raise HTTPException(404, f"no page {number} in document {doc_id!r}") from exc
        return PageText(document_id=doc_id, page=number, text=text)

    @app.get(
        "/documents/{doc_id}/pages/{number}/image",
        dependencies=[Depends(workspace_scope)],
        response_class=Response,
        responses={
            200: {
                "content": {"image/png": {}},
                "description": "The page as a PNG.",
                "headers": {
                    "X-Sextant-Highlights": {
                        "schema": {"type": "integer"},
                        "description": "Rectangles highlighted over the quote (0: not found on this page).",
                    }
                },
            }
        },
    )
    async def page_image(
        doc_id: Annotated[str, PathParam(pattern=r"^[A-Za-z0-9._-]{1,128}$")],
        number: Annotated[int, PathParam(ge=1, le=100_000)],
        state: State,
        quote: Annotated[str | None, Query(max_length=2000, description="Words to highlight on the page.")] = None,
    ) -> Response:
        """A page of a PDF as it looks (PNG), with the quoted words highlighted where they are found on it.

        404 when there is nothing to show: no such document or page, or no original PDF is kept for it (a text,
        Markdown or DOCX document, or a PDF ingested before originals were kept); 502 or 503 when the knowledge
        base could not render it.
        """
        arguments: dict[str, Any] = {"document_id": doc_id, "page": number}
        if quote and quote.strip():
            arguments["quote"] = quote
        try:
            outcome = await state.kb.call("kb_page_image", arguments, current_request_id.get())
        except KbUnavailable as exc:
            raise _kb_down(exc) from exc
        if not outcome.ok:
            at = outcome.text.find(NO_PAGE_IMAGE)
            if at != -1:  # nothing to show; any other refusal is the knowledge base's failure
                raise HTTPException(404, outcome.text[at:])
            raise HTTPException(502, outcome.text or "kb_page_image failed")
        png = next((data for mime, data in outcome.images if mime == "image/png"), None)
        if png is None:
            raise HTTPException(502, "the knowledge base answered without an image")
        highlights = (outcome.structured or {}).get("highlights", 0)
        return Response(png, media_type="image/png", headers={"X-Sextant-Highlights": str(highlights)})

    @app.get("/lab")
    async def lab(state: State) -> LabOverview:
        """The Index Lab's benchmark curves: recall@10 against queries per second, per index and library."""
        return read_overview(state.settings.lab_results_path())

    @app.post("/lab/compare", dependencies=[Limited, Depends(workspace_scope)])
    async def lab_compare(body: CompareRequest, state: State) -> LabComparison:
        """The same query through every index over this knowledge base's vectors, side by side."""
        return comparison(await _kb_call(state, "kb_ann_compare", {"query": body.query, "k": body.k}))

    @app.get("/tools")
    async def tools(state: State) -> list[ToolInfo]:
        """The knowledge base's tools as discovered over MCP, and which of them the model may call."""
        return [
            ToolInfo(
                name=t.spec.name,
                description=t.spec.description,
                read_only=t.read_only,
                offered_to_model=t.offered,
                input_schema=t.spec.input_schema,
            )
            for t in state.kb.tools.values()
        ]

    @app.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
    async def metrics(state: State) -> Response:
        """Prometheus text format: requests by route and status, latencies by stage, today's spend."""
        state.metrics.spent_today.set(state.budget.spent())
        return Response(state.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/health")
    async def health(state: State) -> Health:
        """Whether the knowledge base is connected, and whether a model is configured and reachable."""
        configured = state.model is not None
        reachable = state.model_reachable if configured else False
        return Health(
            status="ok" if state.kb.connected and (reachable is not False or not configured) else "degraded",
            kb_connected=state.kb.connected,
            kb_reason=state.kb.reason,
            kb_restarts=state.kb.restarts,
            kb_tools=len(state.kb.tools),
            model=ModelHealth(
                configured=configured,
                reachable=reachable,
                provider=state.choice.provider,
                name=state.model.name if state.model is not None else None,
                detail=state.choice.detail,
            ),
            answers="model" if configured else "excerpts",
            budget_usd=state.settings.daily_budget_usd,
            budget=_budget_meaning(state),
            spent_today_usd=round(state.budget.spent(), 6),
            workspaces=state.workspaces is not None,
        )


def _book(state: AgentState) -> WorkspaceBook:
    if state.workspaces is None:
        raise HTTPException(404, "workspaces are off (SEXTANT_WORKSPACES=off): this server has one shared store")
    return state.workspaces


def _workspace_info(state: AgentState, workspace: Workspace) -> WorkspaceInfo:
    settings = state.settings
    limits = WorkspaceLimits(
        documents=settings.workspace_documents,
        questions=settings.workspace_questions,
        file_mb=MAX_UPLOAD_BYTES // (1024 * 1024),
    )
    return WorkspaceInfo(expires_at=workspace.expires, questions_asked=workspace.questions, limits=limits)


async def _kb_call(state: AgentState, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        outcome = await state.kb.call(name, arguments, current_request_id.get())
    except KbUnavailable as exc:
        raise _kb_down(exc) from exc
    if not outcome.ok or outcome.structured is None:
        raise HTTPException(422, outcome.text or f"{name} failed")
    return outcome.structured


async def _add_overview(state: AgentState, result: IngestResult) -> bool:
    """Have the model write and store an overview of a document just added or replaced; whether one was stored.

    Best effort: the document is stored either way, so a failure is logged, not raised. The model reads the
    text as the knowledge base stored it, and the store refuses the overview if that version has since changed.
    """
    model = state.model
    if (
        model is None
        or state.settings.overviews == "off"
        or result.status not in ("added", "replaced")
        or (_budget_applies(state) and state.budget.exhausted())
    ):
        return False
    try:
        text = await state.kb.read(f"kb://documents/{result.id}")
        overview, usage = await write_overview(model, result.title or result.id, text)
        state.budget.add(usage.cost_usd)
        stored = await state.kb.call(
            "kb_set_overview",
            {"document_id": result.id, "overview": overview, "version": result.version or None},
            current_request_id.get(),
        )
    except Exception as exc:  # a missing overview must not turn a stored document into a failed request
        log.warning("no overview for %s: %s", result.id, exc)
        return False
    if not stored.ok:
        log.warning("no overview for %s: %s", result.id, stored.text)
    return stored.ok


def _refused(name: str, reason: str) -> IngestResult:
    return IngestResult(id=name, name=name, status="refused", reason=reason)


def sse(event: AgentEvent) -> str:
    """One server-sent event: its name, then its JSON on one data line."""
    return f"event: {event.event}\ndata: {json.dumps(event.model_dump(mode='json'), ensure_ascii=False)}\n\n"


class RequestContext:
    """Request id in and out, and the request's trace context: each honoured when the client sends a sane one,
    minted otherwise."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        sent = headers.get(b"x-request-id", b"").decode("latin-1")
        rid = sent if _REQUEST_ID.match(sent) else uuid.uuid4().hex
        token = current_request_id.set(rid)
        trace_token = otel_context.attach(_trace_context(headers))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [*message.get("headers", []), (b"x-request-id", rid.encode("latin-1"))],
                }
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            otel_context.detach(trace_token)
            current_request_id.reset(token)


def _trace_context(headers: dict[bytes, bytes]) -> otel_context.Context:
    """The W3C trace context of the request's ``traceparent`` and ``tracestate``; a new trace when it has none
    that is valid (the propagator ignores a malformed one), so every request's lines share a trace id."""
    carrier = {
        name: headers[name.encode()].decode("latin-1")
        for name in ("traceparent", "tracestate")
        if name.encode() in headers
    }
    extracted = propagate.extract(carrier)
    if trace.get_current_span(extracted).get_span_context().is_valid:
        return extracted
    minted = trace.SpanContext(
        trace_id=int.from_bytes(secrets.token_bytes(16)) or 1,
        span_id=int.from_bytes(secrets.token_bytes(8)) or 1,
        is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(minted))
