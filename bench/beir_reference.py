"""Reference retrievers on a BEIR set, made the way the published numbers were made.

Gives the numbers our chunk-level modes should be compared with on the same split, and, on a
split whose published number is known (the test splits), how far that split is from ours:

- ``bm25``: bm25s over whole documents (Lucene variant, k1 = 1.5, b = 0.75, Snowball
  stemming, English stopwords), as Pyserini / bm25s report it.
- ``dense``: the packaged all-MiniLM-L6-v2 over whole documents (title + text, cut at its
  256 tokens, one vector each, exact cosine), as MTEB reports it.

    python bench/beir_reference.py --data ../shared/data/beir/nfcorpus --split dev --retriever bm25 dense
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sextant.evals import beir
from sextant.evals.metrics import ndcg_at_k, recall_at_k

DEPTH = 100

Retriever = Callable[[Sequence[str], Sequence[str]], list[list[int]]]  # (documents, questions) -> rows


def bm25_rows(corpus: Sequence[str], questions: Sequence[str]) -> list[list[int]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    indexed = bm25s.tokenize(list(corpus), stopwords="en", stemmer=stemmer, show_progress=False)
    retriever.index(indexed, show_progress=False)
    tokens = bm25s.tokenize(list(questions), stopwords="en", stemmer=stemmer, show_progress=False)
    results, _ = retriever.retrieve(tokens, k=DEPTH, show_progress=False)
    return [list(row) for row in results]


def dense_rows(corpus: Sequence[str], questions: Sequence[str]) -> list[list[int]]:
    from sentence_transformers import SentenceTransformer

    from sextant.kb.embeddings import quiet_model_loading, resolve_model_path

    quiet_model_loading()
    model = SentenceTransformer(resolve_model_path("all-MiniLM-L6-v2"), device="cpu")
    docs = model.encode(list(corpus), batch_size=32, normalize_embeddings=True, show_progress_bar=True)
    asked = model.encode(list(questions), batch_size=64, normalize_embeddings=True)
    return [list(np.argsort(-row)[:DEPTH]) for row in asked @ docs.T]


RETRIEVERS: dict[str, Retriever] = {"bm25": bm25_rows, "dense": dense_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--retriever", nargs="+", choices=sorted(RETRIEVERS), default=["bm25"])
    args = parser.parse_args()
    docs = list(beir.read_corpus(args.data))
    queries = beir.read_queries(args.data)
    qrels = beir.read_qrels(args.data / "qrels" / f"{args.split}.tsv")
    judged = [q for q in qrels if q in queries and any(g > 0 for g in qrels[q].values())]
    corpus = [d.as_document().text for d in docs]
    for name in args.retriever:
        rows = RETRIEVERS[name](corpus, [queries[q] for q in judged])
        ndcg, recall = [], []
        for qid, row in zip(judged, rows, strict=True):
            ranked = [docs[i].id for i in row]
            ndcg.append(ndcg_at_k(ranked, qrels[qid], 10))
            recall.append(recall_at_k(ranked, qrels[qid], DEPTH))
        print(
            f"{args.data.resolve().name} {args.split} {name}: {len(judged)} queries, "
            f"nDCG@10 {statistics.fmean(ndcg):.4f}, Recall@100 {statistics.fmean(recall):.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
