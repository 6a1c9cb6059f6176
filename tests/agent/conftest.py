"""Fixtures for the agent server's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.gemini_protocol_server import GeminiProtocolServer


@pytest.fixture
def gemini_server() -> Iterator[GeminiProtocolServer]:
    """A local server speaking Gemini's REST protocol (the real API is out of reach from tests)."""
    server = GeminiProtocolServer().start()
    yield server
    server.stop()
