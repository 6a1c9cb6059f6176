"""What the agent holds for its lifetime: whether the dollar budget applies, and one writer lock per workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from sextant.agent.budget import DailyBudget
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.agent.ops import Metrics
from sextant.agent.settings import AgentSettings
from sextant.agent.state import AgentState
from sextant.agent.workspaces import WorkspaceBook
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel


def state(tmp_path: Path, *, model: ScriptedModel | None, budget_usd: float) -> AgentState:
    return AgentState(
        settings=AgentSettings(_env_file=None),
        kb=KbSupervisor(None),  # never entered: no knowledge base is started
        choice=ModelChoice(model, "scripted" if model else "none", "test"),
        budget=DailyBudget(budget_usd, tmp_path / "spend.json"),
        limiter=MovingWindowRateLimiter(MemoryStorage()),
        rate=RateLimitItemPerSecond(10, 60),
        metrics=Metrics(budget_usd),
    )


@pytest.mark.parametrize(
    ("priced", "budget_usd", "applies"),
    [(True, 1.0, True), (False, 1.0, False), (True, 0.0, False)],
    ids=["priced-and-capped", "free-model", "no-cap"],
)
def test_the_budget_applies_only_to_a_priced_model_under_a_cap(
    tmp_path: Path, priced: bool, budget_usd: float, applies: bool
) -> None:
    held = state(tmp_path, model=ScriptedModel([], priced=priced), budget_usd=budget_usd)
    assert held.budget_applies is applies
    assert held.model is held.choice.model


def test_without_a_model_no_budget_applies(tmp_path: Path) -> None:
    held = state(tmp_path, model=None, budget_usd=1.0)
    assert held.model is None and not held.budget_applies


async def test_each_workspace_has_one_writer_lock_and_the_shared_store_its_own(tmp_path: Path) -> None:
    held = state(tmp_path, model=None, budget_usd=0.0)
    book = WorkspaceBook(None, ttl_s=60, max_active=5)
    (alice, _), (bob, _) = book.create(), book.create()
    assert held.writer(alice) is held.writer(alice)
    assert len({id(held.writer(w)) for w in (alice, bob, None)}) == 3
    async with held.writer(alice):
        assert held.writer(alice).locked() and not held.writer(bob).locked() and not held.writer(None).locked()
    assert isinstance(held.writer(None), asyncio.Lock) and set(held.writers) == {alice.id, bob.id, ""}
