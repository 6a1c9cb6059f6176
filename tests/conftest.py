"""Shared fixtures: the real embedder (loaded once), settings on a temporary store, the data folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# No test may reach a model hub: without these a hub name spends ~46 s in retries before failing.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

REPO = Path(__file__).resolve().parent.parent


# Read once, at import: a fixture that clears every SEXTANT_ variable for a test must not hide the data from it.
_DATA_DIR = Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data"))


def data_dir() -> Path:
    """The shared benchmark data: SEXTANT_DATA_DIR, else ../shared/data beside the checkout."""
    return _DATA_DIR


def require_data(*parts: str) -> Path:
    """A path inside the shared data folder, or skip: a user's machine does not have it."""
    path = data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (set SEXTANT_DATA_DIR to the folder holding it)")
    return path


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    quiet_model_loading()
    return load_embedder("all-MiniLM-L6-v2")


@pytest.fixture
def settings(tmp_path: Path) -> KbSettings:
    return KbSettings(chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]


@pytest.fixture
def kb(settings: KbSettings, embedder: Embedder) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(settings, embedder=embedder) as opened:
        yield opened


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own SEXTANT_* variables must not leak into tests."""
    for name in list(os.environ):
        if name.startswith(("SEXTANT_", "AGENTICRAG_")):
            monkeypatch.delenv(name)
