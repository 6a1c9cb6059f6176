"""Would a trained question encoder help as a third list beside the packaged one, rather than in its place?

A probe, not a product path (learning/query-encoder.md): a question encoder trained on other collections lifts
them and lowers the golden sets when it replaces MiniLM's question side. Here the store is searched twice, with
MiniLM's question vector and with the trained encoder's, and both dense lists are fused with BM25 by the
product's RRF (three lists): the encoder's is a ranked list the searcher fuses beside its own two
(``Searcher.extra``). Cosines for the cap and abstention stay MiniLM's, as in the product.

    python bench/query_side_ensemble.py --encoder /tmp/qe/soup2 --set small large \
        --beir scifact:models/splits/scifact/heldout.tsv nfcorpus:dev

A variant is ``off`` (the product), ``replace`` (the encoder in MiniLM's place, as ``SEXTANT_QUERY_ENCODER``
does) or ``third:W`` (the encoder's list fused as a third, weight W against 1 for each of the others).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from beir_split import BeirSplit, read_split
from probe_sets import add_set_arguments

from sextant.evals import beir
from sextant.evals.cli import golden_sets
from sextant.evals.golden import Question, load_golden
from sextant.evals.harness import evaluate
from sextant.kb.embeddings import Embedder, load_query_encoder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.ranked_lists import Asked, DenseList, Ranked, Retriever
from sextant.kb.stored import StoredChunk
from sextant.settings import KbSettings


class EncoderList:
    """The store's dense list searched from ``encoder``'s vector of the question: a third list for the searcher."""

    retriever: Retriever = "dense"
    stage = "dense_encoder"

    def __init__(self, dense: DenseList, encoder: Embedder, weight: float) -> None:
        self.dense, self.encoder, self.weight = dense, encoder, weight
        self._vectors: dict[str, np.ndarray] = {}

    def ranked(self, asked: Asked) -> Ranked:
        return self.dense.ranked(self._own(asked))

    def scores(self, asked: Asked, ranked: Ranked, candidates: Mapping[str, StoredChunk]) -> dict[str, float]:
        return self.dense.scores(self._own(asked), ranked, candidates)

    def _own(self, asked: Asked) -> Asked:
        """``asked`` from the encoder's vector; feedback's moved vector is the packaged encoder's, not this one's."""
        if asked.query not in self._vectors:
            self._vectors[asked.query] = self.encoder.embed_query(asked.query)
        return replace(asked, vector=self._vectors[asked.query])


def use_variant(kb: KnowledgeBase, encoder: Embedder, variant: str) -> None:
    """Set ``kb``'s search to ``variant`` with ``encoder`` as the trained question side."""
    searcher = kb.searcher
    searcher.embedder = encoder if variant == "replace" else kb.embedder
    searcher.extra = []
    if variant.startswith("third:"):
        weight = float(variant.split(":", 1)[1])
        searcher.extra = [EncoderList(DenseList(kb.store, kb.ann), encoder, weight)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", required=True, help="a question encoder's folder (sextant-train-query-encoder)")
    add_set_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["off", "replace", "third:0.5", "third:1"])
    args = parser.parse_args(argv)
    quiet_model_loading()
    sets = golden_sets(Path("eval"))
    # Each set's questions are read once; every variant is scored on the same ones.
    runs: list[tuple[str, KbSettings, list[Question] | BeirSplit]] = [
        (f"golden {name}", KbSettings(chroma_dir=args.eval_store / name), load_golden(sets[name].golden))
        for name in args.set
    ]
    for pair in args.beir:
        found = read_split(args.data, pair, args.limit)
        runs.append((pair, beir.store_settings(found.dataset, args.eval_store), found))
    for label, settings, asked in runs:
        with KnowledgeBase.open(settings) as kb:
            encoder = load_query_encoder(args.encoder, kb.embedder)
            for variant in args.variants:
                use_variant(kb, encoder, variant)
                print(f"{label} {variant}: nDCG@10 {_ndcg(kb, asked):.4f}", flush=True)


def _ndcg(kb: KnowledgeBase, asked: list[Question] | BeirSplit) -> float:
    if isinstance(asked, BeirSplit):
        return float(beir.run(kb, asked.queries, asked.qrels, "rrf")["ndcg@10"])
    return evaluate(kb, asked, ("rrf",))[0].metrics["ndcg@10"]


if __name__ == "__main__":
    main()
