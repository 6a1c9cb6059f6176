"""``sextant-train-embedder`` end to end on a tiny BEIR folder: split, train, load into a knowledge base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals.beir import read_qrels
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings
from sextant.training.embedder_cli import main
from tests.training.test_cli import tiny_beir


@pytest.mark.slow
def test_the_command_trains_an_embedder_a_new_store_is_built_with(tmp_path: Path) -> None:
    data, out, splits = tiny_beir(tmp_path / "tiny"), tmp_path / "embedder", tmp_path / "splits"
    main(
        ["--data", str(data), "--out", str(out), "--splits", str(splits), "--held-out", "0.34",
         "--batch-size", "2", "--steps", "2", "--max-length", "32", "--threads", "1"]
    )  # fmt: skip
    fit, held = read_qrels(splits / "tiny" / "fit.tsv"), read_qrels(splits / "tiny" / "heldout.tsv")
    assert held and fit and not set(fit) & set(held)
    record = json.loads((out / "sextant-training.json").read_text())
    assert record["sources"] == [
        {"dataset": "tiny", "questions": len(fit), "held_out_qrels": str(splits / "tiny" / "heldout.tsv")}
    ]
    assert record["questions"] == len(fit) and record["steps"] == 2

    with KnowledgeBase.open(KbSettings(chroma_dir=tmp_path / "store", embedder=str(out))) as kb:
        kb.ingest("bees", LoadedDocument(text="Bee swarms settle in a cluster before they move on.", title="Bees"))
        hits = kb.search("what do bee swarms do", 1).hits
        assert [h.document_id for h in hits] == ["bees"] and kb.stats().embedder == str(out)


def test_a_folder_without_train_qrels_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exited:
        main(["--data", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2 and "train.tsv" in capsys.readouterr().err
