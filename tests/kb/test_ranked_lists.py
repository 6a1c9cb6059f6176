"""The ranked lists a search fuses, each on its own: where each takes part, and what it scores for score fusion."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from sextant.contract.results import SearchMode
from sextant.kb.lexical import LexicalHit
from sextant.kb.ranked_lists import Asked, Bm25List, DenseList, takes_part
from sextant.kb.stored import StoredChunk

UNIT = np.array([1.0, 0.0], dtype=np.float32)


class _Bm25:
    """A BM25 index that ranks ``a`` and scores every other id 0.25."""

    def search(self, query: str, k: int, allowed_ids: set[str] | None = None) -> list[LexicalHit]:
        return [LexicalHit("a", 2.0, 1)]

    def scores(self, query: str, ids: Any) -> dict[str, float]:
        return dict.fromkeys(ids, 0.25)


def _chunk(cid: str, vector: list[float]) -> StoredChunk:
    return StoredChunk(cid, "text", {}, np.array(vector, dtype=np.float32))


@pytest.mark.parametrize(
    ("mode", "dense", "lexical"),
    [
        ("hybrid", True, True),
        ("rrf", True, True),
        ("rerank", True, True),
        ("dense", True, False),
        ("lexical", False, True),
    ],
)
def test_a_list_takes_part_in_the_modes_of_its_retriever(mode: SearchMode, dense: bool, lexical: bool) -> None:
    unused = cast(Any, None)
    assert takes_part(DenseList(unused), mode) is dense
    assert takes_part(Bm25List(unused), mode) is lexical


def test_the_dense_list_scores_each_candidate_by_its_cosine_with_the_vector_it_searched_from() -> None:
    asked = Asked("q", UNIT, 10, None, None)
    candidates = {"b": _chunk("b", [0.6, 0.8]), "a": _chunk("a", [1.0, 0.0])}
    assert DenseList(cast(Any, None)).scores(asked, [], candidates) == pytest.approx({"b": 0.6, "a": 1.0})


def test_bm25_keeps_the_scores_it_ranked_with_and_scores_the_other_candidates() -> None:
    bm25 = Bm25List(cast(Any, _Bm25()), weight=0.5)
    asked = Asked("q", UNIT, 10, None, None)
    ranked = bm25.ranked(asked)
    assert ranked == [("a", 2.0)]
    candidates = {"b": _chunk("b", [0.0, 1.0]), "a": _chunk("a", [1.0, 0.0])}
    scores = bm25.scores(asked, ranked, candidates)
    assert scores == {"a": 2.0, "b": 0.25} and list(scores) == ["a", "b"]
