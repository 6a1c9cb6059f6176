from __future__ import annotations

from dataclasses import dataclass

from sextant.contract.results import Scores
from sextant.kb.search import fused_rerank_order


@dataclass
class Item:
    key: str
    scores: Scores


def test_fused_rerank_order_matches_hand_computed_rrf() -> None:
    # dense ranks a, b, c; BM25 ranks c, a (b unmatched); the cross-encoder ranks c, b, a.
    items = [
        Item("a", Scores(dense_rank=1, bm25_rank=2, rerank=0.1)),
        Item("b", Scores(dense_rank=2, rerank=0.5)),
        Item("c", Scores(dense_rank=3, bm25_rank=1, rerank=0.9)),
    ]
    # k=60: a = 1/61 + 1/62 + 1/63; b = 1/62 + 1/62; c = 1/63 + 1/61 + 1/61
    assert [i.key for i in fused_rerank_order(items, lambda i: i.key)] == ["c", "a", "b"]


def test_fused_rerank_order_weighs_the_retrievers_as_given() -> None:
    items = [Item("a", Scores(dense_rank=1, rerank=0.1)), Item("b", Scores(bm25_rank=1, rerank=0.9))]
    # a = 5/61 + 1/62 against b = 1/61 + 1/61: a heavy dense weight outvotes the cross-encoder.
    assert [i.key for i in fused_rerank_order(items, lambda i: i.key, weights=(5.0, 1.0))] == ["a", "b"]
    assert [i.key for i in fused_rerank_order(items, lambda i: i.key)] == ["b", "a"]
