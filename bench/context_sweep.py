"""Should the retrievers index a chunk under its document title and section?

Builds one store per indexing policy for each golden set (same chunks, same embedder) and grades
dense, lexical and RRF retrieval on it with the product's own harness.

    python bench/context_sweep.py [--store .sextant-eval/context] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate, ingest_corpus
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.indexing import IndexingPolicy
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

POLICIES = {
    "chunk only": IndexingPolicy(dense_context=False, lexical_context=False),
    "context for dense": IndexingPolicy(dense_context=True, lexical_context=False),
    "context for BM25": IndexingPolicy(dense_context=False, lexical_context=True),
    "context for both": IndexingPolicy(dense_context=True, lexical_context=True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval/context"))
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    quiet_model_loading()
    results = []
    print("| set | policy | dense nDCG@10 | lexical nDCG@10 | rrf nDCG@10 | rrf hit@1 | rrf recall@5 |")
    print("|---|---|---|---|---|---|---|")
    for gs in golden_sets(args.eval_dir).values():
        questions = load_golden(gs.golden)
        for slug, (name, policy) in enumerate(POLICIES.items()):
            settings = KbSettings(chroma_dir=args.store / f"{gs.name}-{slug}")
            with KnowledgeBase.open(settings, policy=policy) as kb:
                ingest_corpus(kb, gs.corpus)
                rows = {r.mode: r.metrics for r in evaluate(kb, questions, ("dense", "lexical", "rrf"))}
            results.append({"set": gs.name, "policy": name, "metrics": rows})
            print(
                f"| {gs.name} | {name} | {rows['dense']['ndcg@10']:.3f} | {rows['lexical']['ndcg@10']:.3f} | "
                f"{rows['rrf']['ndcg@10']:.3f} | {rows['rrf']['hit@1']:.3f} | {rows['rrf']['recall@5']:.3f} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
