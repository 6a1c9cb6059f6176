"""The app ``create_app`` builds: its body cap, its CORS policy and its published schema. Each route's own
behaviour is tested in ``tests/agent/routes/``; the shared client is ``tests/agent/app_client.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def test_bodies_are_bounded(client_for: Any) -> None:
    client = client_for()
    assert client.post("/query", json={"question": "x" * 2001}).status_code == 422
    assert client.post("/query", json={"question": ""}).status_code == 422
    huge = b'{"question": "' + b"x" * (26 * 1024 * 1024) + b'"}'
    response = client.post("/query", content=huge, headers={"content-type": "application/json"})
    assert response.status_code == 413

    def chunked() -> Iterator[bytes]:  # no Content-Length: the cap must count the bytes as they arrive
        yield b'{"question": "'
        for _ in range(26):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    response = client.post("/query", content=chunked(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_cors_allows_only_configured_origins(client_for: Any) -> None:
    client = client_for(allowed_origins="http://localhost:3000")
    preflight = {"Access-Control-Request-Method": "POST"}
    ok = client.options("/query", headers={"Origin": "http://localhost:3000", **preflight})
    assert ok.headers.get("access-control-allow-origin") == "http://localhost:3000"
    bad = client.options("/query", headers={"Origin": "http://evil.example", **preflight})
    assert "access-control-allow-origin" not in bad.headers


def test_openapi_documents_every_route(client_for: Any) -> None:
    paths = client_for().get("/openapi.json").json()["paths"]
    assert {"/query", "/query/stream", "/ingest", "/upload", "/documents", "/tools", "/health"} <= set(paths)
