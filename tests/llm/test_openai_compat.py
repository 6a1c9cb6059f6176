"""The OpenAI-compatible adapter: against a real llama-cpp-python server process, and its error mapping."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from jsonschema import validate

from sextant.llm.chat import ChatRequest, ModelError, StatementDone, TextDelta, TurnEnd, UserText
from sextant.llm.openai_compat import OpenAICompatModel
from sextant.llm.settings import ModelSettings
from sextant.llm.statements import MAX_QUOTE_CHARS
from tests.llm.conftest import KB_SEARCH, PASSAGES, SYSTEM

QUESTION = UserText("How often should the espresso machine be descaled?")
ANSWER_PROMPT = UserText(f"Passages:\n{PASSAGES}\n\nQuestion: How often should the espresso machine be descaled?")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server_url(smollm2: Path) -> Iterator[str]:
    """``python -m llama_cpp.server`` serving SmolLM2 on a loopback port, ready when uvicorn says so."""
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "4096"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    said: list[str] = []
    for line in process.stderr:
        said.append(line)
        if "Uvicorn running on" in line:
            break
    else:
        process.wait()
        pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{''.join(said[-20:])}")
    # Keep reading its log so that a full pipe never blocks the server.
    drain = threading.Thread(target=_drain, args=(process.stderr,), daemon=True)
    drain.start()
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait()
    drain.join()


def _drain(stream: IO[str]) -> None:
    with stream:
        for _ in stream:
            pass


@pytest.fixture
async def model(server_url: str) -> AsyncIterator[OpenAICompatModel]:
    settings = ModelSettings(local_url=server_url, local_model="smollm2", _env_file=None)
    client = OpenAICompatModel.from_settings(settings)
    yield client
    await client.aclose()


@pytest.mark.slow
async def test_a_forced_search_over_http_returns_valid_arguments(model: OpenAICompatModel) -> None:
    request = ChatRequest(SYSTEM, (QUESTION,), tools=(KB_SEARCH,), tool_choice="kb_search", max_output_tokens=120)
    [end] = [event async for event in model.stream(request)]
    assert isinstance(end, TurnEnd)
    [call] = end.turn.tool_calls
    validate(call.arguments, KB_SEARCH.input_schema)
    assert end.usage.output_tokens > 0


@pytest.mark.slow
async def test_statements_over_http_cite_shown_passages(model: OpenAICompatModel) -> None:
    # This server refuses OpenAI's json_schema form: the answer only arrives through the json_object retry.
    request = ChatRequest(
        SYSTEM, (ANSWER_PROMPT,), answer_format="statements", citable=(1, 2, 3), max_output_tokens=300
    )
    *streamed, end = [event async for event in model.stream(request)]
    assert isinstance(end, TurnEnd) and end.statements
    assert [e.statement for e in streamed if isinstance(e, StatementDone)] == list(end.statements)
    assert {label for s in end.statements for label in s.sources} <= {1, 2, 3}


@pytest.mark.slow
async def test_prose_over_http_streams_deltas(model: OpenAICompatModel) -> None:
    request = ChatRequest(SYSTEM, (UserText("Say hello in one short sentence."),), max_output_tokens=30)
    *deltas, end = [event async for event in model.stream(request)]
    assert isinstance(end, TurnEnd) and deltas
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == end.turn.text
    assert 0 < end.usage.output_tokens <= 30


@pytest.mark.slow
async def test_complete_json_over_http(model: OpenAICompatModel) -> None:
    schema = {"type": "object", "properties": {"supported": {"type": "boolean"}}, "required": ["supported"]}
    reply, usage = await model.complete_json(
        "You check statements.", f"{PASSAGES}\n\nIs 'every 3 months' in [1]?", schema
    )
    validate(reply, schema)
    assert usage.input_tokens > 0


async def test_auto_asks_for_the_model_the_server_lists(server_url: str, smollm2: Path) -> None:
    model = OpenAICompatModel.from_settings(ModelSettings(local_url=server_url, _env_file=None))
    assert model.name == "auto"
    reply, _ = await model.complete_json("Answer in JSON.", "Is water wet?", {"type": "object"})
    await model.aclose()
    assert isinstance(reply, dict) and model.name == str(smollm2)


def _scripted(*replies: httpx.Response, seen: list[dict[str, Any]]) -> httpx.AsyncClient:
    queue = list(replies)

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content) if request.content else {"GET": request.url.path})
        return queue.pop(0)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


def _reply(content: str) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 5}})


async def test_a_refused_json_schema_is_asked_again_as_json_object_and_remembered() -> None:
    seen: list[dict[str, Any]] = []
    refusal = httpx.Response(500, text="response_format.type: Input should be 'text' or 'json_object'")
    client = _scripted(refusal, _reply('{"ok": true}'), _reply('{"ok": false}'), seen=seen)
    model = OpenAICompatModel("http://models.test/v1", "m", client=client)
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    assert (await model.complete_json("s", "p", schema))[0] == {"ok": True}
    assert (await model.complete_json("s", "p", schema))[0] == {"ok": False}
    assert [body["response_format"]["type"] for body in seen] == ["json_schema", "json_object", "json_object"]
    assert seen[1]["response_format"]["schema"]["properties"]["ok"] == {"type": "boolean"}


async def test_auto_asks_the_server_once_and_a_server_that_lists_none_is_a_clear_error() -> None:
    seen: list[dict[str, Any]] = []
    listing = httpx.Response(200, json={"object": "list", "data": [{"id": "qwen2.5:1.5b"}, {"id": "other"}]})
    model = OpenAICompatModel(
        "http://models.test/v1", "auto", client=_scripted(listing, _reply("{}"), _reply("{}"), seen=seen)
    )
    await model.complete_json("s", "p", {"type": "object"})
    await model.complete_json("s", "p", {"type": "object"})
    assert seen[0] == {"GET": "/v1/models"} and [body["model"] for body in seen[1:]] == ["qwen2.5:1.5b"] * 2

    model = OpenAICompatModel("http://models.test/v1", "auto", client=_scripted(httpx.Response(404), seen=[]))
    with pytest.raises(ModelError, match="answered 404 without a model to choose: set SEXTANT_LOCAL_MODEL"):
        await model.complete_json("s", "p", {"type": "object"})


async def test_a_server_s_quotes_keep_the_long_limit() -> None:
    # The short cap is llama_local's, measured in process; a server may not enforce maxLength at all.
    seen: list[dict[str, Any]] = []
    chunk = {"choices": [{"index": 0, "delta": {"content": '{"statements": []}'}, "finish_reason": "stop"}]}
    stream = httpx.Response(200, text=f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n")
    model = OpenAICompatModel("http://models.test/v1", "m", client=_scripted(stream, seen=seen))
    request = ChatRequest(SYSTEM, (ANSWER_PROMPT,), answer_format="statements", citable=(1,))
    [end] = [event async for event in model.stream(request)]
    assert isinstance(end, TurnEnd) and end.statements == ()
    item = seen[0]["response_format"]["json_schema"]["schema"]["properties"]["statements"]["items"]["properties"]
    assert item["evidence"]["items"]["properties"]["quote"]["maxLength"] == MAX_QUOTE_CHARS


@pytest.mark.parametrize(("status", "retryable"), [(503, True), (429, True), (400, False), (500, False)])
async def test_refusals_become_model_errors(status: int, retryable: bool) -> None:
    seen: list[dict[str, Any]] = []
    model = OpenAICompatModel(
        "http://models.test/v1", "m", client=_scripted(httpx.Response(status, text="no"), seen=seen)
    )
    with pytest.raises(ModelError, match=f"answered {status}: no") as error:
        [event async for event in model.stream(ChatRequest("s", (QUESTION,)))]
    assert (error.value.status, error.value.retryable, len(seen)) == (status, retryable, 1)


async def test_an_unreachable_server_is_a_retryable_model_error() -> None:
    model = OpenAICompatModel(f"http://127.0.0.1:{_free_port()}/v1", "m")
    with pytest.raises(ModelError, match="cannot reach the model") as error:
        await model.complete_json("s", "p", {"type": "object"})
    assert error.value.retryable
    await model.aclose()


def test_no_url_is_refused() -> None:
    with pytest.raises(ModelError, match="SEXTANT_LOCAL_URL"):
        OpenAICompatModel.from_settings(ModelSettings(_env_file=None))
