"""``sextant-train-reranker pseudo``: a folder of documents becomes a BEIR folder the trainer reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals.beir import read_corpus, read_qrels, read_queries
from sextant.kb.chunking import ChunkingConfig
from sextant.kb.embeddings import Embedder
from sextant.training.cli import main
from sextant.training.pseudo_beir import chunk_folder

# Parts long enough that the knowledge base's 200-token chunks start at each heading: a chunk is filed under
# the section it starts in.
_FILLER = " The manufacturer's warranty asks for this to be logged in the service booklet each time." * 8
GUIDE = f"""\
# Espresso Machine Guide

This guide covers the care of the machine.{_FILLER}

## How often should the machine be descaled?

Descale every two months where the water is hard, and every four months where it is soft.{_FILLER}

## Cleaning the steam wand

Purge the wand after every use and wipe the milk off it with a damp cloth.{_FILLER}
"""

BEES = """\
# Beekeeping Notes

## Swarm season

A colony may swarm in late spring, when the hive is crowded and the queen is laying well.
"""


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "kitchen guides").mkdir(parents=True)
    (folder / "kitchen guides" / "espresso.md").write_text(GUIDE)
    (folder / "bees.md").write_text(BEES)
    return folder


def test_chunks_are_cut_as_the_knowledge_base_cuts_them_with_ids_a_store_accepts(
    docs: Path, embedder: Embedder
) -> None:
    chunks, failed = chunk_folder(docs, embedder, ChunkingConfig())
    assert failed == 0
    assert {c.doc_id for c in chunks} == {"bees.md", "kitchen-guides-espresso.md"}
    assert all(c.id.startswith(c.doc_id + "-") for c in chunks)
    assert "How often should the machine be descaled?" in {c.section for c in chunks}


def test_a_file_that_cannot_be_loaded_is_skipped_and_counted(docs: Path, embedder: Embedder) -> None:
    (docs / "broken.pdf").write_bytes(b"not a pdf")
    chunks, failed = chunk_folder(docs, embedder, ChunkingConfig())
    assert failed == 1 and chunks and not any(c.doc_id == "broken.pdf" for c in chunks)


def test_the_folder_holds_questions_judged_relevant_to_the_chunks_they_were_made_from(
    docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "pseudo"
    main(["pseudo", "--docs", str(docs), "--out", str(out), "--sources", "heading", "title"])

    corpus = {d.id: d for d in read_corpus(out)}
    queries = read_queries(out)
    qrels = read_qrels(out / "qrels" / "train.tsv")
    assert set(qrels) == set(queries)
    assert all(doc in corpus for judged in qrels.values() for doc in judged)
    by_text = {text: qid for qid, text in queries.items()}
    descale = qrels[by_text["How often should the machine be descaled?"]]
    assert all("Descale every two months" in corpus[doc].text for doc in descale)
    assert {corpus[doc].text.startswith("# Beekeeping") for doc in qrels[by_text["Beekeeping Notes"]]} == {True}
    sources = {json.loads(line)["source"] for line in (out / "queries.jsonl").read_text().splitlines()}
    assert sources == {"heading", "title"}


@pytest.mark.slow
def test_the_local_model_s_questions_are_judged_relevant_to_the_chunk_each_was_written_about(
    docs: Path, tmp_path: Path, local_test_model: None
) -> None:
    out = tmp_path / "pseudo"
    args = ["pseudo", "--docs", str(docs), "--out", str(out), "--sources", "model", "title"]
    main([*args, "--model-questions", "3", "--threads", "1"])

    written = [json.loads(line) for line in (out / "model-questions.jsonl").read_text().splitlines()]
    asked = {row["question"]: row["chunk"] for row in written if row["question"]}
    queries = read_queries(out)
    qrels = read_qrels(out / "qrels" / "train.tsv")
    model_ids = {qid for qid in queries if qid.startswith("model-")}
    assert len(written) >= 3 and {queries[qid] for qid in model_ids} == set(asked)
    assert all(set(qrels[qid]) == {asked[queries[qid]]} for qid in model_ids)
    assert {qid.split("-")[0] for qid in queries} <= {"model", "title"}

    main([*args, "--model-questions", "3", "--threads", "1"])
    rewritten = (out / "model-questions.jsonl").read_text().splitlines()
    assert len(rewritten) == len(written), "a rerun reads the cache instead of asking again"


def test_a_missing_folder_and_a_folder_without_questions_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["pseudo", "--docs", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert exited.value.code == 2 and "no folder at" in capsys.readouterr().err
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "note.txt").write_text("short")
    with pytest.raises(SystemExit) as exited:
        main(["pseudo", "--docs", str(tmp_path / "plain"), "--out", str(tmp_path / "out"), "--sources", "heading"])
    assert exited.value.code == 2 and "no heading in the documents" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_trainer_mines_and_trains_on_the_folder(docs: Path, tmp_path: Path) -> None:
    pseudo = tmp_path / "pseudo"
    main(["pseudo", "--docs", str(docs), "--out", str(pseudo)])
    out = tmp_path / "model"
    main(
        ["--data", str(pseudo), "--out", str(out), "--splits", str(tmp_path / "splits"),
         "--store-root", str(tmp_path / "stores"), "--held-out", "0.2", "--layers", "1", "--max-length", "32",
         "--group-size", "3", "--groups-per-step", "2", "--hard-negatives", "2", "--random-negatives", "1",
         "--max-steps", "1", "--threads", "1", "--no-onnx"]
    )  # fmt: skip
    record = json.loads((out / "sextant-training.json").read_text())
    assert record["sources"][0]["dataset"] == "pseudo" and record["sources"][0]["groups"] > 0
    assert record["steps"] == 1
