"""Workspaces (SEXTANT_WORKSPACES=on): create one, read the caller's, delete it with its documents."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request

from sextant.agent.api import WorkspaceCreated, WorkspaceDeleted, WorkspaceInfo, WorkspaceLimits
from sextant.agent.deps import Limited, Scoped, State, bearer_workspace, refusal
from sextant.agent.state import AgentState
from sextant.agent.sweeper import SWEEP_S, sweep
from sextant.agent.uploads import MAX_UPLOAD_BYTES
from sextant.agent.workspaces import LimitReached, Workspace, WorkspaceBook

router = APIRouter()


@router.post("/workspaces", dependencies=[Limited], status_code=201)
async def create_workspace(state: State) -> WorkspaceCreated:
    """Create a private, expiring workspace (only with SEXTANT_WORKSPACES=on). Its token is shown once; send it
    as `Authorization: Bearer <token>` on every other request."""
    book = _book(state)
    try:
        workspace, token = book.create()
    except LimitReached as exc:
        raise refusal(exc, retry_after=int(SWEEP_S)) from exc
    return WorkspaceCreated(token=token, **_workspace_info(state, workspace).model_dump())


@router.get("/workspaces/current")
async def current(state: State, workspace: Scoped) -> WorkspaceInfo:
    """The caller's workspace: when it expires, what it has used, its limits."""
    _book(state)
    assert workspace is not None
    return _workspace_info(state, workspace)


@router.delete("/workspaces/current")
async def delete_workspace(request: Request, state: State) -> WorkspaceDeleted:
    """Delete the caller's workspace and every document in it. Its token stops working at once; a request
    still running in it finishes first."""
    book = _book(state)
    workspace = bearer_workspace(request, book)
    book.close(workspace)
    await sweep(state)
    return WorkspaceDeleted(status="deleting" if workspace in book.due() or workspace.in_flight else "deleted")


def _book(state: AgentState) -> WorkspaceBook:
    if state.workspaces is None:
        raise HTTPException(404, "workspaces are off (SEXTANT_WORKSPACES=off): this server has one shared store")
    return state.workspaces


def _workspace_info(state: AgentState, workspace: Workspace) -> WorkspaceInfo:
    settings = state.settings
    limits = WorkspaceLimits(
        documents=settings.workspace_documents,
        questions=settings.workspace_questions,
        file_mb=MAX_UPLOAD_BYTES // (1024 * 1024),
    )
    return WorkspaceInfo(expires_at=workspace.expires, questions_asked=workspace.questions, limits=limits)
