"""Each request's id and trace context: honoured when the client sends sane ones, minted otherwise, and only for
the request's own lifetime."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from sextant.agent.request_context import RequestContext
from sextant.logs import current_trace_id
from sextant.logs import request_id as current_request_id

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


async def seen(request: Request) -> JSONResponse:
    """What the code handling a request sees of its context."""
    return JSONResponse({"request_id": current_request_id.get(), "trace_id": current_trace_id()})


@pytest.fixture
def client() -> Iterator[TestClient]:
    app = Starlette(routes=[Route("/seen", seen)])
    app.add_middleware(RequestContext)
    with TestClient(app) as test_client:
        yield test_client


def test_a_sane_request_id_is_the_request_s_own_and_comes_back(client: TestClient) -> None:
    response = client.get("/seen", headers={"X-Request-ID": "web-7f3a:2"})
    assert response.headers["x-request-id"] == "web-7f3a:2"
    assert response.json()["request_id"] == "web-7f3a:2"


@pytest.mark.parametrize("sent", [None, "", "has spaces", "x" * 129, "semi;colon"])
def test_a_missing_or_unsafe_request_id_is_replaced_by_a_minted_one(client: TestClient, sent: str | None) -> None:
    response = client.get("/seen", headers={"X-Request-ID": sent} if sent is not None else {})
    minted = response.headers["x-request-id"]
    assert minted != sent and len(minted) == 32 and int(minted, 16) >= 0
    assert response.json()["request_id"] == minted


def test_each_request_gets_its_own_id(client: TestClient) -> None:
    first, second = (client.get("/seen").headers["x-request-id"] for _ in range(2))
    assert first != second


async def test_the_id_and_the_trace_last_as_long_as_the_request() -> None:
    inside: dict[str, str | None] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        inside.update(request_id=current_request_id.get(), trace_id=current_trace_id())
        await send({"type": "http.response.start", "status": 204, "headers": [(b"server", b"test")]})
        await send({"type": "http.response.body", "body": b""})

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    await RequestContext(app)({"type": "http", "headers": [(b"x-request-id", b"abc")]}, receive, send)
    assert inside["request_id"] == "abc" and inside["trace_id"] is not None
    assert sent[0]["headers"] == [(b"server", b"test"), (b"x-request-id", b"abc")]
    assert (current_request_id.get(), current_trace_id()) == (None, None)


async def test_a_scope_that_is_not_http_passes_through_untouched() -> None:
    inside: list[str | None] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        inside.append(current_request_id.get())

    async def receive() -> Message:
        return {"type": "lifespan.startup"}

    async def send(message: Message) -> None:
        raise AssertionError("nothing is sent")

    await RequestContext(app)({"type": "lifespan"}, receive, send)
    assert inside == [None]


def test_a_valid_traceparent_is_the_request_s_trace(client: TestClient) -> None:
    response = client.get("/seen", headers={"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"})
    assert response.json()["trace_id"] == TRACE_ID


@pytest.mark.parametrize("traceparent", [None, "00-not-a-trace-01", f"00-{'0' * 32}-00f067aa0ba902b7-01"])
def test_without_a_valid_traceparent_a_new_trace_is_minted_per_request(
    client: TestClient, traceparent: str | None
) -> None:
    headers = {"traceparent": traceparent} if traceparent else {}
    traces = [client.get("/seen", headers=headers).json()["trace_id"] for _ in range(2)]
    assert all(t is not None and len(t) == 32 and t != "0" * 32 for t in traces)
    assert traces[0] != traces[1]


@pytest.mark.slow
def test_request_ids_are_honoured_or_minted(client_for: Any) -> None:
    client = client_for()
    assert client.get("/health", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"] == "abc-123"
    minted = client.get("/health", headers={"X-Request-ID": "bad id with spaces"}).headers["x-request-id"]
    assert minted != "bad id with spaces" and len(minted) == 32
