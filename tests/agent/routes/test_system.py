"""The agent about itself over HTTP: its health and the knowledge base's tools."""

from __future__ import annotations

from typing import Any

import pytest

from sextant.llm.chat import ModelError
from sextant.llm.scripted import ScriptedTurn
from tests.agent.app_client import ClientFor, agent_state, scripted

pytestmark = pytest.mark.slow


def test_tools_are_discovered_and_only_read_tools_are_offered(client_for: Any) -> None:
    tools = {t["name"]: t for t in client_for().get("/tools").json()}
    kept_from_model = ("kb_ingest", "kb_upload", "kb_set_overview", "kb_page_image")
    assert not any(tools[name]["offered_to_model"] for name in kept_from_model)
    assert tools["kb_page_image"]["read_only"]  # read-only, yet for a person's eyes: not in OFFERED_TO_MODEL
    assert {n for n, t in tools.items() if t["offered_to_model"]} == {"kb_search", "kb_list", "kb_stats"}


def test_health_is_degraded_with_the_reason_while_the_knowledge_base_is_down(client_for: ClientFor) -> None:
    client = client_for()
    assert client.get("/health").json()["status"] == "ok"
    agent_state(client).kb.reason = "the knowledge base stopped answering"  # as the supervisor marks a hung process
    health = client.get("/health").json()
    assert (health["status"], health["kb_connected"]) == ("degraded", False)
    assert health["kb_reason"] == "the knowledge base stopped answering"


def test_health_is_degraded_once_the_model_could_not_be_reached(client_for: ClientFor) -> None:
    client = client_for(scripted(ScriptedTurn(error=ModelError("connection refused", retryable=True))))
    assert client.get("/health").json()["model"]["reachable"] is None  # not called yet
    answered = client.post("/query", json={"question": "espresso?"}).json()
    assert answered["mode"] == "excerpts" and "could not be reached" in answered["reason"]
    health = client.get("/health").json()
    assert (health["status"], health["model"]["reachable"], health["model"]["configured"]) == ("degraded", False, True)
