from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import beir
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings
from tests.conftest import require_data


def _write_beir(folder: Path) -> None:
    docs = [
        {"_id": "d1", "title": "Espresso", "text": "Descale the espresso machine every eight weeks."},
        {"_id": "d2", "title": "Bees", "text": "Swarm control for bee colonies starts in May."},
        {"_id": "d3", "title": "Tea", "text": "Oolong tea is partially oxidised."},
    ]
    queries = [{"_id": "q1", "text": "how often to descale an espresso machine"}, {"_id": "q2", "text": "bee swarms"}]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\n", encoding="utf-8")


def test_a_beir_folder_runs_through_the_product(tmp_path: Path, embedder: Embedder) -> None:
    _write_beir(tmp_path / "mini")
    settings = KbSettings(chroma_dir=tmp_path / "store", max_per_document=20, _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        assert beir.ingest(kb, beir.read_corpus(tmp_path / "mini")) == 3
        assert kb.document("d1").text == "Espresso Descale the espresso machine every eight weeks."
        qrels = beir.read_qrels(tmp_path / "mini" / "qrels" / "test.tsv")
        scores = beir.run(kb, beir.read_queries(tmp_path / "mini"), qrels, "rrf")
        assert beir.rank_documents(kb, "bee swarms", "lexical")[0] == "d2"
    # Both queries find their only relevant document first: perfect scores.
    assert scores["queries"] == 2 and scores["ndcg@10"] == 1.0 and scores["recall@100"] == 1.0


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(beir.BeirError, match="no qrels file"):
        beir.read_qrels(tmp_path / "missing.tsv")
    with pytest.raises(beir.BeirError, match="BEIR-format"):
        list(beir.read_corpus(tmp_path))
    bad = tmp_path / "bad.tsv"
    bad.write_text("query-id\tcorpus-id\tscore\nq1\td1\tlots\n", encoding="utf-8")
    with pytest.raises(beir.BeirError, match=r"bad\.tsv:2"):
        beir.read_qrels(bad)


def test_the_shared_qrels_load_with_the_documented_query_counts() -> None:
    scifact = beir.read_qrels(require_data("beir", "scifact", "qrels", "train.tsv"))
    nfcorpus = beir.read_qrels(require_data("beir", "nfcorpus", "qrels", "dev.tsv"))
    assert (len(scifact), len(nfcorpus)) == (809, 324)
    assert {g for q in nfcorpus.values() for g in q.values()} >= {1, 2}  # graded relevance kept


def test_each_embedder_gets_its_own_store_so_none_is_refused_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEXTANT_EMBEDDER", raising=False)
    assert beir.store_settings("scifact", tmp_path).store_dir() == tmp_path / "beir-scifact"
    assert beir.store_settings("scifact", tmp_path, tmp_path / "mine").store_dir() == tmp_path / "mine"
    monkeypatch.setenv("SEXTANT_EMBEDDER", "models/embedder nf/")
    settings = beir.store_settings("scifact", tmp_path)
    assert settings.store_dir() == tmp_path / "beir-scifact-embedder-nf" and settings.max_per_document == 20
