"""Does the per-document cap help, and at which limit, competitiveness and candidate depth?

Runs the product's search (RRF, k = 10) on the 25-document golden set with the cap's settings
varied; retrieval is memoised so each variant re-runs only fusion and what follows. (The R-intro
set is one document, where the cap has nothing to give a slot to; BEIR is judged per document.)

    python bench/cap_sweep.py [--eval-store .sextant-eval]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memo import memoise

from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    args = parser.parse_args()
    quiet_model_loading()
    gs = golden_sets(args.eval_dir)["small"]
    questions = load_golden(gs.golden)
    print("| depth | max per document | competitive | nDCG@10 | hit@1 | recall@5 | recall@10 |")
    print("|---|---|---|---|---|---|---|")
    with KnowledgeBase.open(KbSettings(chroma_dir=args.eval_store / gs.name)) as kb:
        memoise(kb.searcher)
        for depth in (30, 60):
            for limit in (1, 2, 3, 20):
                for competitive in (0.5, 0.0) if limit < 20 else (0.5,):
                    kb.searcher.depth, kb.searcher.max_per_document = depth, limit
                    kb.searcher.competitive = competitive
                    m = evaluate(kb, questions, ("rrf",))[0].metrics
                    shown = "off" if limit == 20 else str(limit)
                    print(
                        f"| {depth} | {shown} | {competitive:g} | {m['ndcg@10']:.3f} | {m['hit@1']:.3f} | "
                        f"{m['recall@5']:.3f} | {m['recall@10']:.3f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
