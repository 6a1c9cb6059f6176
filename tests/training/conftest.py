"""The real SmolLM2-135M file for the trainers that ask the local model (``sextant-adapt --sources model``)."""

from __future__ import annotations

from tests.llm.conftest import TEST_MODEL, models_dir, smollm2

__all__ = ["TEST_MODEL", "models_dir", "smollm2"]
