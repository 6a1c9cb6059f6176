"""The agent's HTTP API (FastAPI): questions in, cited answers out, streamed over SSE.

The app owns one knowledge-base process for its lifetime, started in the lifespan, supervised, and reached
over MCP. The routes live in ``routes/``, one module per resource; what they depend on in ``deps.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter
from pydantic import TypeAdapter

from sextant.agent.budget import DailyBudget
from sextant.agent.events import AgentEvent
from sextant.agent.kb_client import stdio_server
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.agent.ops import Metrics, ProxyGate
from sextant.agent.request_context import RequestContext
from sextant.agent.routes import documents, lab, query, system, workspaces
from sextant.agent.settings import AgentSettings
from sextant.agent.state import AgentState
from sextant.agent.sweeper import sweep_forever
from sextant.agent.workspaces import WorkspaceBook
from sextant.llm.factory import ModelChoice, build_model
from sextant.settings import default_data_path

log = logging.getLogger(__name__)

# Every other body is JSON; byte-capped even when the client sends no Content-Length.
MAX_BODY_BYTES = 25 * 1024 * 1024


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
            sweeper = asyncio.create_task(sweep_forever(state)) if workspaces_on else None
            try:
                yield
            finally:
                if sweeper is not None:
                    sweeper.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await sweeper
                await choice.aclose()

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
    for resource in (workspaces, query, documents, lab, system):
        app.include_router(resource.router)
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
        # The stream declares its frames as AgentEvent; the framework's generic item schema (any event, any
        # data) would only blur that in the types the browser is generated from.
        stream = spec["paths"]["/query/stream"]["post"]["responses"]["200"]["content"]["text/event-stream"]
        del stream["itemSchema"]
        app.openapi_schema = spec
    return app.openapi_schema
