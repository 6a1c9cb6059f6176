"""The real SmolLM2-135M file for the trainers that ask the local model (``--sources model``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llm.conftest import TEST_MODEL, models_dir, smollm2

__all__ = ["models_dir", "smollm2"]


@pytest.fixture
def local_test_model(smollm2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The product's settings name SmolLM2-135M as the local model, in the folder it was fetched to."""
    monkeypatch.setenv("SEXTANT_LOCAL_MODEL", TEST_MODEL)
    monkeypatch.setenv("SEXTANT_MODELS_DIR", str(smollm2.parent))
