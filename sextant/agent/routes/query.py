"""Questions: ``/query`` answers at once, ``/query/stream`` streams the loop's events as server-sent events."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException
from fastapi.sse import EventSourceResponse, ServerSentEvent

from sextant.agent.answer_check import answer_check_for
from sextant.agent.api import QueryRequest, QueryResponse
from sextant.agent.deps import Answering, Asking, Budgeted, Kb, Limited, State, kb_down, kb_failed
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    DoneEvent,
    ErrorEvent,
    SourcesEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from sextant.agent.kb_client import KbFailed, KbUnavailable, ScopedKb
from sextant.agent.loop import AgentLoop, HistoryItem
from sextant.agent.ops import TimedModel, TimedTools
from sextant.agent.passages import Passage
from sextant.agent.state import AgentState

log = logging.getLogger(__name__)

router = APIRouter(dependencies=[Limited, Answering, Budgeted, Asking])


@router.post("/query")
async def query(body: QueryRequest, state: State, kb: Kb) -> QueryResponse:
    """Answer a question; the whole answer at once."""
    sources: list[Passage] = list(body.passages)
    trace: list[ToolCallEvent | ToolResultEvent] = []
    answer: AnswerEvent | None = None
    try:
        async for event in _run(state, kb, body):
            if isinstance(event, SourcesEvent):
                sources = event.passages
            elif isinstance(event, ToolCallEvent | ToolResultEvent):
                trace.append(event)
            elif isinstance(event, AnswerEvent):
                answer = event
    except KbUnavailable as exc:
        raise kb_down(exc) from exc
    except KbFailed as exc:
        raise kb_failed(exc) from exc
    if answer is None:
        raise HTTPException(500, "the agent finished without an answer")
    return QueryResponse(
        request_id=kb.scope.request_id or "",
        answer=answer.text,
        mode=answer.mode,
        model=answer.model,
        reason=answer.reason,
        sources=sources,
        citations=answer.citations,
        statements=answer.statements,
        verification=answer.verification,
        abstained=answer.abstained,
        usage=answer.usage,
        turns=answer.turns,
        trace=trace,
    )


@router.post(
    "/query/stream",
    response_class=EventSourceResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/AgentEvent"}}},
            "description": "Server-sent events: each frame's `event:` is the `event` field of its JSON `data:`.",
        }
    },
)
async def query_stream(body: QueryRequest, state: State, kb: Kb) -> AsyncIterator[ServerSentEvent]:
    """Answer a question as server-sent events: tool_call, tool_result, sources, token, citation, answer,
    done (or error, then done)."""
    started = time.perf_counter()
    try:
        async for event in _run(state, kb, body):
            yield _frame(event)
    except KbUnavailable as exc:
        log.error("question failed: the knowledge base is unavailable: %s", exc)
        yield _frame(ErrorEvent(message=f"the knowledge base is unavailable: {exc}"))
    except KbFailed as exc:
        log.error("question failed: the knowledge base failed: %s", exc)
        yield _frame(ErrorEvent(message=f"the knowledge base failed: {exc}"))
    except Exception as exc:
        log.exception("query failed")
        yield _frame(ErrorEvent(message=f"the answer failed: {exc}"))
    elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    yield _frame(DoneEvent(request_id=kb.scope.request_id or "", elapsed_ms=elapsed_ms))


def _frame(event: AgentEvent) -> ServerSentEvent:
    """One frame per event, named as the event's own ``event`` field says, so a browser can dispatch on it."""
    return ServerSentEvent(event=event.event, data=event)


async def _run(state: AgentState, kb: ScopedKb, body: QueryRequest) -> AsyncIterator[AgentEvent]:
    history = [HistoryItem(turn.role, turn.text) for turn in body.history]
    async for event in served_loop(state, kb).run(body.question, history=history, held=body.passages):
        if isinstance(event, AnswerEvent) and state.model is not None:
            state.model_reachable = event.mode == "model" or "could not be reached" not in event.reason
        yield event


def served_loop(state: AgentState, kb: ScopedKb) -> AgentLoop:
    """The loop a question is answered with: the agent's settings, its models timed, the daily budget where it
    applies to the model."""
    return AgentLoop.from_settings(
        TimedTools(kb, state.metrics),
        TimedModel(state.model, state.metrics) if state.model is not None else None,
        state.settings,
        answer_check=answer_check_for(state.choice),
        budget=state.budget if state.budget_applies else None,
    )
