"""Would a trained question encoder help as a third list beside the packaged one, rather than in its place?

A probe, not a product path (learning/query-encoder.md): a question encoder trained on other collections lifts
them and lowers the golden sets when it replaces MiniLM's question side. Here the store is searched twice, with
MiniLM's question vector and with the trained encoder's, and both dense lists are fused with BM25 by the
product's RRF (three lists). Cosines for the cap and abstention stay MiniLM's, as in the product.

    python bench/query_side_ensemble.py --encoder /tmp/qe/soup2 --set small large \
        --beir scifact:models/splits/scifact/heldout.tsv nfcorpus:dev

A variant is ``off`` (the product), ``replace`` (the encoder in MiniLM's place, as ``SEXTANT_QUERY_ENCODER``
does) or ``third:W`` (the encoder's list fused as a third, weight W against 1 for each of the others).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from beir_split import read_split

import sextant.kb.search as search_module
from sextant.evals import beir
from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate
from sextant.kb.embeddings import Embedder, load_query_encoder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

RRF = search_module.reciprocal_rank_fusion


def use_variant(kb: KnowledgeBase, encoder: Embedder, variant: str) -> None:
    """Set ``kb``'s search to ``variant`` with ``encoder`` as the trained question side."""
    searcher = kb.searcher
    searcher.embedder = encoder if variant == "replace" else kb.embedder
    search_module.reciprocal_rank_fusion = RRF  # type: ignore[assignment]
    if not variant.startswith("third:"):
        return
    weight = float(variant.split(":", 1)[1])
    asked: dict[str, np.ndarray] = {}
    embed = kb.embedder.embed_query

    def embed_query(query: str) -> np.ndarray:
        asked["vector"] = encoder.embed_query(query)
        return embed(query)

    def fuse(rankings: Sequence[Sequence[str]], k: int, weights: Sequence[float] | None = None) -> list:
        third = [i for i, _ in searcher._dense(asked["vector"], searcher.depth, None, None)]
        return RRF([*rankings, third], k, [*(weights or [1.0] * len(rankings)), weight])

    searcher.embedder = _Asking(kb.embedder, embed_query)
    search_module.reciprocal_rank_fusion = fuse  # type: ignore[assignment]


class _Asking:
    """``embedder`` whose ``embed_query`` is ``embed_query``; everything else is the embedder's."""

    def __init__(self, embedder: Embedder, embed_query: object) -> None:
        self._embedder, self.embed_query = embedder, embed_query

    def __getattr__(self, name: str) -> object:
        return getattr(self._embedder, name)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", required=True, help="a question encoder's folder (sextant-train-query-encoder)")
    parser.add_argument("--eval-store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SEXTANT_DATA_DIR", "../shared/data")))
    parser.add_argument("--set", nargs="*", default=[], choices=["small", "large"], help="golden sets")
    parser.add_argument("--beir", nargs="*", default=[], metavar="DATASET:SPLIT", help="split: a name or a .tsv")
    parser.add_argument("--variants", nargs="+", default=["off", "replace", "third:0.5", "third:1"])
    parser.add_argument("--limit", type=int, default=600, help="a seeded sample of a larger BEIR split")
    args = parser.parse_args(argv)
    quiet_model_loading()
    sets = golden_sets(Path("eval"))
    runs = [(f"golden {name}", KbSettings(chroma_dir=args.eval_store / name), name) for name in args.set]
    runs += [(pair, beir.store_settings(pair.split(":", 1)[0], args.eval_store), pair) for pair in args.beir]
    for label, settings, what in runs:
        with KnowledgeBase.open(settings) as kb:
            encoder = load_query_encoder(args.encoder, kb.embedder)
            for variant in args.variants:
                use_variant(kb, encoder, variant)
                if what in sets:
                    ndcg = evaluate(kb, load_golden(sets[what].golden), ("rrf",))[0].metrics["ndcg@10"]
                else:
                    found = read_split(args.data, what, args.limit)
                    ndcg = float(beir.run(kb, found.queries, found.qrels, "rrf")["ndcg@10"])
                print(f"{label} {variant}: nDCG@10 {ndcg:.4f}", flush=True)


if __name__ == "__main__":
    main()
