"""The workspace sweeper: an expired or closed workspace is deleted with its store once no request uses it, and
one the knowledge base cannot delete yet is kept for the next sweep."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sextant.agent.state import AgentState
from sextant.agent.sweeper import sweep
from sextant.agent.workspaces import Workspace, WorkspaceBook
from sextant.kb.knowledge_base import KnowledgeBase
from tests.agent.app_client import add, agent_state, new_workspace, open_workspace_app

pytestmark = pytest.mark.slow


@pytest.fixture
def client(kb: KnowledgeBase, tmp_path: Path) -> Iterator[TestClient]:
    with open_workspace_app(kb, tmp_path) as test_client:
        yield test_client


def holding_espresso(client: TestClient, auth: dict[str, str]) -> tuple[AgentState, WorkspaceBook, Workspace]:
    """The app's state and book, and the workspace of ``auth`` with a document in it (a store to delete)."""
    add(client, auth, "espresso")
    state = agent_state(client)
    assert state.workspaces is not None
    workspace = state.workspaces.resolve(auth["Authorization"].removeprefix("Bearer "))
    assert workspace is not None
    return state, state.workspaces, workspace


def test_an_expired_workspace_is_swept_with_its_store(client: TestClient, kb: KnowledgeBase) -> None:
    alice = new_workspace(client)
    add(client, alice, "espresso")
    state = agent_state(client)
    assert state.workspaces is not None
    workspace = state.workspaces.resolve(alice["Authorization"].removeprefix("Bearer "))
    assert workspace is not None
    workspace.expires = 0.0  # aged by hand: the sweep reads the book, not the clock's history
    assert client.get("/documents", headers=alice).status_code == 401
    assert client.portal.call(sweep, state) == 1  # type: ignore[union-attr]
    assert not (kb.settings.store_dir() / "workspaces" / workspace.id).exists()
    assert state.workspaces.active() == 0


def test_a_workspace_in_use_is_kept_until_its_last_request_ends(client: TestClient, kb: KnowledgeBase) -> None:
    alice, bob = new_workspace(client), new_workspace(client)
    state, book, workspace = holding_espresso(client, alice)
    book.begin(workspace)  # a request still streaming its answer
    book.close(workspace)
    assert client.portal.call(sweep, state) == 0  # type: ignore[union-attr]
    assert (kb.settings.store_dir() / "workspaces" / workspace.id).is_dir()
    book.end(workspace)
    assert client.portal.call(sweep, state) == 1  # type: ignore[union-attr]
    assert not (kb.settings.store_dir() / "workspaces" / workspace.id).exists()
    assert book.resolve(bob["Authorization"].removeprefix("Bearer ")) is not None  # live: untouched


def test_a_workspace_the_knowledge_base_cannot_delete_now_is_deleted_by_a_later_sweep(
    client: TestClient, kb: KnowledgeBase
) -> None:
    state, book, workspace = holding_espresso(client, new_workspace(client))
    workspace.expires = 0.0
    state.kb.reason = "the knowledge base stopped answering"  # as the supervisor marks a hung process
    assert client.portal.call(sweep, state) == 0  # type: ignore[union-attr]
    assert book.due() == [workspace]
    state.kb.reason = None  # answering again
    assert client.portal.call(sweep, state) == 1  # type: ignore[union-attr]
    assert book.due() == [] and not (kb.settings.store_dir() / "workspaces" / workspace.id).exists()


def test_with_workspaces_off_there_is_nothing_to_sweep(kb: KnowledgeBase, tmp_path: Path) -> None:
    with open_workspace_app(kb, tmp_path, workspaces="off") as client:
        assert client.portal.call(sweep, agent_state(client)) == 0  # type: ignore[union-attr]
