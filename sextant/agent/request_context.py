"""Each request's id and trace context, as the ASGI middleware outside the routes sets them.

The id is on every log line, in each MCP call's metadata (the routes' ``ScopedKb`` takes it from
``request_id_of``), and comes back as ``X-Request-ID``. A W3C ``traceparent`` sent with the request (one is
minted otherwise) is the trace context of the whole request, so the SDK carries it into each MCP call's
``_meta`` beside the id.
"""

from __future__ import annotations

import re
import secrets
import uuid

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sextant.logs import request_id as current_request_id

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


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
        # The request's own state (a copy per request) carries the id to the routes; the context variable only
        # to the log lines.
        scope.setdefault("state", {})["request_id"] = rid
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


def request_id_of(request: Request) -> str:
    """The id ``RequestContext`` gave this request."""
    rid: str = request.state.request_id
    return rid


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
