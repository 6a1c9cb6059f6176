"""``sextant-ingest`` and document overviews: written by the configured model, skipped with --no-summaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.cli import ingest
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.scripted import ScriptedModel
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> Path:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tea.md").write_text("# Tea\n\n## Oolong\n\nOolong is partially oxidised.\n", encoding="utf-8")
    (folder / "notes.txt").write_text("Meeting notes: the budget was approved.\n", encoding="utf-8")
    return folder


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        ingest.main(argv)
    return int(exc.value.code or 0)


def _overviews(tmp_path: Path, embedder: Embedder) -> dict[str, str]:
    settings = KbSettings(chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        return {d.id: d.overview for d in kb.documents()}


def test_without_a_model_text_is_stored_and_that_is_said_once(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    monkeypatch.setenv("SEXTANT_OVERVIEWS", "on")
    monkeypatch.setenv("SEXTANT_PROVIDER", "none")
    assert _run([str(docs), "-r"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count(ingest.NO_MODEL) == 1 and "2 added" in captured.out
    assert _overviews(tmp_path, embedder) == {"notes": "", "tea": ""}


def test_the_configured_model_writes_each_new_documents_overview(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    model = ScriptedModel([], json_replies=[{"kind": "Notes", "about": "a budget"}, {"kind": "A note", "about": "tea"}])
    monkeypatch.setattr(ingest, "_configured_model", lambda: (model, ""))
    assert _run([str(docs), "-r"]) == 0
    assert "overviews: 2" in capsys.readouterr().out
    assert _overviews(tmp_path, embedder) == {"notes": "Notes: a budget.", "tea": "A note: tea."}
    assert "- Oolong" in model.json_prompts[1]  # the loader's section headings reach the model


def test_no_summaries_asks_no_model(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    def refuse() -> None:
        raise AssertionError("--no-summaries must not look for a model")

    monkeypatch.setattr(ingest, "_configured_model", refuse)
    assert _run([str(docs), "-r", "--no-summaries"]) == 0
    assert ingest.NO_MODEL not in capsys.readouterr().err
    assert _overviews(tmp_path, embedder) == {"notes": "", "tea": ""}
