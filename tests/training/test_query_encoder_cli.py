"""``sextant-train-query-encoder`` end to end on a tiny BEIR folder: split, train, search the same store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import beir
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.training.query_encoder_cli import main
from tests.training.test_cli import tiny_beir


@pytest.mark.slow
def test_the_command_trains_a_query_encoder_the_existing_store_searches_with(tmp_path: Path) -> None:
    data, out, splits, stores = tiny_beir(tmp_path / "tiny"), tmp_path / "query", tmp_path / "splits", tmp_path / "s"
    main(
        ["--data", str(data), "--out", str(out), "--splits", str(splits), "--store-root", str(stores),
         "--held-out", "0.34", "--batch-size", "2", "--max-steps", "2", "--threads", "1"]
    )  # fmt: skip
    fit = beir.read_qrels(splits / "tiny" / "fit.tsv")
    record = json.loads((out / "sextant-training.json").read_text())
    assert record["sources"] == [
        {"dataset": "tiny", "questions": len(fit), "held_out_qrels": str(splits / "tiny" / "heldout.tsv")}
    ]
    assert record["questions"] == len(fit) and record["chunks"] == 6 and record["steps"] == 2

    settings = beir.store_settings("tiny", stores).model_copy(update={"query_encoder": str(out)})
    with KnowledgeBase.open(settings) as kb:
        assert kb.stats().query_encoder == str(out) and kb.stats().embedder == "all-MiniLM-L6-v2"
        hits = kb.search("how to handle bee swarms", 1).hits
        assert [h.document_id for h in hits] == ["d1"]


def test_a_folder_without_train_qrels_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as exited:
        main(["--data", str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2 and "train.tsv" in capsys.readouterr().err
