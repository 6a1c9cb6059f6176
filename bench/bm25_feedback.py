"""Would BM25 rank better with RM3, pseudo-relevance feedback on the lexical side?

A probe, not a product path (learning/feedback.md): the BM25 list of the product's search is replaced by
RM3 (Lavrenko and Croft's relevance model, as Anserini runs it): the first BM25 search's best ``docs``
chunks, each weighted by its share of their summed scores, give every term of theirs the probability
``sum_d w_d * tf(t, d) / |d|``; the ``terms`` likeliest are kept and normalised, and mixed with the question's
own terms (normalised counts) as ``keep * question + (1 - keep) * feedback``. Every chunk is then scored by
the store's own BM25 matrix, each term's column weighted so. Dense retrieval, fusion, the per-document cap
and abstention are the product's.

    python bench/bm25_feedback.py --set small large --beir scifact:models/splits/scifact/heldout.tsv nfcorpus:dev
    python bench/bm25_feedback.py --beir scifact:models/splits/scifact/fit.tsv nfcorpus:train --limit 600

A variant is ``DOCS/TERMS/KEEP`` (Anserini's defaults are 10/10/0.5); ``off`` is the product's BM25.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from beir_split import read_split
from probe_sets import add_set_arguments

from sextant.evals import beir
from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate
from sextant.kb.analyzer import tokenize
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.lexical import LexicalHit, LexicalIndex
from sextant.settings import KbSettings

ORIGINAL = LexicalIndex.search


def rm3_scores(index: LexicalIndex, query: str, docs: int, terms: int, keep: float) -> np.ndarray | None:
    """Every chunk's score (row order) under the question expanded by RM3, or None when no word is indexed."""
    built = index._current()
    if built is None:
        return None
    matrix = built.bm25.scores
    indptr, rows, data = matrix["indptr"], matrix["indices"], matrix["data"]

    def score(weights: dict[int, float]) -> np.ndarray:
        out = np.zeros(matrix["num_docs"], dtype=np.float64)
        for term, weight in weights.items():
            span = slice(indptr[term], indptr[term + 1])
            np.add.at(out, rows[span], weight * data[span])
        return out

    asked = [built.vocab[t] for t in tokenize(query) if t in built.vocab]
    if not asked:
        return None
    question = {t: asked.count(t) / len(asked) for t in set(asked)}
    first = score(question)
    best = np.argsort(-first)[:docs]
    best = best[first[best] > 0]
    total = float(first[best].sum())
    if total <= 0:
        return first
    model: dict[int, float] = {}
    for row in best.tolist():
        span = slice(index._offsets[row], index._offsets[row + 1])
        bag, counts = index._terms[span], index._tfs[span].astype(np.float64)
        share = float(first[row]) / total / counts.sum()
        for term, count in zip(bag.tolist(), counts.tolist(), strict=True):
            model[term] = model.get(term, 0.0) + share * count
    kept = sorted(model.items(), key=lambda item: -item[1])[:terms]
    norm = sum(p for _, p in kept)
    mixed = {t: keep * w for t, w in question.items()}
    for term, p in kept:
        mixed[term] = mixed.get(term, 0.0) + (1 - keep) * p / norm
    return score(mixed)


def use_variant(kb: KnowledgeBase, variant: str) -> None:
    """Replace ``kb``'s BM25 list by ``variant`` (``off``: the product's)."""
    index = kb.searcher.lexical
    if variant == "off":
        index.search = ORIGINAL.__get__(index)  # type: ignore[method-assign]
        return
    docs, terms, keep = variant.split("/")

    def search(query: str, k: int, allowed_ids: set[str] | None = None) -> list[LexicalHit]:
        scores = rm3_scores(index, query, int(docs), int(terms), float(keep))
        if scores is None:
            return []
        built = index._current()
        assert built is not None
        candidates = np.flatnonzero(scores > 0)
        if allowed_ids is not None:
            candidates = np.asarray([r for r in candidates.tolist() if built.ids[r] in allowed_ids], dtype=np.int64)
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
        return [LexicalHit(id=built.ids[r], score=float(scores[r]), rank=n) for n, r in enumerate(order.tolist(), 1)]

    index.search = search  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_set_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["off", "10/10/0.5", "3/10/0.5", "10/20/0.7"])
    parser.add_argument("--modes", nargs="+", default=["lexical", "rrf"])
    args = parser.parse_args(argv)
    quiet_model_loading()
    sets = golden_sets(Path("eval"))
    for name in args.set:
        questions = load_golden(sets[name].golden)
        with KnowledgeBase.open(KbSettings(chroma_dir=args.eval_store / name)) as kb:
            for variant in args.variants:
                use_variant(kb, variant)
                for report in evaluate(kb, questions, tuple(args.modes)):
                    print(f"golden {name} {variant} {report.mode}: nDCG@10 {report.metrics['ndcg@10']:.4f}", flush=True)
    for pair in args.beir:
        found = read_split(args.data, pair, args.limit)
        with KnowledgeBase.open(beir.store_settings(found.dataset, args.eval_store)) as kb:
            for variant in args.variants:
                use_variant(kb, variant)
                for mode in args.modes:
                    out = beir.run(kb, found.queries, found.qrels, mode)
                    print(
                        f"{found.dataset} {found.split} {variant} {mode}: nDCG@10 {out['ndcg@10']} "
                        f"recall@100 {out['recall@100']}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
