from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pytest

from sextant.contract.results import Fusion, Scores
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.lexical import LexicalIndex
from sextant.kb.ranked_lists import Asked, Ranked, Retriever
from sextant.kb.search import FEEDBACK_WEIGHT, Searcher, feedback_vector, fused_rerank_order
from sextant.kb.stored import StoredChunk
from sextant.settings import DENSE_WEIGHT


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


def test_feedback_moves_the_question_toward_the_mean_of_the_passages_at_unit_length() -> None:
    question = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    passages = [np.array([0.0, 1.0, 0.0], dtype=np.float32), np.array([0.0, 0.0, 1.0], dtype=np.float32)]
    moved = feedback_vector(question, passages)
    # question + w * mean = (1, w/2, w/2), then unit length
    half = FEEDBACK_WEIGHT / 2
    assert moved == pytest.approx(np.array([1.0, half, half]) / np.sqrt(1 + 2 * half**2))
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0)
    assert moved.dtype == np.float32


def test_feedback_from_no_passage_leaves_the_question_as_it_is() -> None:
    question = np.array([0.6, 0.8], dtype=np.float32)
    assert feedback_vector(question, []) is question


@pytest.mark.parametrize("fusion", ["rrf", "scores"])
def test_a_searcher_given_no_weights_takes_its_fusions_own(fusion: Fusion) -> None:
    unused = cast(Any, None)  # the constructor only keeps the embedder, store and reranker
    searcher = Searcher(unused, unused, LexicalIndex(), unused, max_per_document=2, fusion=fusion)
    assert searcher.weights == (DENSE_WEIGHT[fusion], 1.0)
    given = Searcher(unused, unused, LexicalIndex(), unused, max_per_document=2, fusion=fusion, weights=(2.0, 1.0))
    assert given.weights == (2.0, 1.0)


@dataclass
class Pinned:
    """A ranked list a probe might add: the same chunks, whatever the query."""

    ids: list[str]
    weight: float = 1.0
    stage: str = "pinned"
    retriever: Retriever = "dense"

    def ranked(self, asked: Asked) -> Ranked:
        return [(cid, 1.0) for cid in self.ids]

    def scores(self, asked: Asked, ranked: Ranked, candidates: Mapping[str, StoredChunk]) -> dict[str, float]:
        return {cid: 1.0 if cid in self.ids else 0.0 for cid in candidates}


def test_a_list_added_to_the_searcher_is_fused_with_its_own_and_timed(kb: KnowledgeBase) -> None:
    texts = {
        "espresso": "Brew espresso with water at 93 degrees Celsius.",
        "bees": "Check the hives for queen cells every week in May.",
        "tea": "Steep green tea for two minutes at 80 degrees.",
    }
    for doc_id, text in texts.items():
        kb.ingest(doc_id, LoadedDocument(text=text, title=doc_id))
    question = "how hot should espresso water be"
    assert kb.search(question, k=3, abstain=False).hits[0].document_id == "espresso"
    [bees] = kb.store.get_document("bees").chunk_ids()  # type: ignore[union-attr]
    kb.searcher.extra = [Pinned([bees], weight=10.0)]
    for fusion in ("rrf", "scores"):
        kb.searcher.fusion = fusion
        result = kb.search(question, k=3, abstain=False)
        assert result.hits[0].document_id == "bees"
        assert result.hits[0].scores.dense_rank == 3  # its rank in the dense list, not in the added one
        stages = list(result.timings_ms)
        assert stages[stages.index("embed") :][:4] == ["embed", "dense", "lexical", "pinned"]
    # A dense list takes no part in a lexical search.
    assert kb.search(question, k=3, mode="lexical", abstain=False).hits[0].document_id == "espresso"
