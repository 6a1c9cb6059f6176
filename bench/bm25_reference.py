"""Reference BM25 on a BEIR set: bm25s over whole documents, as the published numbers were made.

Gives the number our chunk-level lexical mode should be compared with on the same split
(bm25s, Lucene variant, k1 = 1.5, b = 0.75, Snowball stemming, English stopwords).

    python bench/bm25_reference.py --data ../shared/data/beir/nfcorpus --split dev
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import bm25s
import Stemmer

from sextant.evals import beir
from sextant.evals.metrics import ndcg_at_k, recall_at_k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--split", default="test")
    args = parser.parse_args()
    docs = list(beir.read_corpus(args.data))
    queries = beir.read_queries(args.data)
    qrels = beir.read_qrels(args.data / "qrels" / f"{args.split}.tsv")
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    corpus = [d.as_document().text for d in docs]
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    judged = [q for q in qrels if q in queries and any(g > 0 for g in qrels[q].values())]
    tokens = bm25s.tokenize([queries[q] for q in judged], stopwords="en", stemmer=stemmer, show_progress=False)
    results, _ = retriever.retrieve(tokens, k=100, show_progress=False)
    ndcg, recall = [], []
    for qid, row in zip(judged, results, strict=True):
        ranked = [docs[i].id for i in row]
        ndcg.append(ndcg_at_k(ranked, qrels[qid], 10))
        recall.append(recall_at_k(ranked, qrels[qid], 100))
    name = args.data.resolve().name
    print(
        f"{name} {args.split}: {len(judged)} queries, nDCG@10 {statistics.fmean(ndcg):.4f}, "
        f"Recall@100 {statistics.fmean(recall):.4f}"
    )


if __name__ == "__main__":
    main()
