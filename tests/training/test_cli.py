"""``sextant-train-reranker`` end to end on a tiny BEIR folder: split, mine, train, load, search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals.beir import read_qrels
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.search import fused_rerank_order
from sextant.settings import KbSettings
from sextant.training.cli import exits_on, main
from sextant.training.heldout import roc_auc

TOPICS = ["espresso descaling", "bee swarms", "rose pruning", "bread proofing", "bicycle chains", "tomato blight"]


def tiny_beir(folder: Path) -> Path:
    folder.mkdir()
    (folder / "qrels").mkdir()
    docs = [
        {"_id": f"d{i}", "title": t.title(), "text": f"All about {t}: when and how to deal with {t}."}
        for i, t in enumerate(TOPICS)
    ]
    queries = [{"_id": f"q{i}", "text": f"how to handle {t}"} for i, t in enumerate(TOPICS)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(len(TOPICS)))
    )
    return folder


@pytest.mark.slow
def test_the_command_trains_a_cross_encoder_the_product_loads_and_ranks_with(
    tmp_path: Path, embedder: Embedder
) -> None:
    from sentence_transformers import CrossEncoder

    data, out, splits = tiny_beir(tmp_path / "tiny"), tmp_path / "model", tmp_path / "splits"
    main(
        ["--data", str(data), "--out", str(out), "--splits", str(splits), "--store-root", str(tmp_path / "stores"),
         "--held-out", "0.34", "--layers", "1", "--max-length", "32", "--group-size", "3", "--groups-per-step", "2",
         "--hard-negatives", "2", "--random-negatives", "1", "--epochs", "1", "--threads", "1", "--no-onnx"]
    )  # fmt: skip
    fit, held = read_qrels(splits / "tiny" / "fit.tsv"), read_qrels(splits / "tiny" / "heldout.tsv")
    assert held and fit and not set(fit) & set(held)
    record = json.loads((out / "sextant-training.json").read_text())
    assert record["sources"][0]["groups"] == len(fit) and record["steps"] >= 1
    assert {g["query_id"] for g in map(json.loads, (out / "groups-tiny.jsonl").read_text().splitlines()[1:])} <= set(
        fit
    )

    model = CrossEncoder(str(out), device="cpu")
    assert model.model.config.num_hidden_layers == 1 and model.predict([("q", "p")]).shape == (1,)

    settings = KbSettings(chroma_dir=tmp_path / "kb", reranker=str(out), _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        assert kb.stats().reranker.active and "torch" in kb.stats().reranker.detail
        kb.ingest("bees", LoadedDocument(text="Swarm control for bee colonies starts in May.", title="Bees"))
        kb.ingest("roses", LoadedDocument(text="Prune roses in late winter.", title="Roses"))
        result = kb.search("bee swarms", k=2, abstain=False)
    assert [h.scored_by for h in result.hits] == ["rerank", "rerank"]
    assert [h.chunk_id for h in result.hits] == [
        h.chunk_id for h in fused_rerank_order(result.hits, lambda h: h.chunk_id)
    ]


def test_roc_auc_is_the_share_of_correctly_ordered_pairs() -> None:
    assert roc_auc([0.1, 0.2], [0.3, 0.4]) == 1.0
    assert roc_auc([0.3], [0.3, 0.1]) == 0.25


def test_exits_on_turns_the_named_errors_into_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited, exits_on("sextant-train-x", ValueError):
        raise ValueError("no training question has a judged document")
    assert exited.value.code == 2
    assert capsys.readouterr().err == "sextant-train-x: no training question has a judged document\n"
    with pytest.raises(KeyError), exits_on("sextant-train-x", ValueError):
        raise KeyError("a bug, not bad input")
