"""What the shell commands share: the configured knowledge base opened, or exit 1 with the reason on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.cli.common import open_knowledge_base
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow


def test_the_configured_store_is_opened(tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    with KnowledgeBase.open(KbSettings(chroma_dir=store, _env_file=None), embedder=embedder) as kb:
        kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised tea.", title="Tea"))
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(store))
    with open_knowledge_base("sextant-forget") as opened:
        assert [d.id for d in opened.documents()] == ["tea"]


def test_a_knowledge_base_that_cannot_open_exits_1_with_the_command_and_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("SEXTANT_EMBEDDER", str(tmp_path / "no-such-model"))
    with pytest.raises(SystemExit) as exited:
        open_knowledge_base("sextant-forget")
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("sextant-forget: cannot load embedder") and "SEXTANT_EMBEDDER" in err
