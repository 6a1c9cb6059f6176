"""Running ``sextant-ingest`` in this process on a store of a test's own, and opening that store afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.cli import ingest
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings


def use_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the commands at a store under ``tmp_path``, text only (no overviews) and with no crawl delay."""
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    # The checkout's models/ may hold the local model; these tests store text only.
    monkeypatch.setenv("SEXTANT_PROVIDER", "none")
    monkeypatch.setenv("SEXTANT_CRAWL_DELAY_S", "0")
    return tmp_path / "store"


def run_ingest(argv: list[str]) -> int:
    """``sextant-ingest argv``'s exit status."""
    with pytest.raises(SystemExit) as exc:
        ingest.main(argv)
    return int(exc.value.code or 0)


def reopen(store: Path, embedder: Embedder) -> KnowledgeBase:
    """The store the commands wrote, opened here to look at it."""
    return KnowledgeBase.open(KbSettings(chroma_dir=store, _env_file=None), embedder=embedder)  # type: ignore[call-arg]
