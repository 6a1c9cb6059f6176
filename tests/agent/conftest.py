"""Fixtures for the agent server's tests: the model fixtures are the model layer's own; ``client_for`` opens the app."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.kb.knowledge_base import KnowledgeBase
from tests.agent.app_client import ClientFor, app_clients
from tests.llm.conftest import TEST_MODEL, gemini_server, models_dir, smollm2

__all__ = ["TEST_MODEL", "gemini_server", "models_dir", "smollm2"]


@pytest.fixture
def client_for(kb: KnowledgeBase, tmp_path: Path) -> Iterator[ClientFor]:
    """Opens the agent's app over ``kb`` with the test's model and settings (see ``app_client.app_clients``)."""
    with app_clients(kb, tmp_path) as open_client:
        yield open_client
