"""The HTTP API with SEXTANT_WORKSPACES=on, over the real knowledge-base MCP server (in memory): every request
is scoped by its bearer token, and no workspace reads or deletes another's documents, on the embedded store and
on a real ``chroma run`` server (a database per workspace)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule, run_state_machine_as_test

from sextant.agent.sweeper import sweep
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.workspaces import DATABASE_PREFIX
from sextant.settings import KbSettings
from tests.agent.app_client import TOPICS, add, agent_state, new_workspace, open_workspace_app
from tests.chroma_process import running_chroma

pytestmark = pytest.mark.slow


@pytest.fixture
def client(kb: KnowledgeBase, tmp_path: Path) -> Iterator[TestClient]:
    with open_workspace_app(kb, tmp_path) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url


@pytest.fixture(params=["embedded", "server"])
def either_kb(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[KnowledgeBase]:
    """The knowledge base on the embedded store, or on a real ``chroma run`` server."""
    url = request.getfixturevalue("chroma_url") if request.param == "server" else None
    settings = KbSettings(chroma_url=url, chroma_dir=tmp_path / "store", _env_file=None)
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        yield kb


def server_workspaces(url: str) -> set[str]:
    """The workspace ids that have a database on the Chroma server, read from its REST API."""
    with urllib.request.urlopen(f"{url}/api/v2/tenants/default_tenant/databases", timeout=10) as response:
        names = [d["name"] for d in json.load(response)]
    return {n.removeprefix(DATABASE_PREFIX) for n in names if n.startswith(DATABASE_PREFIX)}


def listed(client: TestClient, auth: dict[str, str]) -> set[str]:
    response = client.get("/documents", headers=auth)
    assert response.status_code == 200, response.text
    return {d["id"] for d in response.json()["documents"]}


def cited(client: TestClient, auth: dict[str, str], question: str) -> set[str]:
    response = client.post("/query", json={"question": question}, headers=auth)
    assert response.status_code == 200, response.text
    return {s["document_id"] for s in response.json()["sources"]}


def test_every_scoped_route_needs_a_live_token(client: TestClient) -> None:
    assert client.get("/health").status_code == 200
    for method, path in [("GET", "/documents"), ("POST", "/query"), ("GET", "/workspaces/current")]:
        response = client.request(method, path, json={"question": "q"}, headers={"Authorization": "Bearer nope"})
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"] == "Bearer"
        assert "POST /workspaces" in response.json()["detail"]


def test_workspaces_do_not_see_each_others_documents(client: TestClient) -> None:
    alice, bob = new_workspace(client), new_workspace(client)
    add(client, alice, "espresso")
    assert listed(client, alice) == {"espresso"}
    assert listed(client, bob) == set()
    assert cited(client, bob, "How many grams of coffee in a double espresso?") == set()
    assert cited(client, alice, "How many grams of coffee in a double espresso?") == {"espresso"}
    page = client.get("/documents/espresso/pages/1", headers=bob)
    assert page.status_code == 404


def test_deleting_a_workspace_removes_its_documents_and_kills_its_token(client: TestClient, kb: KnowledgeBase) -> None:
    alice, bob = new_workspace(client), new_workspace(client)
    add(client, alice, "espresso")
    add(client, bob, "bees")
    folders = kb.settings.store_dir() / "workspaces"
    assert len(list(folders.iterdir())) == 2

    response = client.delete("/workspaces/current", headers=alice)
    assert response.status_code == 200 and response.json() == {"status": "deleted"}
    assert client.get("/documents", headers=alice).status_code == 401
    assert len(list(folders.iterdir())) == 1
    assert listed(client, bob) == {"bees"}


def test_limits_refuse_with_their_name_and_value(kb: KnowledgeBase, tmp_path: Path) -> None:
    with open_workspace_app(
        kb, tmp_path, max_workspaces=1, workspace_questions=1, workspace_documents=1, daily_uploads=3
    ) as client:
        alice = new_workspace(client)
        refused = client.post("/workspaces")
        assert refused.status_code == 429 and "SEXTANT_MAX_WORKSPACES=1" in refused.json()["detail"]

        assert client.post("/query", json={"question": "espresso?"}, headers=alice).status_code == 200
        again = client.post("/query/stream", json={"question": "espresso?"}, headers=alice)
        assert again.status_code == 429 and "SEXTANT_WORKSPACE_QUESTIONS=1" in again.json()["detail"]

        add(client, alice, "espresso")
        full = client.post(
            "/ingest", json={"documents": [{"id": "bees", "title": "b", "content": TOPICS["bees"]}]}, headers=alice
        )
        assert full.status_code == 409 and "SEXTANT_WORKSPACE_DOCUMENTS=1" in full.json()["detail"]

        files = [("files", (f"n{i}.md", b"# Note\nA short note.", "text/markdown")) for i in range(3)]
        day = client.post("/upload", files=files, headers=alice)
        assert day.status_code == 429 and "SEXTANT_DAILY_UPLOADS=3" in day.json()["detail"]


def test_workspace_routes_are_absent_in_single_user_mode(kb: KnowledgeBase, tmp_path: Path) -> None:
    with open_workspace_app(kb, tmp_path, workspaces="off") as client:
        assert client.post("/workspaces").status_code == 404
        assert client.get("/documents").status_code == 200  # no token needed: one person, one store


class CrossWorkspace(RuleBasedStateMachine):
    """Random create / ingest / search / delete / expire steps; a workspace only ever sees what it added."""

    client: TestClient
    kb: KnowledgeBase
    spaces = Bundle("spaces")

    def __init__(self) -> None:
        super().__init__()
        self.holds: dict[str, set[str]] = {}  # bearer header value -> documents it added
        self.gone: list[str] = []

    @rule(target=spaces)
    def create(self) -> str:
        auth = new_workspace(self.client)["Authorization"]
        self.holds[auth] = set()
        return auth

    @rule(auth=spaces, doc_id=st.sampled_from(sorted(TOPICS)))
    def ingest(self, auth: str, doc_id: str) -> None:
        add(self.client, {"Authorization": auth}, doc_id)
        self.holds[auth].add(doc_id)

    @rule(auth=spaces, doc_id=st.sampled_from(sorted(TOPICS)))
    def search(self, auth: str, doc_id: str) -> None:
        found = cited(self.client, {"Authorization": auth}, TOPICS[doc_id])
        assert found <= self.holds[auth]

    @rule(auth=consumes(spaces), expire=st.booleans())
    def delete_or_expire(self, auth: str, expire: bool) -> None:
        state = agent_state(self.client)
        assert state.workspaces is not None
        if expire:
            workspace = state.workspaces.resolve(auth.removeprefix("Bearer "))
            assert workspace is not None
            workspace.expires = 0.0
            self.client.portal.call(sweep, state)  # type: ignore[union-attr]
        else:
            assert self.client.delete("/workspaces/current", headers={"Authorization": auth}).status_code == 200
        self.gone.append(auth)
        del self.holds[auth]

    @invariant()
    def each_lists_exactly_its_own(self) -> None:
        for auth, holds in self.holds.items():
            assert listed(self.client, {"Authorization": auth}) == holds
        for auth in self.gone:
            assert self.client.get("/documents", headers={"Authorization": auth}).status_code == 401
        # A deleted or expired workspace leaves no store behind: no folder here, and on a server no database
        # (where each live one, listed just now, has its own).
        book = agent_state(self.client).workspaces
        assert book is not None
        live = {book.resolve(auth.removeprefix("Bearer ")).id for auth in self.holds}  # type: ignore[union-attr]
        folders = self.kb.settings.store_dir() / "workspaces"
        assert ({p.name for p in folders.iterdir()} if folders.is_dir() else set()) <= live
        if self.kb.settings.chroma_url:
            assert server_workspaces(self.kb.settings.chroma_url) == live

    def teardown(self) -> None:
        # Examples share one app; each starts with no workspace.
        for auth in self.holds:
            assert self.client.delete("/workspaces/current", headers={"Authorization": auth}).status_code == 200


def test_no_cross_workspace_reads_or_deletes(either_kb: KnowledgeBase, tmp_path: Path) -> None:
    with open_workspace_app(either_kb, tmp_path) as client:
        CrossWorkspace.client = client
        CrossWorkspace.kb = either_kb
        run_state_machine_as_test(
            CrossWorkspace,
            settings=settings(
                max_examples=8,
                stateful_step_count=12,
                deadline=None,
                derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
            ),
        )
