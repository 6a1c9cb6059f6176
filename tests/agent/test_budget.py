"""The daily budget: money spent today against a cap, kept on disk; 0 is no cap."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from sextant.agent.budget import DailyBudget


def test_a_cap_is_spent_and_the_spend_survives_a_restart(tmp_path: Path) -> None:
    budget = DailyBudget(0.05, tmp_path / "spend.json", today=lambda: date(2026, 12, 1))
    budget.add(0.03)
    assert budget.capped and not budget.exhausted()
    budget.add(0.03)
    assert budget.exhausted()
    again = DailyBudget(0.05, tmp_path / "spend.json", today=lambda: date(2026, 12, 1))
    assert again.spent() == 0.06 and again.exhausted()
    tomorrow = DailyBudget(0.05, tmp_path / "spend.json", today=lambda: date(2026, 12, 2))
    assert tomorrow.spent() == 0.0


def test_zero_is_no_cap_however_much_is_spent(tmp_path: Path) -> None:
    budget = DailyBudget(0.0, tmp_path / "spend.json")
    budget.add(100.0)
    assert not budget.capped and not budget.exhausted() and budget.spent() == 100.0
