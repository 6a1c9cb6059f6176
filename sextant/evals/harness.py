"""Grade retrieval on a labelled question set: every mode on the same store, one row per mode.

Ranking metrics are computed over the answerable questions with abstention switched off, so they
measure the ranking alone; abstention is graded separately on every question.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sextant.contract.results import SearchMode, SearchResult
from sextant.evals.golden import Cited, Question, judge
from sextant.evals.metrics import abstention_rates, hit_at_1, mrr_at_k, ndcg_at_k, recall_at_k
from sextant.kb.document_ids import document_id_for
from sextant.kb.documents import LoadError
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.kb.loaders import load_file, supported_files

PRIMARY = "ndcg@10"
METRICS = ("hit@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
K = 10

Search = Callable[[str], SearchResult]


@dataclass(slots=True)
class ModeReport:
    """One row of the report."""

    mode: str
    available: bool = True
    detail: str = ""
    questions: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    abstain_correct: float = math.nan
    abstain_wrong: float = math.nan
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("abstain_correct", "abstain_wrong"):
            out[key] = None if math.isnan(out[key]) else round(out[key], 4)
        out["metrics"] = {k: round(v, 4) for k, v in self.metrics.items()}
        return out


def ingest_corpus(kb: KnowledgeBase, corpus: Path) -> list[str]:
    """Ingest every supported file under ``corpus`` (unchanged ones are skipped); returns refusals."""
    refused: list[str] = []
    with kb.batch():
        for path in supported_files(corpus):
            try:
                kb.ingest(document_id_for(path), load_file(path), source=path.name)
            except (LoadError, KnowledgeBaseError) as exc:
                refused.append(f"{path.name}: {exc}")
    return refused


def grade(mode: str, questions: Sequence[Question], search: Search) -> ModeReport:
    """Run every question through ``search`` and grade the results."""

    def retrieve(question: Question) -> tuple[Sequence[Cited], bool]:
        result = search(question.text)
        return result.hits, result.abstained

    return grade_retrievals(mode, questions, retrieve)


def grade_retrievals(
    mode: str, questions: Sequence[Question], retrieve: Callable[[Question], tuple[Sequence[Cited], bool]]
) -> ModeReport:
    """Grade what ``retrieve`` returns for each question: ranked passages, and whether it abstained."""
    started = time.perf_counter()
    per_metric: dict[str, list[float]] = {m: [] for m in METRICS}
    abstained: list[bool] = []
    for question in questions:
        hits, did_abstain = retrieve(question)
        abstained.append(did_abstain)
        if not question.answerable:
            continue
        ranked, qrels = judge(question, hits)
        per_metric["hit@1"].append(hit_at_1(ranked, qrels))
        per_metric["recall@5"].append(recall_at_k(ranked, qrels, 5))
        per_metric["recall@10"].append(recall_at_k(ranked, qrels, 10))
        per_metric["mrr@10"].append(mrr_at_k(ranked, qrels, 10))
        per_metric["ndcg@10"].append(ndcg_at_k(ranked, qrels, 10))
    correct, wrong = abstention_rates(abstained, [q.answerable for q in questions])
    return ModeReport(
        mode=mode,
        questions=len(questions),
        metrics={m: statistics.fmean(v) if v else 0.0 for m, v in per_metric.items()},
        abstain_correct=correct,
        abstain_wrong=wrong,
        seconds=round(time.perf_counter() - started, 2),
    )


def evaluate(kb: KnowledgeBase, questions: Sequence[Question], modes: Sequence[SearchMode]) -> list[ModeReport]:
    """One report row per mode; ``rerank`` without a loaded cross-encoder is a row saying why."""
    rows: list[ModeReport] = []
    for mode in modes:
        if mode == "rerank" and not kb.reranker.active:
            rows.append(ModeReport(mode=mode, available=False, detail=kb.reranker.state.detail))
            continue

        def search(text: str, mode: SearchMode = mode) -> SearchResult:
            return kb.search(text, K, mode=mode, detail="full", abstain=False)

        rows.append(grade(mode, questions, search))
    return rows


def table(rows: Sequence[ModeReport], title: str) -> str:
    """A Markdown table of the rows; the primary metric is named in the heading."""
    head = ["mode", *METRICS, "abstain ok", "abstain wrong", "s"]
    lines = [
        f"### {title} (primary: {PRIMARY})",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in rows:
        if not row.available:
            lines.append(f"| {row.mode} | unavailable: {row.detail} |" + " |" * (len(head) - 2))
            continue
        cells = [f"{row.metrics[m]:.3f}" for m in METRICS]
        cells += [_pct(row.abstain_correct), _pct(row.abstain_wrong), f"{row.seconds:.1f}"]
        lines.append(f"| {row.mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.0%}"
