"""The whole product path: HTTP → the agent loop → the real local model (llama.cpp) and the real
``sextant-kb`` subprocess over stdio, on a temporary store. No test double anywhere.

SmolLM2-135M is used because it is fast enough for CI; its answers are weak, so the assertions are
about the path (a forced search, numbered passages, valid citations only), not about prose quality.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.settings import AgentSettings
from tests.agent.conftest import TEST_MODEL
from tests.kb.kb_process import server_command

pytestmark = pytest.mark.slow

ESPRESSO = (
    "# Espresso machine care\n\n## Descaling\n\nDescale the espresso machine every eight weeks with a citric acid "
    "solution of 20 grams per litre. Flush with two full reservoirs of fresh water afterwards."
)


def test_a_question_is_answered_by_the_local_model_with_citations_from_the_real_knowledge_base(
    tmp_path: Path, smollm2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))  # read by the sextant-kb subprocess
    settings = AgentSettings(  # type: ignore[call-arg]
        _env_file=None,
        provider="local",
        local_model=TEST_MODEL,
        models_dir=smollm2.parent,
        verify="off",
        answer_check=TEST_MODEL,  # the real check, on the small model: the path, not its verdicts
    )
    app = create_app(settings, budget=DailyBudget(1.0, tmp_path / "spend.json"))
    with TestClient(app) as client:
        health = client.get("/health").json()
        assert health["model"]["configured"] is True and health["model"]["provider"] == "local"
        ingested = client.post(
            "/ingest", json={"documents": [{"id": "espresso", "title": "Espresso care", "content": ESPRESSO}]}
        )
        assert ingested.json()["results"][0]["status"] == "added"

        body = client.post("/query", json={"question": "How often should the espresso machine be descaled?"}).json()

    assert body["mode"] == "model", body["reason"]
    assert body["model"] and body["answer"].strip()
    search = body["trace"][0]
    assert search["name"] == "kb_search" and search["forced"] is True
    assert body["trace"][1]["found"] >= 1
    labels = {source["label"] for source in body["sources"]}
    assert body["sources"][0]["document_id"] == "espresso"
    # Whatever the model cited, only labels of passages it was shown survive, and they are counted.
    assert body["citations"]["labels_valid"] == body["citations"]["labels_total"] - len(body["citations"]["dangling"])
    assert all(f"[{n}]" not in body["answer"] for n in body["citations"]["dangling"])
    cited = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", body["answer"])}
    assert cited <= labels
    # Each [n] stands for a quote found in passage n, at its span; with none found the answer abstains.
    texts = {source["label"]: source["text"] for source in body["sources"]}
    evidence = [e for statement in body["statements"] for e in statement["evidence"]]
    assert {e["label"] for e in evidence} == cited
    assert all(texts[e["label"]][e["start"] : e["end"]] == e["quote"] for e in evidence)
    if not cited:
        assert body["answer"] == "The documents do not answer this question."
    assert body["usage"]["output_tokens"] > 0 and body["usage"]["cost_usd"] == 0


def test_a_requests_trace_context_reaches_the_knowledge_base_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("SEXTANT_LOG_FORMAT", "json")
    # The real sextant-kb, its stderr kept in a file to read its own log lines back.
    server_log = tmp_path / "kb.log"
    wrapper = tmp_path / "sextant-kb-logged"
    wrapper.write_text(f'#!/bin/sh\nexec {server_command()} "$@" 2>>{server_log}\n', encoding="utf-8")
    wrapper.chmod(0o755)
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    settings = AgentSettings(_env_file=None, provider="none", overviews="off", kb_command=str(wrapper))  # type: ignore[call-arg]
    app = create_app(settings, budget=DailyBudget(1.0, tmp_path / "spend.json"), state_dir=tmp_path / "agent")
    with TestClient(app) as client:
        client.post("/ingest", json={"documents": [{"id": "espresso", "title": "Espresso care", "content": ESPRESSO}]})
        headers = {"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01", "X-Request-ID": "traced-1"}
        assert client.post("/query", json={"question": "How often?"}, headers=headers).status_code == 200
        assert client.post("/query", json={"question": "How often?"}, headers={"X-Request-ID": "untraced"}).json()

    lines = [json.loads(line) for line in server_log.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    searched = {line.get("request_id"): line.get("trace_id") for line in lines if "kb_search" in line["message"]}
    # The server's own log line for the search names the trace the browser started ...
    assert searched["traced-1"] == trace_id
    # ... and a request that sent none gets a trace of its own, carried the same way.
    assert searched["untraced"] and searched["untraced"] != trace_id
