"""What the agent holds for its lifetime: the knowledge base, the model, the budgets, limits and workspaces."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from limits import RateLimitItemPerSecond
from limits.aio.strategies import MovingWindowRateLimiter

from sextant.agent.budget import DailyBudget
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.agent.ops import Metrics
from sextant.agent.settings import AgentSettings
from sextant.agent.workspaces import Workspace, WorkspaceBook
from sextant.llm.chat import ChatModel
from sextant.llm.factory import ModelChoice


@dataclass
class AgentState:
    settings: AgentSettings
    kb: KbSupervisor
    choice: ModelChoice
    budget: DailyBudget
    limiter: MovingWindowRateLimiter
    rate: RateLimitItemPerSecond
    metrics: Metrics
    workspaces: WorkspaceBook | None = None
    questions_today: DailyBudget | None = None
    uploads_today: DailyBudget | None = None
    model_reachable: bool | None = None
    # One writer per workspace at a time, so the documents limit cannot be raced past.
    writers: dict[str, asyncio.Lock] = field(default_factory=dict)

    @property
    def model(self) -> ChatModel | None:
        return self.choice.model

    @property
    def budget_applies(self) -> bool:
        """Whether the daily dollar budget limits this model: it is capped and the model costs money."""
        return self.model is not None and self.model.priced and self.budget.capped

    def writer(self, workspace: Workspace | None) -> asyncio.Lock:
        """The lock a request holds while it adds documents to ``workspace`` (the shared store: ``None``)."""
        return self.writers.setdefault(workspace.id if workspace else "", asyncio.Lock())
