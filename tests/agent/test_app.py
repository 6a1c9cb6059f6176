"""The HTTP API through FastAPI's test client, over the real knowledge-base MCP server (in memory)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sextant.agent.app import create_app
from sextant.agent.budget import DailyBudget
from sextant.agent.settings import AgentSettings
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import Quote, Statement, Usage
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, search_call

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ESPRESSO = "# Espresso\n\nA double shot uses 18 grams of finely ground coffee and takes 25 to 30 seconds."
READY = ScriptedTurn(text="READY")
DOSE = "18 grams of finely ground coffee"


def quoted(text: str, *quotes: tuple[int, str]) -> Statement:
    return Statement(text, tuple(Quote(label, words) for label, words in quotes))


def agent_settings(**overrides: Any) -> AgentSettings:
    # Overviews off unless a test asks: the fixture's ingest would otherwise take a scripted JSON reply.
    return AgentSettings(_env_file=None, **{"overviews": "off", **overrides})  # type: ignore[call-arg]


def scripted(
    *turns: ScriptedTurn, json_replies: list[dict[str, Any]] | None = None, priced: bool = False
) -> ModelChoice:
    return ModelChoice(ScriptedModel(turns, json_replies=json_replies or [], priced=priced), "scripted", "test double")


@pytest.fixture
def client_for(kb: KnowledgeBase, tmp_path: Path) -> Iterator[Any]:
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

    yield open_client
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


def test_query_returns_a_cited_answer_with_its_sources_usage_and_trace(client_for: Any) -> None:
    model = scripted(
        ScriptedTurn(tool_calls=(search_call("double shot coffee grams"),), usage=Usage(100, 5, cost_usd=0.001)),
        READY,
        ScriptedTurn(statements=(quoted("A double uses 18 grams.", (1, DOSE)),), usage=Usage(200, 9, cost_usd=0.002)),
        priced=True,
    )
    client = client_for(model)
    response = client.post("/query", json={"question": "How much coffee in a double shot?"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "model" and body["answer"] == "A double uses 18 grams [1]."
    assert body["sources"][0]["label"] == 1 and "18 grams" in body["sources"][0]["text"]
    [statement] = body["statements"]
    [evidence] = statement["evidence"]
    assert (evidence["label"], evidence["quote"]) == (1, DOSE)
    assert body["sources"][0]["text"][evidence["start"] : evidence["end"]] == DOSE
    assert body["usage"]["cost_usd"] == pytest.approx(0.003)
    assert [t["event"] for t in body["trace"]] == ["tool_call", "tool_result"]
    assert body["request_id"] == response.headers["x-request-id"]
    assert client.get("/health").json()["spent_today_usd"] == pytest.approx(0.003)


def test_the_stream_is_server_sent_events_on_the_wire(client_for: Any) -> None:
    model = scripted(
        ScriptedTurn(tool_calls=(search_call("espresso grams"),)),
        READY,
        ScriptedTurn(
            statements=(
                quoted("Use 18 grams.", (1, DOSE), (4, "a passage never shown")),
                quoted("Tamp hard.", (1, "tamp with thirty pounds")),
            )
        ),
    )
    client = client_for(model)
    with client.stream("POST", "/query/stream", json={"question": "espresso dose?"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        wire = "".join(response.iter_text())
    frames = parse_sse(wire)
    names = [name for name, _ in frames]
    assert names[:3] == ["tool_call", "tool_result", "sources"]
    assert names[-2:] == ["answer", "done"]
    # A label is kept only where its quote was found: unshown [4] and the unfound quote never reach the wire.
    assert [d for n, d in frames if n == "citation"] == [{"event": "citation", "label": 1, "valid": True}]
    assert [d["statement"]["text"] for n, d in frames if n == "statement"] == ["Use 18 grams."]
    answer = dict(frames)["answer"]
    assert answer["citations"]["dangling"] == [] and answer["citations"]["unsourced"] == ["Tamp hard."]
    assert answer["text"] == "Use 18 grams [1]."
    assert "".join(d["text"] for n, d in frames if n == "token") == "Use 18 grams [1]."


def test_request_ids_are_honoured_or_minted(client_for: Any) -> None:
    client = client_for()
    assert client.get("/health", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"] == "abc-123"
    minted = client.get("/health", headers={"X-Request-ID": "bad id with spaces"}).headers["x-request-id"]
    assert minted != "bad id with spaces" and len(minted) == 32


def test_without_a_model_answers_are_excerpts_and_health_says_so(client_for: Any) -> None:
    client = client_for()
    health = client.get("/health").json()
    assert health["model"]["configured"] is False and health["answers"] == "excerpts"
    assert health["kb_connected"] is True
    body = client.post("/query", json={"question": "How much coffee in a double shot?"}).json()
    assert body["mode"] == "excerpts" and body["answer"].startswith("**Excerpts")
    assert "[1]" in body["answer"] and body["sources"]


def test_the_rate_limit_answers_429_but_never_on_health(client_for: Any) -> None:
    client = client_for(rate_limit=2, rate_window=60)  # the fixture's ingest used one
    assert client.post("/query", json={"question": "espresso?"}).status_code == 200
    limited = client.post("/query", json={"question": "espresso?"})
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert all(client.get("/health").status_code == 200 for _ in range(5))


def test_a_spent_budget_answers_429_until_midnight_utc(client_for: Any) -> None:
    model = scripted(
        ScriptedTurn(tool_calls=(search_call("espresso"),), usage=Usage(cost_usd=0.02)),
        READY,
        ScriptedTurn(statements=(quoted("18 grams.", (1, DOSE)),), usage=Usage(cost_usd=0.02)),
        priced=True,
    )
    client = client_for(model, daily_budget_usd=0.03)
    assert "$0.03 per UTC day on scripted" in client.get("/health").json()["budget"]
    assert client.post("/query", json={"question": "espresso?"}).json()["mode"] == "model"
    refused = client.post("/query", json={"question": "espresso?"})
    assert refused.status_code == 429 and "budget" in refused.json()["detail"]
    assert int(refused.headers["retry-after"]) <= 86400


def spent_already(tmp_path: Path, usd: float) -> None:
    today = datetime.now(UTC).date().isoformat()
    (tmp_path / "spend.json").write_text(json.dumps({"day": today, "spent_usd": usd}), encoding="utf-8")


@pytest.mark.parametrize(("budget", "priced"), [(0.0, True), (0.01, False)])
def test_no_cap_or_a_free_model_is_never_refused_by_the_budget(
    client_for: Any, tmp_path: Path, budget: float, priced: bool
) -> None:
    spent_already(tmp_path, 5.0)
    model = scripted(
        ScriptedTurn(tool_calls=(search_call("espresso"),)),
        READY,
        ScriptedTurn(statements=(quoted("18 grams.", (1, DOSE)),)),
        priced=priced,
    )
    client = client_for(model, daily_budget_usd=budget)
    answered = client.post("/query", json={"question": "espresso?"})
    assert answered.status_code == 200 and answered.json()["mode"] == "model"
    meaning = client.get("/health").json()["budget"]
    assert meaning.startswith("no cap") if budget == 0 else "not applied: the model in use costs nothing" in meaning


def test_bodies_are_bounded(client_for: Any) -> None:
    client = client_for()
    assert client.post("/query", json={"question": "x" * 2001}).status_code == 422
    assert client.post("/query", json={"question": ""}).status_code == 422
    huge = b'{"question": "' + b"x" * (26 * 1024 * 1024) + b'"}'
    response = client.post("/query", content=huge, headers={"content-type": "application/json"})
    assert response.status_code == 413

    def chunked() -> Iterator[bytes]:  # no Content-Length: the cap must count the bytes as they arrive
        yield b'{"question": "'
        for _ in range(26):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    response = client.post("/query", content=chunked(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_upload_parses_files_on_the_server_keeping_pages(client_for: Any) -> None:
    client = client_for()
    pdf = REPO / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
    files = [
        ("files", ("lighthouse-history.pdf", pdf.read_bytes(), "application/pdf")),
        ("files", ("notes.exe", b"MZ", "application/octet-stream")),
        ("files", ("empty.md", b"", "text/markdown")),
    ]
    body = client.post("/upload", files=files).json()
    by_name = {r["name"]: r for r in body["results"]}
    assert by_name["lighthouse-history.pdf"]["status"] == "added"
    assert by_name["notes.exe"]["status"] == "refused" and "unsupported" in by_name["notes.exe"]["reason"]
    assert by_name["empty.md"]["status"] == "refused"
    docs = {d["id"]: d for d in client.get("/documents").json()["documents"]}
    assert docs["lighthouse-history"]["pages"] > 1
    page = client.get("/documents/lighthouse-history/pages/2").json()
    assert page["page"] == 2 and page["text"]
    assert client.get("/documents/lighthouse-history/pages/999").status_code == 404


def test_a_pdf_page_is_an_image_with_the_quote_highlighted_and_no_image_is_a_404(
    client_for: Any, kb: KnowledgeBase
) -> None:
    client = client_for()  # the fixture ingests the espresso guide as text
    pdf = REPO / "eval" / "corpus" / "documents" / "lighthouse-history.pdf"
    client.post("/upload", files=[("files", ("lighthouse-history.pdf", pdf.read_bytes(), "application/pdf"))])
    quote = "The final account, signed off in 1850, records a total cost of 11,460 pounds"  # "ﬁ", "ﬀ" in the PDF
    response = client.get("/documents/lighthouse-history/pages/2/image", params={"quote": quote})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png" and response.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert int(response.headers["x-sextant-highlights"]) >= 2  # the quote runs over two lines
    plain = client.get("/documents/lighthouse-history/pages/2/image")
    assert plain.status_code == 200 and plain.headers["x-sextant-highlights"] == "0"

    for path, why in [
        ("/documents/espresso/pages/1/image", "only PDFs have them"),
        ("/documents/lighthouse-history/pages/999/image", "has no page 999"),
        ("/documents/nothing-here/pages/1/image", "no document with id 'nothing-here'"),
    ]:
        missing = client.get(path)
        assert missing.status_code == 404 and missing.json()["detail"].startswith("no page image: "), missing.text
        assert why in missing.json()["detail"]
    assert client.get("/documents/lighthouse-history/pages/2/image", params={"quote": "x" * 2001}).status_code == 422

    # A kept file that cannot be rendered is the knowledge base's failure, not a missing page.
    kept = kb.originals.get("lighthouse-history")
    assert kept is not None
    kept.write_bytes(b"%PDF-1.7 damaged beyond repair")
    failed = client.get("/documents/lighthouse-history/pages/2/image")
    assert failed.status_code == 503 and "could not be rendered" in failed.json()["detail"]


def test_an_upload_whose_every_file_is_refused_is_a_4xx_carrying_the_reasons(client_for: Any) -> None:
    client = client_for()
    files = [("files", ("notes.exe", b"MZ", "application/octet-stream")), ("files", ("empty.md", b"", "text/markdown"))]
    response = client.post("/upload", files=files)
    assert response.status_code == 422
    assert "notes.exe: unsupported file type" in response.json()["detail"]
    assert "empty.md: the file is empty" in response.json()["detail"]


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


def test_tools_are_discovered_and_only_read_tools_are_offered(client_for: Any) -> None:
    tools = {t["name"]: t for t in client_for().get("/tools").json()}
    kept_from_model = ("kb_ingest", "kb_upload", "kb_set_overview", "kb_page_image")
    assert not any(tools[name]["offered_to_model"] for name in kept_from_model)
    assert tools["kb_page_image"]["read_only"]  # read-only, yet for a person's eyes: not in OFFERED_TO_MODEL
    assert {n for n, t in tools.items() if t["offered_to_model"]} == {"kb_search", "kb_list", "kb_stats"}


def test_cors_allows_only_configured_origins(client_for: Any) -> None:
    client = client_for(allowed_origins="http://localhost:3000")
    preflight = {"Access-Control-Request-Method": "POST"}
    ok = client.options("/query", headers={"Origin": "http://localhost:3000", **preflight})
    assert ok.headers.get("access-control-allow-origin") == "http://localhost:3000"
    bad = client.options("/query", headers={"Origin": "http://evil.example", **preflight})
    assert "access-control-allow-origin" not in bad.headers


def test_openapi_documents_every_route(client_for: Any) -> None:
    paths = client_for().get("/openapi.json").json()["paths"]
    assert {"/query", "/query/stream", "/ingest", "/upload", "/documents", "/tools", "/health"} <= set(paths)


def test_the_index_lab_shows_benchmark_curves_and_compares_indexes_live(client_for: Any, tmp_path: Path) -> None:
    results = tmp_path / "lab.json"
    curve = {"index": "hnsw", "knob": "ef_search", "build_s": 1.5, "memory_bytes": 1000}
    results.write_text(
        json.dumps(
            {
                "created": "2026-11-30T04:00:00",
                "datasets": [
                    {
                        "dataset": "toy",
                        "n": 100,
                        "d": 8,
                        "curves": [
                            {**curve, "system": "sextant", "points": [{"knob": 16, "recall": 0.9, "qps": 900.0}]},
                            {**curve, "system": "hnswlib", "points": [{"knob": 16, "recall": 0.91, "qps": 1000.0}]},
                        ],
                    }
                ],
            }
        )
    )
    client = client_for(lab_results=results)
    client.post("/ingest", json={"documents": [{"id": "taxes", "title": "Taxes", "content": "File by April 15."}]})
    overview = client.get("/lab").json()
    assert overview["available"] is True
    assert [i["index"] for i in overview["datasets"][0]["indexes"]] == ["hnsw", "hnsw · hnswlib"]
    assert overview["datasets"][0]["indexes"][0]["points"] == [{"param": 16, "recall_at_10": 0.9, "qps": 900.0}]

    response = client.post("/lab/compare", json={"query": "double shot coffee", "k": 2})
    assert response.status_code == 200, response.text
    compared = response.json()
    by_index = {answer["index"]: answer for answer in compared["indexes"]}
    assert {"flat", "hnsw", "ivfpq", "ivfpq_rerank"} <= set(by_index)
    assert by_index["flat"]["hits"][0]["document_id"] == "espresso"
    assert by_index["flat"]["overlap_with_exact"] == 1.0


def test_the_index_lab_says_why_when_there_are_no_results(client_for: Any, tmp_path: Path) -> None:
    overview = client_for(lab_results=tmp_path / "missing.json").get("/lab").json()
    assert overview["available"] is False and "sextant-lab bench" in overview["reason"]
    (tmp_path / "broken.json").write_text("{not json")
    broken = client_for(lab_results=tmp_path / "broken.json").get("/lab").json()
    assert broken["available"] is False and "cannot be read" in broken["reason"]
