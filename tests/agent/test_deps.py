"""What a route needs before it runs: the refusals of the rate limit, the budget, a knowledge base that is down
and a missing workspace token, each with its status, reason and when to retry; and the knowledge base bound to
the request's workspace, so that two workspaces asking at once never reach each other's store."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi import HTTPException
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from starlette.requests import Request

from sextant.agent.deps import KB_RETRY_S, bearer_workspace, kb_errors, refusal
from sextant.agent.kb_client import KbContractBroken, KbFailed, KbUnavailable, ToolRefused
from sextant.agent.workspaces import LimitReached, WorkspaceBook
from sextant.contract.meta import REQUEST_ID_META, WORKSPACE_META
from sextant.contract.tools import KB_SEARCH
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.chat import Usage
from sextant.llm.scripted import ScriptedTurn, search_call
from tests.agent.app_client import (
    DOSE,
    READY,
    TOPICS,
    ClientFor,
    add,
    agent_state,
    new_workspace,
    open_workspace_app,
    parse_sse,
    quoted,
    scripted,
    spent_already,
)


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


@pytest.mark.slow
def test_while_the_knowledge_base_is_down_work_is_refused_before_it_starts(client_for: ClientFor) -> None:
    client = client_for()
    agent_state(client).kb.reason = "the knowledge base stopped answering"  # as the supervisor marks a hung process
    document = {"id": "taxes", "title": "Taxes", "content": "File by April 15."}
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/query", {"json": {"question": "espresso?"}}),
        ("/query/stream", {"json": {"question": "espresso?"}}),
        ("/ingest", {"json": {"documents": [document]}}),
        ("/upload", {"files": [("files", ("notes.md", b"# Notes", "text/markdown"))]}),
    ]
    for path, body in requests:
        refused = client.post(path, **body)
        assert refused.status_code == 503, path
        assert refused.json()["detail"] == "the knowledge base is unavailable: the knowledge base stopped answering"
        assert refused.headers["retry-after"] == str(KB_RETRY_S)
    assert client.get("/health").status_code == 200


def test_a_knowledge_base_that_is_down_is_a_503_saying_when_to_retry() -> None:
    with pytest.raises(HTTPException) as refused, kb_errors():
        raise KbUnavailable("the process exited")
    assert refused.value.status_code == 503
    assert refused.value.detail == "the knowledge base is unavailable: the process exited"
    assert refused.value.headers == {"Retry-After": str(KB_RETRY_S)}


def test_a_failure_or_broken_contract_is_a_502_and_a_refusal_is_the_tool_s_words_as_422() -> None:
    with pytest.raises(HTTPException) as broken, kb_errors():
        raise KbContractBroken("kb_list's result does not match sextant.contract")
    assert broken.value.status_code == 502
    with pytest.raises(HTTPException) as failed, kb_errors():
        raise KbFailed("kb_list failed in the knowledge base: the store is gone")
    assert failed.value.status_code == 502 and "the store is gone" in str(failed.value.detail)
    with pytest.raises(HTTPException) as refused, kb_errors():
        raise ToolRefused("kb_ingest", "manual: the document has no text to index")
    assert (refused.value.status_code, refused.value.detail) == (422, "manual: the document has no text to index")


def test_any_other_failure_is_not_dressed_up_as_an_http_error() -> None:
    with pytest.raises(ZeroDivisionError), kb_errors():
        raise ZeroDivisionError


def request_with(authorization: str | None) -> Request:
    headers = [(b"authorization", authorization.encode())] if authorization is not None else []
    return Request({"type": "http", "method": "GET", "path": "/documents", "headers": headers})


def test_the_bearer_token_opens_its_workspace_whatever_the_scheme_s_case() -> None:
    book = WorkspaceBook(None, ttl_s=60, max_active=2)
    workspace, token = book.create()
    assert bearer_workspace(request_with(f"Bearer {token}"), book) is workspace
    assert bearer_workspace(request_with(f"bearer  {token} "), book) is workspace


@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwdw==", "Bearer not-a-token"])
def test_no_live_token_is_a_401_that_says_how_to_get_one(authorization: str | None) -> None:
    book = WorkspaceBook(None, ttl_s=60, max_active=2)
    book.create()
    with pytest.raises(HTTPException) as refused:
        bearer_workspace(request_with(authorization), book)
    assert refused.value.status_code == 401 and refused.value.headers == {"WWW-Authenticate": "Bearer"}
    assert "create a workspace with POST /workspaces" in refused.value.detail


def test_a_limit_reached_is_refused_with_its_setting_and_when_to_retry() -> None:
    exc = LimitReached("SEXTANT_DAILY_UPLOADS", 50, "today's uploads are used up")
    refused = refusal(exc, retry_after=120)
    assert (refused.status_code, refused.headers) == (429, {"Retry-After": "120"})
    assert "SEXTANT_DAILY_UPLOADS" in refused.detail and "50" in refused.detail
    assert refusal(exc, status=409).headers is None


class SearchesMeet:
    """Middleware on the real knowledge-base server, where the agent's calls cross into it: it keeps the tool,
    workspace and request id each ``tools/call`` arrives with, and holds each search until ``questions`` searches
    have arrived, so the questions are in flight at once (asked one after another, they would time out here)."""

    def __init__(self, questions: int) -> None:
        self.received: list[tuple[str, str | None, str | None]] = []
        self.searching = asyncio.Barrier(questions)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call":
            params = ctx.params or {}
            meta = params.get("_meta") or {}
            self.received.append((params["name"], meta.get(WORKSPACE_META), meta.get(REQUEST_ID_META)))
            if params["name"] == KB_SEARCH:
                async with asyncio.timeout(30):
                    await self.searching.wait()
        return await call_next(ctx)


@pytest.mark.slow
def test_two_workspaces_streaming_at_once_each_search_and_cite_only_their_own_store(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    meet = SearchesMeet(questions=2)
    holds = {"alice": "espresso", "bob": "bees"}
    question = f"{TOPICS['espresso']} {TOPICS['bees']}"  # either store would answer it
    with open_workspace_app(kb, tmp_path, server_middleware=[meet]) as client:
        auth = {name: new_workspace(client) for name in holds}
        for name, doc_id in holds.items():
            add(client, auth[name], doc_id)
        book = agent_state(client).workspaces
        assert book is not None
        workspace = {name: book.resolve(auth[name]["Authorization"].removeprefix("Bearer ")) for name in holds}

        def stream(name: str) -> list[tuple[str, dict[str, Any]]]:
            headers = {**auth[name], "X-Request-ID": f"{name}-question"}
            with client.stream("POST", "/query/stream", json={"question": question}, headers=headers) as response:
                assert response.status_code == 200
                return parse_sse("".join(response.iter_text()))

        with ThreadPoolExecutor(len(holds)) as pool:
            frames = dict(zip(holds, pool.map(stream, holds), strict=True))

    for name, doc_id in holds.items():
        events = dict(frames[name])
        assert "error" not in events and events["done"]["request_id"] == f"{name}-question"
        assert {p["document_id"] for p in events["sources"]["passages"]} == {doc_id}
        cited = {e["label"] for s in events["answer"]["statements"] for e in s["evidence"]}
        assert cited and cited <= {p["label"] for p in events["sources"]["passages"]}
    searched = {(ws, rid) for tool, ws, rid in meet.received if tool == KB_SEARCH}
    assert searched == {(workspace[name].id, f"{name}-question") for name in holds}  # type: ignore[union-attr]
