from __future__ import annotations

from typing import Any

from sextant.evals.gate import regressions


def _report(ndcg: float, wrong: float | None = 0.05, available: bool = True) -> dict[str, Any]:
    row = {"mode": "rrf", "available": available, "metrics": {"ndcg@10": ndcg, "hit@1": 0.8}}
    row.update({"abstain_correct": 0.9, "abstain_wrong": wrong})
    return {"modes": [row]}


def test_an_injected_regression_fires() -> None:
    assert regressions(_report(0.70), _report(0.75)) == ["rrf ndcg@10: 0.750 -> 0.700"]


def test_a_drop_within_tolerance_passes() -> None:
    assert regressions(_report(0.735), _report(0.75)) == []
    assert regressions(_report(0.80), _report(0.75)) == []


def test_more_wrong_abstentions_is_a_regression() -> None:
    assert regressions(_report(0.75, wrong=0.10), _report(0.75, wrong=0.05)) == ["rrf abstain_wrong: 0.050 -> 0.100"]


def test_a_mode_that_disappears_is_a_regression() -> None:
    assert regressions({"modes": []}, _report(0.75)) == ["rrf: was graded in the baseline, missing now"]
    assert regressions(_report(0.75, available=False), _report(0.75)) == [
        "rrf: was graded in the baseline, missing now"
    ]
    # A mode that was unavailable in the baseline (no cross-encoder) cannot regress.
    assert regressions({"modes": []}, _report(0.75, available=False)) == []
