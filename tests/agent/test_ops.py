"""The operators' surface of the agent: the proxy gate (SEXTANT_PROXY_SECRET) and /metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.settings import AgentSettings
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import Usage
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedTurn, search_call
from tests.agent.app_client import DOSE, ESPRESSO, READY, agent_settings, quoted, scripted

pytestmark = pytest.mark.slow

VERIFIED = {"results": [{"statement": 0, "supported": True}], "addresses_question": True}
SECRET = "s3cret-from-the-proxy-0123456789"


def _client(kb: KnowledgeBase, tmp_path: Path, model: ModelChoice | None = None, **overrides: object) -> TestClient:
    app = create_app(
        agent_settings(**{"daily_budget_usd": 1.0, **overrides}),
        kb_server=create_server(kb),
        model=model or ModelChoice(None, "none", "no model in this test"),
        budget=DailyBudget(1.0, tmp_path / "spend.json"),
    )
    return TestClient(app)


def test_with_a_proxy_secret_only_requests_carrying_it_get_in_but_health_is_open(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    with _client(kb, tmp_path, proxy_secret=SECRET) as client:
        document = {"documents": [{"id": "espresso", "title": "Espresso", "content": ESPRESSO}]}
        refused = client.post("/ingest", json=document)
        assert refused.status_code == 403 and "proxy" in refused.json()["detail"]
        assert refused.headers["x-request-id"]
        wrong = client.post("/ingest", json=document, headers={"X-Sextant-Proxy-Secret": SECRET[:-1] + "x"})
        assert wrong.status_code == 403
        assert client.get("/metrics").status_code == 403
        assert client.get("/health").status_code == 200
        passed = client.post("/ingest", json=document, headers={"X-Sextant-Proxy-Secret": SECRET})
        assert passed.status_code == 200 and passed.json()["results"][0]["status"] == "added"
    assert kb.documents()[0].id == "espresso"


def test_a_blank_proxy_secret_means_none_and_a_short_one_is_refused() -> None:
    assert agent_settings(proxy_secret="").proxy_secret is None
    with pytest.raises(ValidationError, match="at least 16 characters"):
        agent_settings(proxy_secret="short")
    assert AgentSettings(_env_file=None).proxy_secret is None  # type: ignore[call-arg]


def test_metrics_count_requests_by_route_and_time_each_stage_and_report_spend(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    model = scripted(
        ScriptedTurn(tool_calls=(search_call("double shot coffee grams"),), usage=Usage(100, 5, cost_usd=0.001)),
        READY,
        ScriptedTurn(statements=(quoted("A double uses 18 grams.", (1, DOSE)),), usage=Usage(200, 9, cost_usd=0.002)),
        json_replies=[VERIFIED],
        priced=True,
    )
    # The verification pass is off by default; on here so its model_json stage is timed too.
    with _client(kb, tmp_path, model, verify="mark") as client:
        client.post("/ingest", json={"documents": [{"id": "espresso", "title": "Espresso", "content": ESPRESSO}]})
        assert client.post("/query", json={"question": "How much coffee in a double shot?"}).status_code == 200
        assert client.get("/documents/espresso/pages/9").status_code == 404
        response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }
    assert samples[("sextant_http_requests_total", (("method", "POST"), ("route", "/query"), ("status", "200")))] == 1
    # The route template, not the path: one series for every document's pages.
    page_route = (("method", "GET"), ("route", "/documents/{doc_id}/pages/{number}"), ("status", "404"))
    assert samples[("sextant_http_requests_total", page_route)] == 1
    assert samples[("sextant_stage_seconds_count", (("stage", "tool:kb_search"),))] == 1
    assert samples[("sextant_stage_seconds_count", (("stage", "model_turn"),))] == 3  # search, ready, statements
    assert samples[("sextant_stage_seconds_count", (("stage", "kb:lexical"),))] == 1
    assert samples[("sextant_stage_seconds_count", (("stage", "model_json"),))] == 1
    assert samples[("sextant_spend_today_usd", ())] == pytest.approx(0.003)
    assert samples[("sextant_daily_budget_usd", ())] == 1.0
