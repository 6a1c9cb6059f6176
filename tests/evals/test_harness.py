"""The retrieval harness: hand-computed grades, the report row's JSON and table, and a real store graded by mode."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sextant.evals.golden import Question, Target
from sextant.evals.harness import METRICS, PRIMARY, ModeReport, evaluate, grade_retrievals, ingest_corpus, table
from sextant.kb.knowledge_base import KnowledgeBase


@dataclass(frozen=True)
class Hit:
    """A retrieved passage as judging reads it (the fields of ``golden.Cited``)."""

    chunk_id: str
    document_id: str
    section: str | None = None
    text: str | None = None
    pages: list[int] = field(default_factory=list)


QUESTIONS = [
    Question("q1", "How often to descale?", True, (Target("espresso", None, "Descaling", ""),), "fact"),
    Question("q2", "When do swarms start?", True, (Target("bees", None, "Swarms", ""),), "fact"),
    Question("q3", "Who won in 2018?", False, (), "unanswerable"),
]
RETRIEVED = {
    "q1": ([Hit("bees-0", "bees", "Swarms"), Hit("espresso-0", "espresso", "Descaling")], False),
    "q2": ([Hit("bees-0", "bees", "Swarms")], True),  # abstained, but its ranking is still graded
    "q3": ([], True),
}


def test_grades_are_the_hand_computed_means_over_answerable_questions() -> None:
    row = grade_retrievals("dense", QUESTIONS, lambda q: RETRIEVED[q.id])
    assert (row.mode, row.questions, row.available) == ("dense", 3, True)
    # q1 finds its target second, q2 first; q3 has no target and is left out of the ranking metrics.
    assert row.metrics["hit@1"] == 0.5
    assert row.metrics["recall@5"] == row.metrics["recall@10"] == 1.0
    assert row.metrics["mrr@10"] == 0.75
    assert row.metrics["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1.0) / 2)
    assert (row.abstain_correct, row.abstain_wrong) == (1.0, 0.5)  # q3 abstained on; q2 wrongly


def test_a_report_row_as_json_rounds_and_writes_a_missing_rate_as_null() -> None:
    row = grade_retrievals("lexical", QUESTIONS[:2], lambda q: RETRIEVED[q.id])
    out = row.as_json()
    assert out["abstain_correct"] is None and out["abstain_wrong"] == 0.5  # no unanswerable question
    assert out["metrics"]["ndcg@10"] == round((1 / math.log2(3) + 1.0) / 2, 4)
    assert set(out["metrics"]) == set(METRICS)


def test_the_table_names_the_primary_metric_and_says_why_a_mode_is_unavailable() -> None:
    graded = grade_retrievals("rrf", QUESTIONS, lambda q: RETRIEVED[q.id])
    missing = ModeReport(mode="rerank", available=False, detail="SEXTANT_RERANKER unset")
    lines = table([graded, missing], "small").splitlines()
    assert lines[0] == f"### small (primary: {PRIMARY})"
    assert lines[2].startswith("| mode | hit@1 | recall@5 |")
    assert lines[2].endswith("| abstain ok | abstain wrong | s |")
    assert lines[4].startswith("| rrf | 0.500 | 1.000 | 1.000 | 0.750 | 0.815 | 100% | 50% |")
    assert lines[5].startswith("| rerank | unavailable: SEXTANT_RERANKER unset |")
    no_rate = table([grade_retrievals("rrf", QUESTIONS[:1], lambda q: RETRIEVED[q.id])], "t").splitlines()[-1]
    assert "| n/a | 0% |" in no_rate


@pytest.mark.slow  # the real embedder
def test_a_corpus_ingests_with_refusals_named_and_each_mode_is_graded(kb: KnowledgeBase, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "espresso.md").write_text(
        "# Espresso care\n\n## Descaling\nDescale the machine every eight weeks with citric acid.\n", encoding="utf-8"
    )
    (corpus / "bees.md").write_text("# Bees\n\n## Swarms\nSwarm control starts in May.\n", encoding="utf-8")
    (corpus / "broken.docx").write_bytes(b"not a zip archive")
    refused = ingest_corpus(kb, corpus)
    assert len(refused) == 1 and refused[0].startswith("broken.docx: ")
    assert {d.id for d in kb.documents()} == {"espresso", "bees"}
    assert ingest_corpus(kb, corpus) == refused  # unchanged files are skipped, the bad one refused again
    # A short file is one chunk whose section is its first heading: the evidence identifies the passage.
    questions = [
        Question("q1", "How often to descale?", True, (Target("espresso", None, None, "every eight weeks"),), "fact"),
        Question("q2", "When do swarms start?", True, (Target("bees", None, None, "starts in May"),), "fact"),
        QUESTIONS[2],
    ]
    lexical, rerank = evaluate(kb, questions, ("lexical", "rerank"))
    assert lexical.available and lexical.metrics["hit@1"] == 1.0 and lexical.questions == 3
    assert not rerank.available and rerank.detail  # no cross-encoder configured: a row saying why
