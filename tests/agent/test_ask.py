"""sextant-ask in the terminal: the real loop and the real sextant-kb process (no model, or the scripted ones)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from sextant.agent.ask import ask
from sextant.agent.settings import AgentSettings
from sextant.kb.documents import LoadedDocument, PageSpan
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.chat import Quote, Statement
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, ScriptedYesNo
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow

TEXT = "Descale the espresso machine every eight weeks with a citric acid solution."


def _espresso_store(tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    with KnowledgeBase.open(KbSettings(chroma_dir=store, _env_file=None), embedder=embedder) as kb:  # type: ignore[call-arg]
        kb.ingest(
            "espresso", LoadedDocument(text=TEXT, title="Espresso care", pages=(PageSpan(0, len(TEXT), 4, "iv"),))
        )
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(store))  # read by the sextant-kb subprocess


def test_ask_prints_the_answer_and_the_cited_sources_with_their_pages(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _espresso_store(tmp_path, embedder, monkeypatch)
    settings = AgentSettings(_env_file=None, provider="none")  # type: ignore[call-arg]

    assert anyio.run(ask, "How often should I descale the espresso machine?", settings) == 0

    out = capsys.readouterr().out
    assert out.startswith("**Excerpts, not a written answer**") and "eight weeks" in out
    assert "[1] Espresso care, p. iv  (kb://documents/espresso/pages/4)" in out


def test_ask_says_which_rule_left_each_statement_out_and_why(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _espresso_store(tmp_path, embedder, monkeypatch)
    statement = Statement("Descale every eight weeks.", (Quote(1, "every eight weeks"),))
    writer = ScriptedModel([ScriptedTurn(statements=(statement,))], calls_tools_itself=False)
    choice = ModelChoice(writer, "local", "scripted", ScriptedYesNo([0.1]))
    monkeypatch.setattr("sextant.agent.ask.build_model", lambda settings: choice)
    settings = AgentSettings(_env_file=None, provider="local")  # type: ignore[call-arg]

    assert anyio.run(ask, "Which brand of descaler should the espresso machine get?", settings) == 0

    captured = capsys.readouterr()
    assert "The documents do not answer this question." in captured.out
    removed = "  removed 'Descale every eight weeks.': quote [1] found; supported evidence; answer_kind not a quantity "
    removed += "question; answer_check does not answer (P(yes) = 0.100)"
    assert removed in captured.err.splitlines()
