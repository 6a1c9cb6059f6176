from __future__ import annotations

from sextant.contract.results import Hit, Scores
from sextant.training.heldout import fused_as_the_product_orders


def _hit(chunk: str, scores: Scores) -> Hit:
    return Hit(
        rank=1,
        chunk_id=chunk,
        document_id=chunk,
        title=chunk,
        source="",
        start=0,
        end=1,
        scored_by="rerank",
        scores=scores,
        uri=f"kb://documents/{chunk}",
    )


def test_only_the_rescored_hits_are_fused_and_the_rest_keep_their_place_after_them() -> None:
    # Ranks among the re-scored pair (k=60): dense b, a; BM25 a; cross-encoder b, a.
    # a = 1/62 + 1/61 + 1/62, b = 1/61 + 1/61: a first. c and d were never re-scored: c holds
    # dense rank 1 but stays behind every re-scored hit, as in the product.
    hits = [
        _hit("b", Scores(dense_rank=2, rerank=0.9)),
        _hit("a", Scores(dense_rank=3, bm25_rank=1, rerank=0.2)),
        _hit("d", Scores(bm25_rank=2)),
        _hit("c", Scores(dense_rank=1)),
    ]
    assert [h.chunk_id for h in fused_as_the_product_orders(hits)] == ["a", "b", "d", "c"]
