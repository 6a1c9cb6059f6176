"""Streamable HTTP without sessions, for both protocol eras: any process on the store answers any request.

A 2026-07-28 request carries its protocol version and client capabilities in ``params._meta`` and needs no
handshake; a 2025-era client ``initialize``s first. The SDK's session manager picks the era from the
``MCP-Protocol-Version`` header, so a modern request that states its version only in ``_meta`` would land on
the handshake path and be told "Missing session ID": ``route`` fills in the routing headers such a request
leaves out, from its own body (a header that contradicts the body is still refused, by the SDK's checks).
The handshake path runs stateless too, so no request depends on an earlier one having reached this process,
and there is no standing GET stream (405; a 2026-07-28 client hears of changes through ``subscriptions/listen``).

Responses are plain JSON unless the request asks for notifications while it runs (a ``progressToken``, or
``subscriptions/listen``) and accepts ``text/event-stream``.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    encode_header_value,
)
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

LISTEN = "subscriptions/listen"
_streamed: ContextVar[bool] = ContextVar("sextant_kb_streamed", default=False)


class SessionlessManager(StreamableHTTPSessionManager):
    """The SDK's manager in stateless mode, answering in JSON unless ``route`` chose a stream for this request."""

    def __init__(self, app: Server[Any], security: TransportSecuritySettings, max_body_bytes: int) -> None:
        super().__init__(app, stateless=True, security_settings=security, max_request_body_size=max_body_bytes)
        # Outside the SDK's own limit, so a body is bounded before route() reads it.
        self.routed = RequestBodyLimitMiddleware(self._route, max_body_bytes)

    @property
    def json_response(self) -> bool:
        # Read by the SDK as it answers each request; chosen per request, not per server.
        return not _streamed.get()

    @json_response.setter
    def json_response(self, _: bool) -> None:
        """The base class sets one value for every request; the choice is made in ``route`` instead."""

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            # The SDK's stateless transport would hold such a stream open with nothing ever to send on it.
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.handle_request(scope, receive, send)
            return
        body, replay = await _read_body(receive)
        scope, streamed = route(scope, _decoded(body))
        token = _streamed.set(streamed)
        try:
            await self.handle_request(scope, replay, send)
        finally:
            _streamed.reset(token)


def route(scope: Scope, request: dict[str, Any] | None) -> tuple[Scope, bool]:
    """The request's scope with the routing headers its body implies where they are missing, and whether its
    response is a stream."""
    if request is None:
        return scope, False
    headers = Headers(scope=scope)
    method = request.get("method")
    params = _object(request.get("params"))
    meta = _object(params.get("_meta"))
    version = meta.get(PROTOCOL_VERSION_META_KEY)
    if version in MODERN_PROTOCOL_VERSIONS and isinstance(method, str):
        implied = {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: method}
        name = params.get(NAME_BEARING_METHODS.get(method, ""))
        if isinstance(name, str):
            implied[MCP_NAME_HEADER] = encode_header_value(name)
        missing = [(k.encode(), v.encode()) for k, v in implied.items() if k not in headers]
        scope = {**scope, "headers": [*scope["headers"], *missing]}
    wants_stream = method == LISTEN or meta.get("progressToken") is not None
    return scope, wants_stream and "text/event-stream" in headers.get("accept", "")


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decoded(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC request object, or None for anything else (the SDK answers that with its own error)."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return decoded if isinstance(decoded, dict) else None


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that hands it on again before anything that follows it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            pending: list[Message] = [message]
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            pending = []
            break
    body = b"".join(chunks)
    first: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *pending]

    async def replay() -> Message:
        return first.pop(0) if first else await receive()

    return body, replay
