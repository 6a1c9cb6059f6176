"""Chunk size and rows per table chunk, measured on the golden sets.

Each variant gets its own store (everything re-chunked and re-embedded) and is graded by the
product's harness. BEIR is left out: one variant there costs ~45 minutes of embedding here.

    python bench/chunking_sweep.py [--store .sextant-eval/chunking]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate, ingest_corpus
from sextant.kb.chunking import ChunkingConfig
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

CHUNK_TOKENS = (128, 200, 254)
TABLE_ROWS = (2, 4, 8, 16)


def grade(store: Path, set_name: str, eval_dir: Path, config: ChunkingConfig, kind: str | None) -> str:
    gs = golden_sets(eval_dir)[set_name]
    questions = [q for q in load_golden(gs.golden) if kind is None or q.kind == kind or not q.answerable]
    with KnowledgeBase.open(KbSettings(chroma_dir=store, chunk_tokens=config.target)) as kb:
        kb.chunking = config
        ingest_corpus(kb, gs.corpus)
        chunks = kb.stats().chunks
        rows = {r.mode: r.metrics for r in evaluate(kb, questions, ("dense", "lexical", "rrf"))}
    return (
        f"{chunks} | {rows['dense']['ndcg@10']:.3f} | {rows['lexical']['ndcg@10']:.3f} | "
        f"{rows['rrf']['ndcg@10']:.3f} | {rows['rrf']['recall@5']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval/chunking"))
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    args = parser.parse_args()
    quiet_model_loading()
    print("| set | chunk tokens | chunks | dense | lexical | rrf | rrf recall@5 |")
    print("|---|---|---|---|---|---|---|")
    for set_name in ("small", "large"):
        for target in CHUNK_TOKENS:
            line = grade(args.store / f"{set_name}-{target}", set_name, args.eval_dir, ChunkingConfig(target), None)
            print(f"| {set_name} | {target} | {line} |", flush=True)
    print("\nTable questions of the 25-document set only (nDCG@10):\n")
    print("| rows per table chunk | chunks | dense | lexical | rrf | rrf recall@5 |")
    print("|---|---|---|---|---|---|")
    for rows in TABLE_ROWS:
        config = ChunkingConfig(target=200, max_table_rows=rows)
        print(
            f"| {rows} | {grade(args.store / f'table-{rows}', 'small', args.eval_dir, config, 'table')} |", flush=True
        )


if __name__ == "__main__":
    main()
