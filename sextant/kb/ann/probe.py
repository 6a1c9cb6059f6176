"""The Index Lab inside the product: measure an index on the store's own vectors, or compare every index on one query.

Both read the store and build throwaway indexes; nothing is written. The vectors used as
benchmark queries are the chunks' own (a seeded sample), so each query's exact top hit is itself.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from sextant.contract.ann import AnnAnswer, AnnBenchmark, AnnComparison, AnnHit
from sextant.kb.ann import KINDS, create
from sextant.kb.ann.base import AnnIndex, FloatArray, IdArray
from sextant.kb.ann.flat import FlatIndex
from sextant.kb.ann.live import build_params, metric_for
from sextant.kb.refusal import KnowledgeBaseError

if TYPE_CHECKING:
    from sextant.kb.knowledge_base import KnowledgeBase


def benchmark(kb: KnowledgeBase, kind: str, *, k: int = 10, queries: int = 100, seed: int = 0) -> AnnBenchmark:
    """Build ``kind`` over every chunk vector and measure recall@k and latency against exact search.

    Raises:
        KnowledgeBaseError: the knowledge base has too few chunks to measure anything.
    """
    chunk_ids, xb = _vectors(kb)
    n = len(chunk_ids)
    params = build_params(kind, n, kb.settings.ann_params())
    index, build_s = _build(kind, xb, params)
    xq = xb[np.random.default_rng(seed).choice(n, min(queries, n), replace=False)]
    exact = FlatIndex.build(xb, np.arange(n))
    I, times = _one_by_one(index, xq, k)
    I0, exact_times = _one_by_one(exact, xq, k)
    kk = min(k, n)
    recall = float(np.mean([np.intersect1d(a[:kk], b[:kk]).size / kk for a, b in zip(I, I0, strict=True)]))
    p50 = float(np.median(times))
    return AnnBenchmark(
        index=kind,
        params=params,
        vectors=n,
        dimension=xb.shape[1],
        queries=xq.shape[0],
        k=k,
        recall_at_k=round(recall, 4),
        build_seconds=round(build_s, 4),
        memory_bytes=index.nbytes(),
        latency_ms_p50=round(p50, 4),
        latency_ms_p95=round(float(np.percentile(times, 95)), 4),
        exact_latency_ms_p50=round(float(np.median(exact_times)), 4),
        speedup=round(float(np.median(exact_times)) / p50, 3) if p50 > 0 else 0.0,
    )


def compare(kb: KnowledgeBase, query: str, *, k: int = 5) -> AnnComparison:
    """The same query through Chroma's index and each of ours, with exact cosines and overlap with exact search.

    Raises:
        KnowledgeBaseError: an empty query, or nothing in the knowledge base.
    """
    if not query.strip():
        raise KnowledgeBaseError("the query is empty; ask a question or give keywords")
    chunk_ids, xb = _vectors(kb)
    n = len(chunk_ids)
    q = kb.searcher.embedder.embed_query(query)
    row_of = {c: r for r, c in enumerate(chunk_ids)}
    doc_of = {c.id: c.doc_id for c in kb.store.get_chunks(chunk_ids)}
    rows_by_index: dict[str, tuple[list[int], float, float]] = {}
    started = time.perf_counter()
    from_chroma = kb.store.query(q, k)
    rows_by_index["chroma"] = ([row_of[c] for c, _ in from_chroma if c in row_of], _ms(started), 0.0)
    for kind in KINDS:
        index, build_s = _build(kind, xb, build_params(kind, n, kb.settings.ann_params()))
        started = time.perf_counter()
        _, I = index.search(q.reshape(1, -1), k)
        rows_by_index[kind] = ([int(r) for r in I[0] if r >= 0], _ms(started), round(build_s, 4))
    exact = set(rows_by_index["flat"][0])
    answers = [
        AnnAnswer(
            index=name,
            hits=[
                AnnHit(
                    rank=i,
                    chunk_id=chunk_ids[r],
                    document_id=doc_of.get(chunk_ids[r], ""),
                    cosine=round(float(xb[r] @ q), 6),
                )
                for i, r in enumerate(rows, 1)
            ],
            latency_ms=latency,
            build_seconds=build_s,
            overlap_with_exact=round(len(exact & set(rows)) / max(len(exact), 1), 4),
        )
        for name, (rows, latency, build_s) in rows_by_index.items()
    ]
    return AnnComparison(query=query, k=k, vectors=n, answers=answers)


def _vectors(kb: KnowledgeBase) -> tuple[list[str], FloatArray]:
    chunk_ids, xb = kb.chunk_vectors()
    if len(chunk_ids) < 2:
        raise KnowledgeBaseError(
            f"the knowledge base holds {len(chunk_ids)} chunks; ingest documents first (kb_ingest)"
        )
    return chunk_ids, xb


def _build(kind: str, xb: FloatArray, params: dict[str, object]) -> tuple[AnnIndex, float]:
    started = time.perf_counter()
    index = create(kind, xb.shape[1], metric_for(kind), **params)
    index.add(xb, np.arange(xb.shape[0]))
    return index, time.perf_counter() - started


def _one_by_one(index: AnnIndex, xq: FloatArray, k: int) -> tuple[IdArray, list[float]]:
    """Answers and per-query milliseconds, one query at a time as live search asks."""
    rows, times = [], []
    for q in xq:
        started = time.perf_counter()
        rows.append(index.search(q.reshape(1, -1), k)[1][0])
        times.append(_ms(started))
    return np.stack(rows), times


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 4)
