"""How should dense and BM25 lists be fused? A sweep of RRF's k, score fusion and the two lists' weights.

Runs the product's own search on the golden sets and, where their stores exist, the BEIR
train/dev sets (built by `sextant-eval` and `sextant-eval beir`). The dense and BM25 candidate
lists (and the query embedding) are memoised at the searcher's call boundary, so each variant
re-runs only fusion and what follows it.

    python bench/fusion_sweep.py [--eval-store .sextant-eval] [--data ../shared/data] [--json OUT]
    python bench/fusion_sweep.py --fusion scores rrf --ks 60 --weights 1:1 1.2:1 1.5:1 1.9:1 \
        --beir scifact:models/splits/scifact/fit.tsv nfcorpus:train --limit 600
    SEXTANT_EMBEDDER=models/embeddinggemma-300m python bench/fusion_sweep.py --skip-golden --beir nfcorpus:train \
        --weights 1:1 2:1 3:1 5:1 1:0 --ks 60 --limit 600

With ``SEXTANT_EMBEDDER`` set, the BEIR stores are that embedder's (``beir-<dataset>-<folder>``). A split
ending in ``.tsv`` is a qrels file (a held-out split of ``held_out_split``); otherwise ``qrels/<split>.tsv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from beir_split import read_split
from memo import memoise

from sextant.contract.results import Fusion
from sextant.evals import beir
from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.search import Searcher
from sextant.settings import KbSettings

RRF_KS = (10, 60)
WEIGHTS = ((1.0, 1.0), (1.5, 1.0), (1.0, 1.5))


def sweep(
    searcher: Searcher,
    score: Callable[[], dict[str, float]],
    weight_pairs: tuple[tuple[float, float], ...] = WEIGHTS,
    rrf_ks: tuple[int, ...] = RRF_KS,
    fusions: tuple[Fusion, ...] = ("rrf",),
) -> list[dict[str, Any]]:
    rows = []
    configured = searcher.fusion, searcher.rrf_k, searcher.weights
    for fusion in fusions:
        # Score fusion has no k: its rows are named by the configured one and run once.
        for rrf_k in rrf_ks if fusion == "rrf" else rrf_ks[:1]:
            for weights in weight_pairs:
                searcher.fusion, searcher.rrf_k, searcher.weights = fusion, rrf_k, weights
                rows.append({"fusion": fusion, "rrf_k": rrf_k, "weights": list(weights), **score()})
    searcher.fusion, searcher.rrf_k, searcher.weights = configured
    return rows


def weight_pair(text: str) -> tuple[float, float]:
    """``"2:1"`` as (dense 2.0, BM25 1.0)."""
    dense, _, lexical = text.partition(":")
    try:
        return float(dense), float(lexical)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected DENSE:BM25 weights such as 2:1, got {text!r}") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SEXTANT_DATA_DIR", "../shared/data")))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--skip-beir", action="store_true", help="only the golden sets")
    parser.add_argument("--skip-golden", action="store_true", help="only the BEIR sets")
    parser.add_argument(
        "--beir",
        nargs="+",
        default=["scifact:train", "nfcorpus:dev"],
        metavar="DATASET:SPLIT",
        help="BEIR sets and the qrels split each is scored on",
    )
    parser.add_argument(
        "--weights",
        nargs="+",
        type=weight_pair,
        default=list(WEIGHTS),
        metavar="DENSE:BM25",
        help="the weight pairs to try, e.g. 1:1 2:1 1:0 (default: %(default)s)",
    )
    parser.add_argument("--ks", nargs="+", type=int, default=list(RRF_KS), help="RRF k values (default: %(default)s)")
    parser.add_argument(
        "--fusion", nargs="+", choices=get_args(Fusion), default=["rrf"], help="fusions to try (default: rrf)"
    )
    parser.add_argument(
        "--limit", type=int, help="score a seeded sample of this many of each BEIR split's questions (default: all)"
    )
    args = parser.parse_args()
    weight_pairs, rrf_ks, fusions = tuple(args.weights), tuple(args.ks), tuple(args.fusion)
    quiet_model_loading()
    results: dict[str, list[dict[str, Any]]] = {}

    for gs in [] if args.skip_golden else golden_sets(args.eval_dir).values():
        questions = load_golden(gs.golden)
        with KnowledgeBase.open(KbSettings(chroma_dir=args.eval_store / gs.name)) as kb:
            memoise(kb.searcher)

            def golden_score(kb: KnowledgeBase = kb, questions: Any = questions) -> dict[str, float]:
                metrics = evaluate(kb, questions, ("rrf",))[0].metrics
                return {"ndcg@10": metrics["ndcg@10"], "hit@1": metrics["hit@1"], "recall@5": metrics["recall@5"]}

            results[f"golden-{gs.name}"] = sweep(kb.searcher, golden_score, weight_pairs, rrf_ks, fusions)

    for pair in args.beir:
        settings = beir.store_settings(pair.split(":", 1)[0], args.eval_store)
        if args.skip_beir or not settings.store_dir().exists():
            continue
        found = read_split(args.data, pair, args.limit)
        queries, qrels = found.queries, found.qrels
        with KnowledgeBase.open(settings) as kb:
            memoise(kb.searcher)

            def beir_score(kb: KnowledgeBase = kb, queries: Any = queries, qrels: Any = qrels) -> dict[str, float]:
                out = beir.run(kb, queries, qrels, "rrf")
                return {"ndcg@10": float(out["ndcg@10"]), "recall@100": float(out["recall@100"])}

            results[f"{found.dataset}-{found.split}"] = sweep(kb.searcher, beir_score, weight_pairs, rrf_ks, fusions)

    for name, rows in results.items():
        best = max(rows, key=lambda r: r["ndcg@10"])
        default = ("rrf", 60, [1.0, 1.0])
        base = next((r for r in rows if (r["fusion"], r["rrf_k"], r["weights"]) == default), rows[0])
        print(f"\n### {name}: nDCG@10 by fusion (rows) and weights dense:BM25 (columns)\n")
        print("| fusion | " + " | ".join(f"{w[0]:g}:{w[1]:g}" for w in weight_pairs) + " |")
        print("|---|" + "---|" * len(weight_pairs))
        for fusion, rrf_k in dict.fromkeys((r["fusion"], r["rrf_k"]) for r in rows):
            cells = [f"{r['ndcg@10']:.3f}" for r in rows if (r["fusion"], r["rrf_k"]) == (fusion, rrf_k)]
            print(f"| {_label(fusion, rrf_k)} | " + " | ".join(cells) + " |")
        print(f"\nbaseline {_label(base['fusion'], base['rrf_k'])} {base['weights']} {base['ndcg@10']:.3f};", end=" ")
        print(f"best {_label(best['fusion'], best['rrf_k'])} {best['weights']} {best['ndcg@10']:.3f}")
        print("mean over variants:", f"{statistics.fmean(r['ndcg@10'] for r in rows):.3f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def _label(fusion: str, rrf_k: int) -> str:
    return f"rrf k={rrf_k}" if fusion == "rrf" else "scores"


if __name__ == "__main__":
    main()
