"""``sextant-eval beir``: a BEIR-format set through the product's own ingestion and search.

sextant-eval beir --data DIR [--qrels FILE] [--split train|dev|test] [--mode M ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from sextant.evals import beir

MODES = ("dense", "lexical", "rrf", "rerank", "hybrid")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="sextant-eval beir", description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    parser.add_argument("--split", default="test", help="qrels/<split>.tsv when --qrels is not given")
    parser.add_argument("--qrels", type=Path, help="any qrels TSV, e.g. a held-out test split")
    parser.add_argument("--mode", nargs="+", choices=MODES, default=["dense", "lexical", "rrf"])
    parser.add_argument("--store", type=Path, help="store (default .sextant-eval/beir-<dataset>, one per embedder)")
    parser.add_argument("--json", type=Path, help="write one result object per mode as a JSON list")
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sextant.kb.embeddings import quiet_model_loading
    from sextant.kb.knowledge_base import KnowledgeBase

    quiet_model_loading()
    dataset = args.data.resolve().name
    qrels_path = args.qrels or args.data / "qrels" / f"{args.split}.tsv"
    try:
        qrels = beir.read_qrels(qrels_path)
        queries = beir.read_queries(args.data)
        docs = beir.read_corpus(args.data)
        settings = beir.store_settings(dataset, Path(".sextant-eval"), args.store)
        store = settings.store_dir()
        with KnowledgeBase.open(settings) as kb:
            n = beir.ingest(kb, docs, progress=lambda c: print(f"  ingested {c} documents", file=sys.stderr))
            print(f"{dataset}: {n} documents, {kb.stats().chunks} chunks in {store}", file=sys.stderr)
            results = []
            split = args.split if args.qrels is None else qrels_path.stem
            for mode in args.mode:
                row = {"dataset": dataset, "split": split, "mode": mode}
                if mode == "rerank" and not kb.reranker.active:
                    results.append({**row, "unavailable": f"no cross-encoder: {kb.reranker.state.detail}"})
                else:
                    results.append({**row, **beir.run(kb, queries, qrels, mode)})
                print(json.dumps(results[-1]))
    except beir.BeirError as exc:
        print(f"sextant-eval beir: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
