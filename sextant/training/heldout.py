"""``sextant-train-reranker evaluate``: what a trained reranker buys on queries it never saw.

    sextant-train-reranker evaluate --model DIR [DIR ...] --data BEIR_DIR --qrels HELD_OUT.tsv
    sextant-train-reranker evaluate --model DIR [DIR ...] --golden

BEIR: every query goes through the product's own ``Searcher`` at its default candidate depth (the
candidates ``SEXTANT_RERANKER`` re-scores in use), once without a reranker (``rrf``) and once per
model (``rerank``: ordered by the cross-encoder alone, ``SEXTANT_RERANK_FUSION=replace``).
``rerank+rrf`` fuses the cross-encoder's order with the dense and BM25 orders by reciprocal rank, the
product's default. Documents are placed by their best chunk, as ``sextant-eval beir`` places them.

Golden sets: can the reranker's best score tell unanswerable questions from answerable ones better
than the best dense cosine that ``AbstentionRule`` thresholds? Reported as ROC AUC, and as the share
of unanswerable questions caught at the strictest threshold that refuses no answerable one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sextant.contract.results import Hit
from sextant.evals import beir
from sextant.evals.metrics import ndcg_at_k
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.rerank import Reranker
from sextant.kb.search import Searcher, fused_rerank_order
from sextant.training.cli import exits_on

DEPTH = 30  # the searcher's default: what the product reranks


def documents(hits: Sequence[Hit]) -> list[str]:
    """Distinct document ids, each placed by its best chunk."""
    return list(dict.fromkeys(h.document_id for h in hits))


def fused_as_the_product_orders(hits: Sequence[Hit]) -> list[Hit]:
    """Hits in the cross-encoder's order turned into the default fused order: the re-scored ones
    fused with their dense and BM25 ranks, the others after them as they were."""
    rescored = [h for h in hits if h.scores.rerank is not None]
    return fused_rerank_order(rescored, lambda h: h.chunk_id) + [h for h in hits if h.scores.rerank is None]


def searcher_with(kb: KnowledgeBase, reranker: Reranker, depth: int) -> Searcher:
    return Searcher(
        kb.searcher.embedder,
        kb.store,
        kb.lexical,
        reranker,
        max_per_document=kb.searcher.max_per_document,
        depth=depth,
        fusion=kb.searcher.fusion,
        weights=kb.searcher.weights,
        rerank_fusion="replace",
        rerank_candidates=kb.searcher.rerank_candidates,
    )


def evaluate_beir(
    kb: KnowledgeBase, queries: dict[str, str], qrels: dict[str, dict[str, int]], models: Sequence[str], depth: int
) -> list[dict[str, Any]]:
    """One row for ``rrf`` and two per model (``rerank``, ``rerank+rrf``) with nDCG@10 and rerank ms."""
    judged = sorted(q for q in qrels if q in queries and any(g > 0 for g in qrels[q].values()))
    if not judged:
        raise beir.BeirError("no query in the qrels file is in queries.jsonl")
    plain = searcher_with(kb, Reranker(None), depth)
    rows = [
        {
            "system": "rrf",
            "ndcg@10": _mean(
                ndcg_at_k(
                    documents(plain.search(queries[q], 2 * depth, mode="rrf", detail="ids", abstain=False).hits),
                    qrels[q],
                    10,
                )
                for q in judged
            ),
        }
    ]
    for model in models:
        reranker = Reranker(model, threads=kb.settings.threads)
        if not reranker.active:
            raise beir.BeirError(f"reranker {model!r} {reranker.state.detail}")
        searcher = searcher_with(kb, reranker, depth)
        alone, fused, ms = [], [], []
        for q in judged:
            result = searcher.search(queries[q], 2 * depth, mode="rerank", detail="full", abstain=False)
            alone.append(ndcg_at_k(documents(result.hits), qrels[q], 10))
            fused.append(ndcg_at_k(documents(fused_as_the_product_orders(result.hits)), qrels[q], 10))
            ms.append(result.timings_ms["rerank"])
        latency = {"rerank_ms_p50": round(statistics.median(ms), 1), "rerank_ms_mean": round(statistics.fmean(ms), 1)}
        rows.append({"system": f"rerank {model}", "ndcg@10": _mean(alone), **latency, "runs": reranker.state.detail})
        rows.append({"system": f"rerank+rrf {model}", "ndcg@10": _mean(fused)})
    return [{"queries": len(judged), "depth": depth, **row} for row in rows]


def roc_auc(negatives: Sequence[float], positives: Sequence[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not negatives or not positives:
        return float("nan")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def abstention_signals(kb: KnowledgeBase, questions: Sequence[Any], model: str) -> dict[str, Any]:
    """Best dense cosine against best reranker probability as the signal for "the corpus answers this"."""
    reranker = Reranker(model, threads=kb.settings.threads)
    searcher = searcher_with(kb, reranker, DEPTH)
    signals: dict[str, tuple[list[float], list[float]]] = {"best_dense": ([], []), "best_rerank": ([], [])}
    for question in questions:
        result = searcher.search(question.text, 10, mode="rerank", detail="ids", abstain=False)
        side = 1 if question.answerable else 0
        signals["best_dense"][side].append(result.best_dense)
        signals["best_rerank"][side].append(max((h.scores.rerank or 0.0 for h in result.hits), default=0.0))
    out: dict[str, Any] = {"answerable": len(signals["best_dense"][1]), "unanswerable": len(signals["best_dense"][0])}
    for name, (unanswerable, answerable) in signals.items():
        floor = min(answerable, default=0.0)  # the strictest threshold that refuses no answerable question
        out[name] = {
            "roc_auc": round(roc_auc(unanswerable, answerable), 3),
            "caught_refusing_none": round(sum(s < floor for s in unanswerable) / max(1, len(unanswerable)), 3),
            "lowest_answerable": round(floor, 4),
        }
    return out


def _mean(values: Any) -> float:
    return round(statistics.fmean(list(values)), 4)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-train-reranker evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", nargs="+", required=True, help="CrossEncoder folders (or names)")
    parser.add_argument("--data", type=Path, help="BEIR folder")
    parser.add_argument("--qrels", type=Path, help="held-out qrels file (from sextant-train-reranker's --splits)")
    parser.add_argument("--golden", action="store_true", help="abstention signals on the golden sets")
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    parser.add_argument("--store-root", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--depth", type=int, default=DEPTH, help="candidates per retriever, as the searcher's depth")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sextant.kb.embeddings import quiet_model_loading
    from sextant.settings import KbSettings

    quiet_model_loading()
    results: dict[str, Any] = {}
    with exits_on("sextant-train-reranker evaluate", beir.BeirError):
        if args.data and args.qrels:
            with KnowledgeBase.open(beir.store_settings(args.data.resolve().name, args.store_root)) as kb:
                rows = evaluate_beir(
                    kb, beir.read_queries(args.data), beir.read_qrels(args.qrels), args.model, args.depth
                )
            results["beir"] = [{"dataset": args.data.resolve().name, "qrels": str(args.qrels), **r} for r in rows]
            for row in results["beir"]:
                print(json.dumps(row))
    if args.golden:
        from sextant.evals.cli import golden_sets
        from sextant.evals.golden import load_golden

        results["abstention"] = []
        for gs in golden_sets(args.eval_dir).values():
            with KnowledgeBase.open(KbSettings(chroma_dir=args.store_root / gs.name)) as kb:
                for model in args.model:
                    row = {"set": gs.name, "model": model, **abstention_signals(kb, load_golden(gs.golden), model)}
                    results["abstention"].append(row)
                    print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
