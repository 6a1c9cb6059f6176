from __future__ import annotations

import pytest

from sextant.kb.fusion import cap_per_document, reciprocal_rank_fusion, score_fusion


def test_rrf_matches_hand_computation() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)


def test_rrf_orders_best_first_and_breaks_ties_by_first_appearance() -> None:
    ranking = reciprocal_rank_fusion([["x", "y"], ["y", "x"], ["z"]])
    assert [key for key, _ in ranking][:2] == ["x", "y"]  # equal scores: x was seen first
    assert ranking[-1][0] == "z" or ranking[2][0] == "z"
    assert reciprocal_rank_fusion([]) == []


def _cap(items: list[tuple[str, str, float]], limit: int, k: int) -> list[str]:
    chosen = cap_per_document(items, document=lambda i: i[1], relevance=lambda i: i[2], limit=limit, k=k)
    return [name for name, _, _ in chosen]


def test_cap_gives_the_slot_to_a_competitive_chunk_of_another_document() -> None:
    items = [("a1", "A", 0.9), ("a2", "A", 0.85), ("a3", "A", 0.8), ("b1", "B", 0.5)]
    assert _cap(items, limit=2, k=3) == ["a1", "a2", "b1"]


def test_cap_keeps_the_chunk_when_the_rival_is_not_competitive() -> None:
    items = [("a1", "A", 0.9), ("a2", "A", 0.85), ("a3", "A", 0.8), ("b1", "B", 0.3)]
    # 0.3 < 0.5 * 0.8: dropping a3 for b1 would cost relevance, so a3 stays.
    assert _cap(items, limit=2, k=3) == ["a1", "a2", "a3"]


def test_cap_fills_empty_slots_with_set_aside_chunks() -> None:
    items = [("a1", "A", 0.9), ("a2", "A", 0.8), ("a3", "A", 0.7), ("b1", "B", 0.6)]
    assert _cap(items, limit=1, k=4) == ["a1", "b1", "a2", "a3"]


def test_cap_never_returns_more_than_k() -> None:
    items = [(f"d{i}", f"D{i}", 1.0 - i / 10) for i in range(8)]
    assert _cap(items, limit=2, k=5) == ["d0", "d1", "d2", "d3", "d4"]


def test_weighted_rrf_scales_each_list() -> None:
    fused = dict(reciprocal_rank_fusion([["a"], ["b"]], k=10, weights=[2.0, 1.0]))
    assert fused == {"a": pytest.approx(2 / 11), "b": pytest.approx(1 / 11)}
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"], ["b"]], weights=[1.0])


def test_score_fusion_divides_each_list_by_its_best_and_weighs_it() -> None:
    fused = dict(score_fusion([{"a": 0.8, "b": 0.4, "c": 0.2}, {"a": 2.0, "b": 10.0, "c": 0.0}], [1.5, 1.0]))
    assert fused["a"] == pytest.approx(1.5 * 1.0 + 0.2)
    assert fused["b"] == pytest.approx(1.5 * 0.5 + 1.0)
    assert fused["c"] == pytest.approx(1.5 * 0.25)


def test_score_fusion_does_not_depend_on_how_deep_a_list_was_cut() -> None:
    shallow = [{"a": 0.9, "b": 0.7}, {"a": 3.0, "b": 6.0}]
    deep = [shallow[0] | {"x": 0.1, "y": 0.05}, shallow[1] | {"x": 0.5, "y": 0.2}]
    assert score_fusion(deep)[:2] == score_fusion(shallow)


def test_score_fusion_counts_a_missing_id_and_a_negative_score_as_zero() -> None:
    fused = dict(score_fusion([{"a": 0.5, "b": -0.3}, {"b": 4.0}]))
    assert fused == {"a": pytest.approx(1.0), "b": pytest.approx(1.0)}


def test_score_fusion_of_a_list_with_nothing_scored_adds_nothing() -> None:
    assert score_fusion([{"a": 0.0, "b": 0.0}, {"a": 0.2, "b": 0.4}]) == [("b", 1.0), ("a", 0.5)]
    assert score_fusion([]) == []


def test_score_fusion_breaks_ties_by_first_appearance() -> None:
    assert [key for key, _ in score_fusion([{"y": 1.0, "x": 1.0}])] == ["y", "x"]
