"""Fixtures for the agent server's tests: the model fixtures are the model layer's own."""

from __future__ import annotations

from tests.llm.conftest import TEST_MODEL, gemini_server, models_dir, smollm2

__all__ = ["TEST_MODEL", "gemini_server", "models_dir", "smollm2"]
