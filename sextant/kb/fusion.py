"""Reciprocal rank fusion, score fusion and the per-document cap.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): ``score(d) = Σ_lists w_list / (k + rank_list(d))``,
with ranks starting at 1, ``k = 60`` and equal weights unless a measurement says otherwise. It needs
no score calibration between BM25 and cosine. Score fusion (``score_fusion``) keeps how far apart the
scores are, which ranks throw away, and calibrates each list by its best hit.

The cap keeps one long document from filling a result list, but only where that costs nothing:
a chunk past the cap is set aside only when the chunk that would take its slot is competitive
(its relevance at least ``competitive`` times the set-aside chunk's). Relevance here must be a
score with meaning across documents (cosine, cross-encoder probability), never a fused rank.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Fuse best-first id lists, each weighted (default 1); ``(id, score)`` best first, ties by first seen."""
    scores: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    # sorted() is stable, so equal scores keep the order in which ids were first seen.
    return sorted(scores.items(), key=lambda item: -item[1])


def score_fusion(lists: Sequence[Mapping[K, float]], weights: Sequence[float] | None = None) -> list[tuple[K, float]]:
    """Fuse scored lists by their scores, each divided by its best: ``(id, score)`` best first, ties by first seen.

    ``score(d) = Σ_lists w_list · s_list(d) / max_list s``: min-max normalisation with each score's theoretical
    minimum, 0 (BM25 and a cosine clipped at 0), as the minimum, so a list's normalised scores depend on its best
    hit and not on how deep it was cut (Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid
    Retrieval", TOIS 2023). An id missing from a list scores 0 there: give every list every candidate's score.
    """
    scores: dict[K, float] = {}
    for scored, weight in zip(lists, weights or [1.0] * len(lists), strict=True):
        best = max((max(s, 0.0) for s in scored.values()), default=0.0)
        for key, s in scored.items():
            scores[key] = scores.get(key, 0.0) + (weight * max(s, 0.0) / best if best > 0 else 0.0)
    return sorted(scores.items(), key=lambda item: -item[1])


def cap_per_document(
    items: Sequence[T],
    *,
    document: Callable[[T], str],
    relevance: Callable[[T], float],
    limit: int,
    k: int,
    competitive: float = 0.5,
) -> list[T]:
    """The first ``k`` of ``items`` (best first) with at most ``limit`` per document where it is free.

    A chunk over its document's limit yields its slot to the best later chunk of another document
    when that chunk's relevance is at least ``competitive`` × its own; otherwise it keeps the slot.
    """
    chosen: list[T] = []
    deferred: list[T] = []
    per_doc: dict[str, int] = {}
    for pos, item in enumerate(items):
        if len(chosen) == k:
            break
        doc = document(item)
        if per_doc.get(doc, 0) >= limit:
            rival = next((o for o in items[pos + 1 :] if per_doc.get(document(o), 0) < limit), None)
            if rival is not None and relevance(rival) >= competitive * relevance(item):
                deferred.append(item)
                continue
        chosen.append(item)
        per_doc[doc] = per_doc.get(doc, 0) + 1
    # Set-aside chunks still beat an empty slot.
    return chosen + deferred[: k - len(chosen)]
