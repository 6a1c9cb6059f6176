"""What a route needs before it runs: the app's state, the caller's workspace and the knowledge base as the
request may use it, and the refusals (401, 409, 429, 503) of the rate limit, the budgets, the workspace limits
and a knowledge base that is down; a knowledge base that fails a call is a 502."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from sextant.agent.kb_client import KbFailed, KbScope, KbUnavailable, ScopedKb, ToolRefused
from sextant.agent.request_context import request_id_of
from sextant.agent.state import AgentState
from sextant.agent.workspaces import LimitReached, Workspace, WorkspaceBook

# What a 503 for a knowledge base that is down tells the client to wait: about one restart.
KB_RETRY_S = 5


def state_of(request: Request) -> AgentState:
    state: AgentState = request.app.state.agent
    return state


State = Annotated[AgentState, Depends(state_of)]


async def rate_limited(request: Request, state: State) -> None:
    """Per-client request rate on the endpoints that cost work (not on /health)."""
    client = request.client.host if request.client else "unknown"
    if not await state.limiter.hit(state.rate, "sextant", client):
        reset, _ = await state.limiter.get_window_stats(state.rate, "sextant", client)
        retry = max(1, int(reset - time.time()))
        raise HTTPException(
            429,
            f"rate limit: {state.settings.rate_limit} requests per {state.settings.rate_window} s",
            headers={"Retry-After": str(retry)},
        )


def budget_meaning(state: AgentState) -> str:
    """The daily budget in words, as /health reports it."""
    if not state.budget.capped:
        return "no cap (SEXTANT_DAILY_BUDGET_USD=0)"
    if state.model is None or not state.model.priced:
        return f"${state.budget.limit_usd:.2f} per UTC day, not applied: the model in use costs nothing"
    return f"${state.budget.limit_usd:.2f} per UTC day on {state.model.name}; past it, questions get 429"


async def within_budget(state: State) -> None:
    """Refuse a question once today's model budget is spent, until it resets at midnight UTC."""
    if state.budget_applies and state.budget.exhausted():
        raise HTTPException(
            429,
            f"today's model budget (${state.settings.daily_budget_usd:.2f}, SEXTANT_DAILY_BUDGET_USD) is spent; "
            "it resets at 00:00 UTC",
            headers={"Retry-After": str(state.budget.seconds_until_reset())},
        )


async def workspace_scope(request: Request, state: State) -> AsyncIterator[Workspace | None]:
    """With workspaces on: the caller's workspace, from its bearer token.

    The workspace counts as busy until the response (a stream included) has been sent, so it is never
    deleted under a running request.
    """
    book = state.workspaces
    if book is None:
        yield None
        return
    workspace = bearer_workspace(request, book)
    book.begin(workspace)
    try:
        yield workspace
    finally:
        book.end(workspace)


Scoped = Annotated[Workspace | None, Depends(workspace_scope)]


async def request_kb(request: Request, state: State, workspace: Scoped) -> ScopedKb:
    """The knowledge base as this request may use it: each of its calls reaches the caller's workspace (the
    shared store with workspaces off) and carries the request's id."""
    return ScopedKb(state.kb, KbScope(workspace.id if workspace else None, request_id_of(request)))


Kb = Annotated[ScopedKb, Depends(request_kb)]


def bearer_workspace(request: Request, book: WorkspaceBook) -> Workspace:
    """The workspace whose token the request carries.

    Raises:
        HTTPException: 401 when the request carries no live workspace token.
    """
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    workspace = book.resolve(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if workspace is None:
        raise HTTPException(
            401,
            "a workspace token is required (Authorization: Bearer …); create a workspace with POST /workspaces. "
            "An expired or deleted workspace's token no longer opens anything.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return workspace


async def question_allowed(state: State, workspace: Scoped) -> None:
    """Count the question against its workspace and the day (workspaces on)."""
    if workspace is None or state.workspaces is None or state.questions_today is None:
        return
    settings = state.settings
    try:
        if state.questions_today.exhausted():
            raise LimitReached("SEXTANT_DAILY_QUESTIONS", settings.daily_questions, "today's questions are used up")
        state.workspaces.count_question(workspace, settings.workspace_questions)
    except LimitReached as exc:
        raise refusal(exc, retry_after=state.questions_today.seconds_until_reset()) from exc
    state.questions_today.add(1)


async def ingest_allowed(state: AgentState, kb: ScopedKb, adding: int) -> None:
    """Refuse an ingest or upload that would pass the workspace's documents limit or the day's uploads.

    Raises:
        HTTPException: 429 past the day's uploads, 409 past the workspace's documents.
    """
    if kb.scope.workspace is None or state.uploads_today is None:
        return
    settings = state.settings
    if state.uploads_today.spent() + adding > settings.daily_uploads:
        exc = LimitReached("SEXTANT_DAILY_UPLOADS", settings.daily_uploads, "today's uploads are used up")
        raise refusal(exc, retry_after=state.uploads_today.seconds_until_reset())
    with kb_errors():
        held = len((await kb.list_documents()).documents)
    if held + adding > settings.workspace_documents:
        exc = LimitReached(
            "SEXTANT_WORKSPACE_DOCUMENTS",
            settings.workspace_documents,
            f"this workspace holds {held} documents; delete the workspace or start a new one",
        )
        raise refusal(exc, status=409)


def refusal(exc: LimitReached, *, status: int = 429, retry_after: int | None = None) -> HTTPException:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return HTTPException(status, str(exc), headers=headers)


async def kb_answering(state: State) -> None:
    """Refuse work while the knowledge base is down: an answer or upload now would be built on nothing."""
    try:
        state.kb.ensure_connected()
    except KbUnavailable as exc:
        raise kb_down(exc) from exc


def kb_down(exc: KbUnavailable) -> HTTPException:
    return HTTPException(503, f"the knowledge base is unavailable: {exc}", headers={"Retry-After": str(KB_RETRY_S)})


@contextmanager
def kb_errors() -> Iterator[None]:
    """A route's knowledge-base calls, their failures as HTTP errors.

    Raises:
        HTTPException: 503 while the knowledge base is down, 502 when it fails a call (or answers outside its
            contract), 422 when a tool refuses.
    """
    try:
        yield
    except KbUnavailable as exc:
        raise kb_down(exc) from exc
    except KbFailed as exc:
        raise kb_failed(exc) from exc
    except ToolRefused as exc:
        raise HTTPException(422, str(exc)) from exc


def kb_failed(exc: KbFailed) -> HTTPException:
    return HTTPException(502, f"the knowledge base failed: {exc}")


Answering = Depends(kb_answering)
Limited = Depends(rate_limited)
Budgeted = Depends(within_budget)
Asking = Depends(question_allowed)
