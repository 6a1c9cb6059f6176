"""The supervised knowledge base with the real ``sextant-kb`` process: killed between questions, killed while a
question is in flight, and stopped (hung). No test double for the process; the model is the scripted double
where a question needs a turn to kill the process in."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from fastapi.testclient import TestClient

from sextant.agent import kb_supervisor
from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.kb_client import SHARED_STORE, KbUnavailable, stdio_server
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.llm.chat import ChatEvent, ChatRequest
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, search_call
from tests.agent.app_client import ESPRESSO, agent_settings, parse_sse

pytestmark = pytest.mark.slow

QUESTION = "How often should the espresso machine be descaled?"
# Generous bounds for a loaded 2-core machine; they keep a broken test from hanging, they time nothing.
WAIT_S = 120.0


def kb_process() -> psutil.Process:
    """The ``sextant-kb`` child of this test process (waits for a restarted one to appear)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for child in psutil.Process().children(recursive=True):
            try:
                if child.status() != psutil.STATUS_ZOMBIE and any("sextant-kb" in p for p in child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.05)
    raise AssertionError("no sextant-kb child process")


def kill(process: psutil.Process) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(WAIT_S)


def wait_for(check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.05)
    raise AssertionError("the condition never held")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))  # read by each sextant-kb process
    return tmp_path


def open_app(store: Path, model: ModelChoice | None = None) -> TestClient:
    app = create_app(
        agent_settings(),
        model=model or ModelChoice(None, "none", "no model in this test"),
        budget=DailyBudget(1.0, store / "spend.json"),
        state_dir=store / "agent",
    )
    return TestClient(app)


def test_a_killed_knowledge_base_is_reported_refused_and_restarted_with_its_documents(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A longer first backoff keeps the down state open long enough to ask a question in it.
    monkeypatch.setattr(kb_supervisor, "BACKOFF_FIRST_S", 3.0)
    with open_app(store) as client:
        client.post("/ingest", json={"documents": [{"id": "espresso", "title": "Espresso guide", "content": ESPRESSO}]})
        before = client.post("/query", json={"question": QUESTION}).json()
        assert before["sources"][0]["document_id"] == "espresso"
        first = kb_process()

        kill(first)
        down = wait_for(lambda: (h := client.get("/health").json()) and not h["kb_connected"] and h)
        assert down["status"] == "degraded" and "exited" in down["kb_reason"]
        refused = client.post("/query", json={"question": QUESTION})
        assert refused.status_code == 503 and refused.headers["retry-after"]
        assert "knowledge base is unavailable" in refused.json()["detail"]
        streamed = client.post("/query/stream", json={"question": QUESTION})
        assert streamed.status_code == 503
        uploaded = client.post("/upload", files=[("files", ("notes.md", b"# Notes\n\nSome notes.", "text/markdown"))])
        assert uploaded.status_code == 503

        up = wait_for(lambda: (h := client.get("/health").json()) and h["kb_connected"] and h)
        assert up["kb_restarts"] == 1 and up["kb_reason"] is None and up["status"] == "ok"
        assert kb_process().pid != first.pid
        after = client.post("/query", json={"question": QUESTION}).json()
        assert (after["answer"], after["sources"]) == (before["answer"], before["sources"])


class KillsTheKnowledgeBase:
    """The scripted model, except that its first turn kills the knowledge-base process before it asks for a
    search: the question is in flight when the process dies."""

    def __init__(self, script: ScriptedModel) -> None:
        self._script = script
        self.name, self.calls_tools_itself, self.priced = script.name, True, False

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        if not self._script.requests:
            await asyncio.to_thread(kill, kb_process())
        async for event in self._script.stream(request):
            yield event

    async def complete_json(self, prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        return await self._script.complete_json(prompt, schema)

    async def aclose(self) -> None:
        await self._script.aclose()


def killing_model() -> ModelChoice:
    turns = [ScriptedTurn(tool_calls=(search_call("descaling interval"),)), ScriptedTurn(text="unreached")]
    return ModelChoice(KillsTheKnowledgeBase(ScriptedModel(turns)), "scripted", "test double")  # type: ignore[arg-type]


@pytest.mark.parametrize("route", ["/query", "/query/stream"])
def test_a_question_in_flight_when_the_knowledge_base_dies_fails_without_an_answer(store: Path, route: str) -> None:
    with open_app(store, killing_model()) as client:
        client.post("/ingest", json={"documents": [{"id": "espresso", "title": "Espresso guide", "content": ESPRESSO}]})
        response = client.post(route, json={"question": QUESTION})
        if route == "/query":
            assert response.status_code == 503
            assert "knowledge base is unavailable" in response.json()["detail"]
        else:
            frames = parse_sse(response.text)
            names = [name for name, _ in frames]
            assert "answer" not in names and names[-2:] == ["error", "done"]
            assert "knowledge base is unavailable" in frames[-2][1]["message"]


async def test_a_hung_knowledge_base_is_reported_at_once_and_restarted_after_the_grace(store: Path) -> None:
    server = stdio_server(None, [])
    async with KbSupervisor(server, restart_hung_after_s=2.0) as kb:
        assert kb.connected and (await kb.call("kb_stats", {}, SHARED_STORE)).ok
        hung = await asyncio.to_thread(kb_process)
        hung.send_signal(signal.SIGSTOP)
        try:
            await asyncio.to_thread(wait_for, lambda: not kb.connected)
            assert "stopped answering" in (kb.reason or "")
            with pytest.raises(KbUnavailable, match="stopped answering"):
                await kb.call("kb_stats", {}, SHARED_STORE)
            await asyncio.to_thread(wait_for, lambda: kb.restarts == 1 and kb.connected)
        finally:
            if hung.is_running():
                os.kill(hung.pid, signal.SIGKILL)
        assert not hung.is_running() or hung.status() == psutil.STATUS_ZOMBIE
        assert (await kb.call("kb_stats", {}, SHARED_STORE)).ok


async def test_a_knowledge_base_that_cannot_start_fails_the_first_start_loudly(store: Path) -> None:
    with pytest.raises(KbUnavailable, match="could not be started"):
        async with KbSupervisor(stdio_server("sextant-kb-that-does-not-exist")):
            pass


@pytest.fixture(autouse=True)
def _no_stray_processes() -> Iterator[None]:
    yield
    for child in psutil.Process().children(recursive=True):
        if child.status() == psutil.STATUS_STOPPED:
            child.kill()
