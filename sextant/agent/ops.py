"""What operators need of the agent: a gate that only lets the reverse proxy in, and Prometheus metrics.

Metrics live in one registry per app (tests build many apps in one process). Stage latencies come from
wrapping what the loop calls: each knowledge-base tool call, each model turn, and the knowledge base's own
``timings_ms`` per retrieval stage, read from the ``kb_search`` results as they pass.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sextant.agent.kb_client import ToolOutcome
from sextant.agent.loop import KnowledgeTools
from sextant.llm.chat import ChatEvent, ChatModel, ChatRequest, ToolSpec, TurnEnd, Usage

PROXY_HEADER = b"x-sextant-proxy-secret"
# Liveness probes (Docker's healthcheck, preflight.sh) reach the container directly, not through the proxy.
UNGATED_PATHS = frozenset({"/health"})
# Seconds: a kb stage takes milliseconds, a local model turn tens of seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ProxyGate:
    """Refuse (403) every request that does not carry the proxy's shared secret, but the ungated paths."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app = app
        self.secret = secret.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNGATED_PATHS:
            await self.app(scope, receive, send)
            return
        sent = dict(scope["headers"]).get(PROXY_HEADER, b"")
        if hmac.compare_digest(sent, self.secret):  # constant time: no guessing it byte by byte
            await self.app(scope, receive, send)
            return
        body = b'{"detail":"requests must come through the proxy (SEXTANT_PROXY_SECRET is set)"}'
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


class Metrics:
    """The agent's Prometheus metrics, in a registry of their own."""

    def __init__(self, budget_usd: float) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "sextant_http_requests", "HTTP requests by route template, method and status.",
            ["route", "method", "status"], registry=self.registry,
        )  # fmt: skip
        self.request_seconds = Histogram(
            "sextant_http_request_seconds", "Time to the end of the response body, by route template.",
            ["route"], buckets=BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.stage_seconds = Histogram(
            "sextant_stage_seconds",
            "Time per stage of an answer: tool:<name> (one MCP call), model_turn, kb:<stage> (inside kb_search).",
            ["stage"], buckets=BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.spent_today = Gauge("sextant_spend_today_usd", "Model spend so far this UTC day.", registry=self.registry)
        budget = Gauge("sextant_daily_budget_usd", "SEXTANT_DAILY_BUDGET_USD.", registry=self.registry)
        budget.set(budget_usd)

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def middleware(self, app: ASGIApp) -> ASGIApp:
        return _Measured(app, self)

    def observe_outcome(self, name: str, seconds: float, outcome: ToolOutcome) -> None:
        self.stage_seconds.labels(f"tool:{name}").observe(seconds)
        timings = (outcome.structured or {}).get("timings_ms") if name == "kb_search" else None
        for stage, ms in (timings or {}).items():
            self.stage_seconds.labels(f"kb:{stage}").observe(float(ms) / 1000)


class _Measured:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            # The template, never the raw path: /documents/{doc_id}/... must not make one series per document.
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.requests.labels(route, scope["method"], str(status)).inc()
            self.metrics.request_seconds.labels(route).observe(time.perf_counter() - started)


class TimedTools:
    """The knowledge base as the loop sees it, each call timed."""

    def __init__(self, kb: KnowledgeTools, metrics: Metrics) -> None:
        self.kb = kb
        self.metrics = metrics

    def offered(self) -> list[ToolSpec]:
        return self.kb.offered()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        started = time.perf_counter()
        outcome = await self.kb.call(name, arguments)
        self.metrics.observe_outcome(name, time.perf_counter() - started, outcome)
        return outcome


class TimedModel:
    """A chat model whose turns are timed (from the request to the turn's end, tokens streamed between)."""

    def __init__(self, model: ChatModel, metrics: Metrics) -> None:
        self.model = model
        self.metrics = metrics
        self.name = model.name
        self.calls_tools_itself = model.calls_tools_itself
        self.priced = model.priced

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        started = time.perf_counter()
        async for event in self.model.stream(request):
            if isinstance(event, TurnEnd):
                self.metrics.stage_seconds.labels("model_turn").observe(time.perf_counter() - started)
            yield event

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        started = time.perf_counter()
        result = await self.model.complete_json(system, prompt, schema)
        self.metrics.stage_seconds.labels("model_json").observe(time.perf_counter() - started)
        return result

    async def aclose(self) -> None:
        await self.model.aclose()
