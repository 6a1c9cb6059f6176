from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.cli import forget
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> KnowledgeBase:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    kb = KnowledgeBase.open(KbSettings(chroma_dir=tmp_path / "store", _env_file=None))  # type: ignore[call-arg]
    kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised tea.", title="Tea"))
    kb.ingest("bees", LoadedDocument(text="Swarm control starts in May.", title="Bees"))
    return kb


def _run(argv: list[str]) -> int:
    try:
        forget.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_list_shows_ids_chunk_counts_and_titles(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["bees       1 chunks  Bees", "tea        1 chunks  Tea"]


def test_forget_with_yes_removes_from_store_and_bm25(
    kb: KnowledgeBase, settings: KbSettings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["tea", "-y"]) == 0
    assert "removed tea: 1 chunks" in capsys.readouterr().out
    after = KnowledgeBase.open(KbSettings(_env_file=None))  # type: ignore[call-arg]
    assert [d.id for d in after.documents()] == ["bees"]
    assert after.search("oolong oxidised", mode="lexical", abstain=False).hits == []


def test_without_a_terminal_or_yes_nothing_is_removed(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["tea"]) == 1  # pytest's stdin is not a terminal: the answer is no
    assert "kept tea" in capsys.readouterr().out
    assert _run(["missing", "-y"]) == 1
    assert "no document with id 'missing'" in capsys.readouterr().err
