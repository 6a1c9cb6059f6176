"""Questions over HTTP: ``/query`` answers at once, ``/query/stream`` streams the loop's events as SSE."""

from __future__ import annotations

from typing import Any

import pytest

from sextant.llm.chat import Usage
from sextant.llm.scripted import ScriptedTurn, search_call
from tests.agent.app_client import DOSE, READY, ClientFor, parse_sse, quoted, scripted

pytestmark = pytest.mark.slow


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
    # The quote travels as the whole sentence it stands in, at that sentence's span.
    sentence = "A double shot uses 18 grams of finely ground coffee and takes 25 to 30 seconds."
    assert (evidence["label"], evidence["quote"]) == (1, sentence)
    assert body["sources"][0]["text"][evidence["start"] : evidence["end"]] == sentence
    # Each statement carries the checks' verdicts, in order; the answer says it did not abstain.
    assert [(v["rule"], v["reason"]) for v in statement["trail"]][:2] == [("quote", "found"), ("supported", "evidence")]
    assert body["abstained"] is False
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
    [kept] = [d["statement"] for n, d in frames if n == "statement"]
    assert [(v["rule"], v["passed"], v["reason"], v["label"]) for v in kept["trail"]][:3] == [
        ("quote", True, "found", 1),
        ("quote", False, "label_not_shown", 4),
        ("supported", True, "evidence", None),
    ]
    answer = dict(frames)["answer"]
    [removed] = answer["verification"]["removed"]
    assert (removed["text"], removed["trail"][-1]["reason"]) == ("Tamp hard.", "no_evidence")
    assert answer["citations"]["dangling"] == [] and answer["citations"]["unsourced"] == ["Tamp hard."]
    assert answer["text"] == "Use 18 grams [1]."
    assert "".join(d["text"] for n, d in frames if n == "token") == "Use 18 grams [1]."


def test_without_a_model_answers_are_excerpts_and_health_says_so(client_for: Any) -> None:
    client = client_for()
    health = client.get("/health").json()
    assert health["model"]["configured"] is False and health["answers"] == "excerpts"
    assert health["kb_connected"] is True
    body = client.post("/query", json={"question": "How much coffee in a double shot?"}).json()
    assert body["mode"] == "excerpts" and body["answer"].startswith("**Excerpts")
    assert "[1]" in body["answer"] and body["sources"]


def test_passages_the_client_holds_keep_their_labels_and_new_ones_are_numbered_after_them(
    client_for: ClientFor,
) -> None:
    held = [{"label": 1, "title": "Earlier", "text": "A passage from an earlier turn."}]
    body = client_for().post("/query", json={"question": "How much coffee in a double shot?", "passages": held}).json()
    assert body["sources"][0] == {**body["sources"][0], **held[0]}
    assert body["sources"][1]["label"] == 2 and body["sources"][1]["document_id"] == "espresso"
    assert "[2]" in body["answer"] and "[1]" not in body["answer"]
