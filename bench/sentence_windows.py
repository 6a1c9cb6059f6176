"""Would the dense list rank better if each chunk were also scored by its best window of sentences?

A probe, not a product path (learning/sentence-vectors.md): each chunk of an evaluation store is cut into
sentences (the agent's splitter), grouped into windows of ``--window`` consecutive sentences, put under the
chunk's title and section as the chunk itself is, and embedded by the store's embedder (cached as ``.npz`` in
``--cache``). The product's search then runs with its dense list replaced by an exact scan that ranks chunks by
one of the variants below; BM25, fusion, the per-document cap and the reported cosines are the product's.

    python bench/sentence_windows.py --set small large --window 2
    python bench/sentence_windows.py --beir scifact:models/splits/scifact/heldout.tsv nfcorpus:dev --window 2

Variants: ``chunk`` (the chunk's own cosine: today's ranking, by an exact scan), ``sentence`` (its best
window's), ``max`` (the larger of the two), ``mixA`` (``(1 - A) * chunk + A * sentence``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from beir_split import read_split
from probe_sets import add_set_arguments

from sextant.agent.sentences import split
from sextant.evals import beir
from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.indexing import index_text
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.ranked_lists import Asked, DenseList, Ranked
from sextant.settings import KbSettings

Vectors = tuple[list[str], np.ndarray, np.ndarray, np.ndarray]  # chunk ids, their vectors, window owners, windows


def windows_of(kb: KnowledgeBase, window: int, cache: Path) -> Vectors:
    """Every chunk's id and stored vector, and its windows' vectors with the index of the chunk each belongs to."""
    if cache.exists():
        saved = np.load(cache, allow_pickle=True)
        return list(saved["ids"]), saved["chunks"], saved["owner"], saved["windows"]
    chunks = [c for page in kb.store.iter_chunks() for c in page]
    ids = [c.id for c in chunks]
    stored = [
        c.vector
        for start in range(0, len(ids), 2000)
        for c in kb.store.get_chunks(ids[start : start + 2000], vectors=True)
    ]
    texts, owner = [], []
    for n, chunk in enumerate(chunks):
        sentences = [s.text for s in split(1, chunk.text)]
        for start in range(max(1, len(sentences) - window + 1)) if sentences else ():
            texts.append(index_text(" ".join(sentences[start : start + window]), chunk.meta, True))
            owner.append(n)
    started = time.perf_counter()
    vectors = kb.embedder.embed(texts, batch_size=64)
    print(f"{len(texts)} windows of {len(ids)} chunks embedded in {time.perf_counter() - started:.0f} s", flush=True)
    own = [v for v in stored if v is not None]
    if len(own) != len(ids):
        raise SystemExit(f"{len(ids) - len(own)} chunks of the store have no vector")
    found: Vectors = (ids, np.stack(own).astype(np.float32), np.asarray(owner), vectors)
    np.savez(cache, ids=np.asarray(ids, dtype=object), chunks=found[1], owner=found[2], windows=vectors)
    return found


class WindowScan(DenseList):
    """An exact scan ranking every chunk by ``variant`` of its own cosine and its best window's."""

    def __init__(self, kb: KnowledgeBase, vectors: Vectors, variant: str) -> None:
        super().__init__(kb.store, None, kb.searcher.dense.weight)
        self.vectors, self.variant = vectors, variant

    def ranked(self, asked: Asked) -> Ranked:
        ids, chunks, owner, windows = self.vectors
        own = chunks @ asked.vector
        best = np.full(len(ids), -1.0, np.float32)
        np.maximum.at(best, owner, windows @ asked.vector)
        if self.variant == "chunk":
            score = own
        elif self.variant == "sentence":
            score = best
        elif self.variant == "max":
            score = np.maximum(own, best)
        else:
            share = float(self.variant.removeprefix("mix"))
            score = (1 - share) * own + share * best
        return [(ids[i], float(score[i])) for i in np.argsort(-score)[: asked.depth]]


def use_variant(kb: KnowledgeBase, vectors: Vectors, variant: str) -> None:
    """Replace ``kb``'s dense list with an exact scan ranking chunks by ``variant``."""
    kb.searcher.dense = WindowScan(kb, vectors, variant)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(parser)
    parser.add_argument("--window", type=int, default=2, help="sentences per window (default: %(default)s)")
    parser.add_argument("--variants", nargs="+", default=["chunk", "sentence", "max", "mix0.5"])
    parser.add_argument("--cache", type=Path, default=Path("bench/out/sentence-windows"))
    args = parser.parse_args(argv)
    quiet_model_loading()
    args.cache.mkdir(parents=True, exist_ok=True)
    sets = golden_sets(Path("eval"))
    for name in args.set:
        questions = load_golden(sets[name].golden)
        with KnowledgeBase.open(KbSettings(chroma_dir=args.eval_store / name)) as kb:
            vectors = windows_of(kb, args.window, args.cache / f"{name}-w{args.window}.npz")
            for variant in args.variants:
                use_variant(kb, vectors, variant)
                print(f"golden {name} {variant}: nDCG@10 {evaluate(kb, questions, ('rrf',))[0].metrics['ndcg@10']:.4f}")
    for pair in args.beir:
        found = read_split(args.data, pair, args.limit)
        with KnowledgeBase.open(beir.store_settings(found.dataset, args.eval_store)) as kb:
            vectors = windows_of(kb, args.window, args.cache / f"{found.dataset}-w{args.window}.npz")
            for variant in args.variants:
                use_variant(kb, vectors, variant)
                out = beir.run(kb, found.queries, found.qrels, "rrf")
                print(
                    f"{found.dataset} {found.split} {variant}: nDCG@10 {out['ndcg@10']} recall@100 {out['recall@100']}"
                )


if __name__ == "__main__":
    main()
