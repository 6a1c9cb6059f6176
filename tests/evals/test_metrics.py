from __future__ import annotations

import math

import pytest

from sextant.evals.metrics import abstention_rates, hit_at_1, mrr_at_k, ndcg_at_k, recall_at_k

RANKED = ["d3", "d1", "d7", "d2", "d9"]
QRELS = {"d1": 2, "d2": 1, "d5": 1}


def test_hit_at_1() -> None:
    assert hit_at_1(RANKED, QRELS) == 0.0
    assert hit_at_1(["d1"], QRELS) == 1.0
    assert hit_at_1([], QRELS) == 0.0


def test_recall_at_k() -> None:
    assert recall_at_k(RANKED, QRELS, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, QRELS, 5) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, {}, 5) == 0.0


def test_mrr_at_k() -> None:
    assert mrr_at_k(RANKED, QRELS, 10) == pytest.approx(1 / 2)
    assert mrr_at_k(RANKED, QRELS, 1) == 0.0


def test_ndcg_at_k_by_hand() -> None:
    # DCG@5 = 2/log2(3) + 1/log2(5); ideal gains 2, 1, 1 -> 2/log2(2) + 1/log2(3) + 1/log2(4).
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    idcg = 2 / 1 + 1 / math.log2(3) + 1 / 2
    assert ndcg_at_k(RANKED, QRELS, 5) == pytest.approx(dcg / idcg)
    # At k=2 the ideal list is cut to two as well (trec_eval's ndcg_cut).
    assert ndcg_at_k(RANKED, QRELS, 2) == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert ndcg_at_k(["d1", "d2", "d5"], QRELS, 3) == pytest.approx(1.0)
    assert ndcg_at_k(RANKED, {}, 10) == 0.0


def test_abstention_rates() -> None:
    correct, wrong = abstention_rates([True, False, True, False], [False, False, True, True])
    assert (correct, wrong) == (0.5, 0.5)
    c, w = abstention_rates([True], [False])
    assert c == 1.0 and math.isnan(w)
    with pytest.raises(ValueError):
        abstention_rates([True], [])
