"""The agent's app over the real knowledge-base MCP server (in memory), through FastAPI's test client.

What the route tests share: the app with a model of the test's choosing (the scripted double, or none), its
daily spend kept in the test's folder, and the espresso guide ingested; and the helpers to script a model's
turns and to read an SSE stream as a browser would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from fastapi.testclient import TestClient
from mcp.server.context import ServerMiddleware

from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.settings import AgentSettings
from sextant.agent.state import AgentState
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import Quote, Statement
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel, ScriptedTurn

REPO = Path(__file__).resolve().parents[2]
ESPRESSO = "# Espresso\n\nA double shot uses 18 grams of finely ground coffee and takes 25 to 30 seconds."
READY = ScriptedTurn(text="READY")
DOSE = "18 grams of finely ground coffee"


class ClientFor(Protocol):
    """Opens an app with ``model`` (none by default) and settings ``overrides``; the espresso guide is in it."""

    def __call__(self, model: ModelChoice | None = None, **overrides: Any) -> TestClient: ...


def quoted(text: str, *quotes: tuple[int, str]) -> Statement:
    return Statement(text, tuple(Quote(label, words) for label, words in quotes))


def agent_settings(**overrides: Any) -> AgentSettings:
    # Overviews off unless a test asks: the fixture's ingest would otherwise take a scripted JSON reply.
    return AgentSettings(_env_file=None, **{"overviews": "off", **overrides})


def scripted(
    *turns: ScriptedTurn, json_replies: list[dict[str, Any]] | None = None, priced: bool = False
) -> ModelChoice:
    return ModelChoice(ScriptedModel(turns, json_replies=json_replies or [], priced=priced), "scripted", "test double")


@contextmanager
def app_clients(kb: KnowledgeBase, tmp_path: Path) -> Iterator[ClientFor]:
    """Open as many apps over ``kb`` as a test asks for; each is closed when the test ends."""
    clients: list[TestClient] = []

    def open_client(model: ModelChoice | None = None, **overrides: Any) -> TestClient:
        app = create_app(
            agent_settings(**overrides),
            kb_server=create_server(kb),
            model=model or ModelChoice(None, "none", "no model in this test"),
            budget=DailyBudget(overrides.get("daily_budget_usd", 1.0), tmp_path / "spend.json"),
        )
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        client.post("/ingest", json={"documents": [{"id": "espresso", "title": "Espresso guide", "content": ESPRESSO}]})
        return client

    try:
        yield open_client
    finally:
        for client in clients:
            client.__exit__(None, None, None)


def parse_sse(wire: str) -> list[tuple[str, dict[str, Any]]]:
    """Frames exactly as a browser's EventSource parser would split them."""
    frames = []
    for block in wire.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        frames.append((fields["event"], json.loads(fields["data"])))
    return frames


def spent_already(tmp_path: Path, usd: float) -> None:
    today = datetime.now(UTC).date().isoformat()
    (tmp_path / "spend.json").write_text(json.dumps({"day": today, "spent_usd": usd}), encoding="utf-8")


def open_workspace_app(
    kb: KnowledgeBase, state_dir: Path, *, server_middleware: Sequence[ServerMiddleware[Any]] = (), **overrides: Any
) -> TestClient:
    """The app with workspaces on (and no model), its book kept in ``state_dir``; enter it to start it.
    ``server_middleware`` wraps every message the knowledge-base server receives."""
    values = {"overviews": "off", "workspaces": "on", "rate_limit": 10_000, **overrides}
    server = create_server(kb, workspace_ttl_s=int(values.get("workspace_ttl", 3600)))
    server.middleware.extend(server_middleware)
    app = create_app(
        AgentSettings(_env_file=None, **values),
        kb_server=server,
        model=ModelChoice(None, "none", "no model in this test"),
        budget=DailyBudget(1.0, state_dir / "spend.json"),
        state_dir=state_dir,
    )
    return TestClient(app)


def new_workspace(client: TestClient) -> dict[str, str]:
    """A new workspace's ``Authorization`` header."""
    response = client.post("/workspaces")
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def agent_state(client: TestClient) -> AgentState:
    state: AgentState = client.app.state.agent  # type: ignore[attr-defined]
    return state


TOPICS = {
    "espresso": "A double espresso uses 18 grams of finely ground coffee and takes 25 to 30 seconds.",
    "bees": "In early spring the beekeeper checks that the queen is laying and that honey stores last.",
    "tax": "The self-employed file their tax return by the end of January with every receipt kept.",
    "bread": "A sourdough starter is fed with equal weights of flour and water every twelve hours.",
}


def add(client: TestClient, auth: dict[str, str], doc_id: str) -> None:
    """Ingest the ``TOPICS`` document ``doc_id`` into the workspace of ``auth``."""
    documents = [{"id": doc_id, "title": doc_id, "content": TOPICS[doc_id]}]
    response = client.post("/ingest", json={"documents": documents}, headers=auth)
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["status"] in ("added", "unchanged")
