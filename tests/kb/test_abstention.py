from __future__ import annotations

from sextant.kb.abstention import AbstentionRule


def test_abstains_below_the_threshold_and_says_why() -> None:
    rule = AbstentionRule(min_dense=0.30)
    abstain, reason = rule.decide(0.21, 3)
    assert abstain and "0.21" in reason and "below 0.30" in reason


def test_answers_at_or_above_the_threshold() -> None:
    abstain, reason = AbstentionRule(min_dense=0.30).decide(0.30, 5)
    assert not abstain and "5 query words" in reason
