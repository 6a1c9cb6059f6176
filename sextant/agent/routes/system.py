"""The agent about itself: its health, its Prometheus metrics, and the knowledge base's tools."""

from __future__ import annotations

from fastapi import APIRouter, Response

from sextant.agent.api import Health, ModelHealth, ToolInfo
from sextant.agent.deps import State, budget_meaning

router = APIRouter()


@router.get("/tools")
async def tools(state: State) -> list[ToolInfo]:
    """The knowledge base's tools as discovered over MCP, and which of them the model may call."""
    return [
        ToolInfo(
            name=t.spec.name,
            description=t.spec.description,
            read_only=t.read_only,
            offered_to_model=t.offered,
            input_schema=t.spec.input_schema,
        )
        for t in state.kb.tools.values()
    ]


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(state: State) -> Response:
    """Prometheus text format: requests by route and status, latencies by stage, today's spend."""
    state.metrics.spent_today.set(state.budget.spent())
    return Response(state.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


@router.get("/health")
async def health(state: State) -> Health:
    """Whether the knowledge base is connected, and whether a model is configured and reachable."""
    configured = state.model is not None
    reachable = state.model_reachable if configured else False
    return Health(
        status="ok" if state.kb.connected and (reachable is not False or not configured) else "degraded",
        kb_connected=state.kb.connected,
        kb_reason=state.kb.reason,
        kb_restarts=state.kb.restarts,
        kb_tools=len(state.kb.tools),
        model=ModelHealth(
            configured=configured,
            reachable=reachable,
            provider=state.choice.provider,
            name=state.model.name if state.model is not None else None,
            detail=state.choice.detail,
        ),
        answers="model" if configured else "excerpts",
        budget_usd=state.settings.daily_budget_usd,
        budget=budget_meaning(state),
        spent_today_usd=round(state.budget.spent(), 6),
        workspaces=state.workspaces is not None,
    )
