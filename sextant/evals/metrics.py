"""Retrieval metrics as pure functions, with trec_eval semantics.

``ranked`` is a best-first list of ids; ``qrels`` maps each relevant id to its graded relevance
(> 0; ids absent or graded 0 are not relevant). One vocabulary throughout: hit@1, recall@k, MRR@k,
nDCG@k (Järvelin & Kekäläinen 2002, linear gain ``rel / log2(rank + 1)`` as trec_eval computes it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def hit_at_1(ranked: Sequence[str], qrels: Mapping[str, int]) -> float:
    """1.0 when the first result is relevant."""
    return 1.0 if ranked and qrels.get(ranked[0], 0) > 0 else 0.0


def recall_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Share of the relevant ids found in the first ``k``; 0 when nothing is relevant."""
    relevant = {i for i, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant id within the first ``k``."""
    for rank, item in enumerate(ranked[:k], start=1):
        if qrels.get(item, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """nDCG@k with graded gains; the ideal ranking sorts every judged relevant id by grade."""
    dcg = sum(qrels.get(item, 0) / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], start=1))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def abstention_rates(abstained: Sequence[bool], answerable: Sequence[bool]) -> tuple[float, float]:
    """``(correct, wrong)``: the share of unanswerable questions abstained on, and of answerable ones.

    A rate is NaN when there is no question of its kind, so it is never mistaken for a score.
    """
    if len(abstained) != len(answerable):
        raise ValueError("abstained and answerable must be the same length")
    on_unanswerable = [a for a, ok in zip(abstained, answerable, strict=True) if not ok]
    on_answerable = [a for a, ok in zip(abstained, answerable, strict=True) if ok]
    correct = sum(on_unanswerable) / len(on_unanswerable) if on_unanswerable else math.nan
    wrong = sum(on_answerable) / len(on_answerable) if on_answerable else math.nan
    return correct, wrong
