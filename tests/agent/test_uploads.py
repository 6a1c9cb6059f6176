"""Documents in: uploaded files read within their limits and parsed by the knowledge base, and an overview
written by the model for each document added or replaced."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fastapi import UploadFile

from sextant.agent.api import IngestResult
from sextant.agent.kb_client import SHARED_STORE, ScopedKb
from sextant.agent.uploads import MAX_UPLOAD_BYTES, add_overview, upload_each
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel
from tests.agent.app_client import ClientFor, agent_state, scripted, spent_already

pytestmark = pytest.mark.slow


NOTES = ("files", ("notes.md", b"# Notes\n\nThe parks budget was approved.", "text/markdown"))


def test_ingest_and_upload_store_an_overview_the_model_wrote(client_for: Any) -> None:
    replies = [{"kind": "A guide", "about": "pulling espresso"}, {"kind": "Minutes", "about": "the parks budget"}]
    model = ModelChoice(ScriptedModel([], json_replies=replies), "scripted", "test double")
    client = client_for(model, overviews="on")  # the fixture ingests the espresso guide
    result = client.post("/upload", files=[NOTES]).json()["results"][0]
    assert (result["status"], result["overview"]) == ("added", True)
    docs = {d["id"]: d["overview"] for d in client.get("/documents").json()["documents"]}
    assert docs == {"espresso": "A guide: pulling espresso.", "notes": "Minutes: the parks budget."}
    assert isinstance(model.model, ScriptedModel) and "The parks budget was approved." in model.model.json_prompts[1]
    # Unchanged content keeps its overview and asks the model nothing (the script has no reply left).
    again = client.post("/upload", files=[NOTES]).json()["results"][0]
    assert (again["status"], again["overview"]) == ("unchanged", False)


def test_without_an_overview_the_document_is_still_stored(client_for: Any, tmp_path: Path) -> None:
    failing = ModelChoice(ScriptedModel([]), "scripted", "test double")  # no JSON reply: the model fails
    result = client_for(failing, overviews="on").post("/upload", files=[NOTES]).json()["results"][0]
    assert (result["status"], result["overview"]) == ("added", False)
    spent_already(tmp_path, 1.0)
    spent = scripted(json_replies=[{"about": "never asked"}], priced=True)
    result = client_for(spent, overviews="on", daily_budget_usd=0.5).post("/upload", files=[NOTES]).json()
    assert result["results"][0]["overview"] is False


def files(*named: tuple[str, bytes]) -> list[UploadFile]:
    return [UploadFile(io.BytesIO(data), filename=name) for name, data in named]


PARKS = b"# Notes\n\nThe parks budget was approved."


def test_a_file_over_the_upload_limit_is_refused_unsent_and_the_next_is_still_stored(client_for: ClientFor) -> None:
    client = client_for()
    big = b"x" * (MAX_UPLOAD_BYTES + 1)
    state = agent_state(client)
    shared = ScopedKb(state.kb, SHARED_STORE)
    results = client.portal.call(upload_each, state, shared, files(("big.md", big), ("notes.md", PARKS)))  # type: ignore[union-attr]
    assert [(r.name, r.id, r.status) for r in results] == [
        ("big.md", "big.md", "refused"),
        ("notes.md", "notes", "added"),
    ]
    assert results[0].reason == "larger than the agent's upload limit of 10 MB per file"
    assert {d["id"] for d in client.get("/documents").json()["documents"]} == {"espresso", "notes"}


def test_while_the_knowledge_base_is_down_each_file_is_refused_with_the_reason(client_for: ClientFor) -> None:
    client = client_for()
    state = agent_state(client)
    state.kb.reason = "the knowledge base stopped answering"  # as the supervisor marks a hung process
    shared = ScopedKb(state.kb, SHARED_STORE)
    results = client.portal.call(upload_each, state, shared, files(("a.md", PARKS), ("b.md", PARKS)))  # type: ignore[union-attr]
    assert [r.status for r in results] == ["refused", "refused"]
    assert all(r.reason == "the knowledge base is unavailable: the knowledge base stopped answering" for r in results)


def test_with_overviews_off_the_model_is_never_asked(client_for: ClientFor) -> None:
    model = scripted(json_replies=[{"kind": "Minutes", "about": "the parks budget"}])
    client = client_for(model, overviews="off")
    result = client.post("/upload", files=[NOTES]).json()["results"][0]
    assert (result["status"], result["overview"]) == ("added", False)
    assert isinstance(model.model, ScriptedModel) and model.model.json_prompts == []


def test_only_a_document_just_added_or_replaced_gets_an_overview(client_for: ClientFor) -> None:
    model = scripted(json_replies=[{"kind": "Minutes", "about": "the parks budget"}])
    client = client_for(model, overviews="on")  # the espresso guide, just added, got the reply
    assert isinstance(model.model, ScriptedModel)
    asked = len(model.model.json_prompts)
    state = agent_state(client)
    shared = ScopedKb(state.kb, SHARED_STORE)
    for status in ("refused", "unchanged"):
        result = IngestResult(id="espresso", status=status)
        assert client.portal.call(add_overview, state, shared, result) is False  # type: ignore[union-attr]
    assert len(model.model.json_prompts) == asked
