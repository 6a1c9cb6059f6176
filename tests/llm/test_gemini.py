"""Contract tests of the Gemini adapter: the real google-genai client against a local Gemini protocol server."""

from __future__ import annotations

import base64
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sextant.llm.chat import (
    ChatEvent,
    ChatModel,
    ChatRequest,
    ModelError,
    ModelTurn,
    Quote,
    Statement,
    StatementDone,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    TurnEnd,
    UserText,
    WebSource,
)
from sextant.llm.gemini import GeminiModel
from sextant.llm.pricing import UNKNOWN_MODEL_PRICE
from sextant.llm.settings import ModelSettings
from sextant.llm.statements import statements_schema
from tests.llm.gemini_protocol_server import (
    GeminiProtocolServer,
    function_call_part,
    grounding,
    response,
    search_call_parts,
    text_part,
    usage,
)

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to look for."},
        "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        "document_ids": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "detail": {"enum": ["ids", "snippets", "full"]},
    },
    "required": ["query"],
    "additionalProperties": False,
    "$defs": {"unused": {"type": "string"}},
}
TOOLS = (
    ToolSpec("kb_search", "Search the documents.", SEARCH_SCHEMA),
    ToolSpec("kb_list", "List the documents.", {"type": "object", "properties": {}}),
)
# Bytes whose standard base64 has '+' and '/', to see what the SDK does with the alphabet.
SIGNATURE_THOUGHT = b"\xfb\xff\xbe-thought"
SIGNATURE_CALL = b"\xfb\xef\xff-call"


@pytest.fixture
async def model(gemini_server: GeminiProtocolServer) -> AsyncIterator[GeminiModel]:
    gemini = GeminiModel(api_key=gemini_server.api_key, base_url=gemini_server.base_url, thinking_budget=256)
    yield gemini
    await gemini.aclose()


def ask(question: str = "How often should the machine be descaled?", **options: Any) -> ChatRequest:
    return ChatRequest(system="Answer from the passages.", messages=(UserText(question),), **options)


async def run(model: GeminiModel, request: ChatRequest) -> list[ChatEvent]:
    return [event async for event in model.stream(request)]


def ending(events: list[ChatEvent]) -> TurnEnd:
    assert isinstance(events[-1], TurnEnd)
    assert not any(isinstance(e, TurnEnd) for e in events[:-1])
    return events[-1]


def wire(obj: dict[str, Any], camel: str) -> Any:
    """A field of a request body under either JSON spelling.

    google-genai dumps nested config objects (function declarations, thinking config, server-side tool
    parts) with their Python field names, e.g. ``parameters_json_schema``; the API's proto-JSON parser
    accepts both the camelCase and the original field name.
    """
    snake = re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()
    assert (camel in obj) != (snake in obj), f"expected exactly one of {camel} / {snake} in {sorted(obj)}"
    return obj[camel] if camel in obj else obj[snake]


def signature_bytes(encoded: str) -> bytes:
    # Proto-JSON bytes are base64 in either alphabet.
    return base64.urlsafe_b64decode(encoded.replace("+", "-").replace("/", "_"))


def normalized(part: dict[str, Any]) -> dict[str, Any]:
    """A wire part with its signature decoded and nested keys in one spelling, for comparing turns."""
    out = {k: v for k, v in part.items() if k != "thoughtSignature"}
    if "thoughtSignature" in part:
        out["thoughtSignature"] = signature_bytes(part["thoughtSignature"])
    for key in ("toolCall", "toolResponse"):
        if key in out:
            out[key] = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), k): v for k, v in out[key].items()}
    return out


def test_the_adapter_speaks_the_chat_model_protocol(model: GeminiModel) -> None:
    assert isinstance(model, ChatModel)
    assert model.calls_tools_itself is True


async def test_text_streams_as_chunks_arrive_and_thoughts_stay_private(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(
        response(text_part("Weighing the passages.", thought=True), text_part("Descale it ")),
        response(text_part("every month [1].")),
        response(finish_reason="STOP", usage_metadata=usage(120, 9, thoughts=40)),
        gate_after=1,
    )
    stream = model.stream(ask())
    first = await anext(stream)
    # The rest of the reply is still held by the server: this delta came from the first chunk alone.
    assert first == TextDelta("Descale it ")
    assert gemini_server.frames_sent == 1
    gemini_server.release()
    events = [first] + [event async for event in stream]

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Descale it ", "every month [1]."]
    end = ending(events)
    assert end.turn.text == "Descale it every month [1]."
    assert end.turn.tool_calls == ()
    assert end.finish_reason == "stop"
    sent = gemini_server.requests[0]
    assert (sent.model, sent.method, sent.query) == ("gemini-3.1-flash-lite", "streamGenerateContent", "alt=sse")
    assert sent.headers["x-goog-api-key"] == "test-key"
    assert sent.body["systemInstruction"]["parts"] == [{"text": "Answer from the passages."}]
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": "How often should the machine be descaled?"}]}]


async def test_a_function_call_round_trip_echoes_the_turn_verbatim(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    thought = text_part("I should search", thought=True)
    thought_end = text_part(" the manual.", thought=True, signature=SIGNATURE_THOUGHT)
    call = function_call_part(
        "kb_search", {"query": "descaling interval", "k": 3}, call_id="call-7", signature=SIGNATURE_CALL
    )
    gemini_server.enqueue(
        response(thought),
        response(thought_end),
        response(call, finish_reason="STOP", usage_metadata=usage(300, 12, thoughts=25)),
    )
    first = ending(await run(model, ask(tools=TOOLS)))
    assert first.turn.tool_calls == (ToolCall("call-7", "kb_search", {"query": "descaling interval", "k": 3}),)
    assert first.turn.text == ""

    gemini_server.enqueue(response(text_part("Monthly [1]."), finish_reason="STOP"))
    results = ToolResults((ToolResult("call-7", "kb_search", "[1] Descale monthly."),))
    await run(model, ChatRequest(system="s", messages=(UserText("q"), first.turn, results), tools=TOOLS))

    contents = gemini_server.last_body()["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    # The model's own Content, streamed thought pieces merged as an unstreamed reply has them, and both
    # signatures on the parts they came with.
    assert [normalized(p) for p in contents[1]["parts"]] == [
        {"text": "I should search the manual.", "thought": True, "thoughtSignature": SIGNATURE_THOUGHT},
        normalized(call),
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"id": "call-7", "name": "kb_search", "response": {"output": "[1] Descale monthly."}}}
    ]


async def test_a_call_without_an_id_is_answered_without_one(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(function_call_part("kb_list", {}), finish_reason="STOP"))
    first = ending(await run(model, ask(tools=TOOLS)))
    (call,) = first.turn.tool_calls
    assert call.name == "kb_list" and call.id  # the loop still gets an id to pair the result with

    gemini_server.enqueue(response(text_part("Two documents."), finish_reason="STOP"))
    failed = ToolResults((ToolResult(call.id, "kb_list", "the knowledge base is down", is_error=True),))
    await run(model, ChatRequest(system="s", messages=(UserText("q"), first.turn, failed), tools=TOOLS))
    model_part, result_part = (c["parts"][0] for c in gemini_server.last_body()["contents"][1:])
    assert model_part == {"functionCall": {"name": "kb_list", "args": {}}}
    assert result_part == {"functionResponse": {"name": "kb_list", "response": {"error": "the knowledge base is down"}}}


async def test_calls_the_loop_adds_and_turns_from_elsewhere_become_function_calls(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(text_part("I know this."), finish_reason="STOP"))
    said = ending(await run(model, ask(tools=TOOLS))).turn
    forced = ModelTurn(said.text, (ToolCall("forced-1", "kb_search", {"query": "descaling"}),), said.provider_state)
    foreign = ModelTurn("From another model.", (ToolCall("x-2", "kb_list", {}),))
    results = ToolResults((ToolResult("forced-1", "kb_search", "[1] ..."),))
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ChatRequest(system="s", messages=(UserText("q"), forced, results, foreign), tools=TOOLS))

    contents = gemini_server.last_body()["contents"]
    assert contents[1]["parts"] == [
        {"text": "I know this."},
        {"functionCall": {"id": "forced-1", "name": "kb_search", "args": {"query": "descaling"}}},
    ]
    assert contents[3]["parts"] == [
        {"text": "From another model."},
        {"functionCall": {"id": "x-2", "name": "kb_list", "args": {}}},
    ]


async def test_tools_are_declared_with_the_mcp_schema_unchanged(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ask(tools=TOOLS))
    (tool,) = gemini_server.last_body()["tools"]
    declarations = tool["functionDeclarations"]
    assert [(d["name"], d["description"]) for d in declarations] == [(t.name, t.description) for t in TOOLS]
    assert [wire(d, "parametersJsonSchema") for d in declarations] == [SEARCH_SCHEMA, TOOLS[1].input_schema]
    assert all("parameters" not in d for d in declarations)  # not translated to the OpenAPI subset


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("kb_search", {"mode": "ANY", "allowedFunctionNames": ["kb_search"]}),
    ],
)
async def test_tool_choice_maps_to_the_function_calling_mode(
    gemini_server: GeminiProtocolServer, model: GeminiModel, tool_choice: str, expected: dict[str, Any]
) -> None:
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ask(tools=TOOLS, tool_choice=tool_choice))
    assert gemini_server.last_body()["toolConfig"] == {"functionCallingConfig": expected}


async def test_a_tool_choice_naming_no_offered_tool_is_refused(model: GeminiModel) -> None:
    with pytest.raises(ValueError, match="kb_ingest"):
        await run(model, ask(tools=TOOLS, tool_choice="kb_ingest"))


async def test_web_search_is_a_second_tool_with_server_side_invocations(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ask(tools=TOOLS))
    without = gemini_server.last_body()
    assert {"googleSearch": {}} not in without["tools"]
    assert "includeServerSideToolInvocations" not in without["toolConfig"]

    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ask(tools=TOOLS, web_search=True))
    body = gemini_server.last_body()
    assert {"googleSearch": {}} in body["tools"]
    assert any("functionDeclarations" in tool for tool in body["tools"])
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}, "includeServerSideToolInvocations": True}


async def test_grounding_byte_offsets_become_character_offsets(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    # An em dash is three bytes in UTF-8, the euro sign three, the emoji four: byte and character offsets
    # part ways after each.
    first, second = "Descaling — every 4 weeks — costs 3 €. ", "Café owners 😀 use citric acid."
    text = first + second
    pages = [("https://example.org/descale", "Descaling guide"), ("https://example.org/cafe", "Café tips")]
    supports = [("every 4 weeks", [0]), ("costs 3 €.", [0, 1]), ("use citric acid.", [1])]
    searched = search_call_parts("search-1", ["descaling interval"], {"results": [{"url": pages[0][0]}]})
    gemini_server.enqueue(
        response(*searched, text_part(first)),
        response(
            text_part(second),
            finish_reason="STOP",
            grounding_metadata=grounding(text, pages, supports, queries=["descaling interval"]),
            usage_metadata=usage(50, 30, tool_use_prompt=400),
        ),
    )
    end = ending(await run(model, ask(web_search=True)))

    assert end.turn.text == text
    assert end.web_sources == (WebSource(*pages[0]), WebSource(*pages[1]))
    assert [(text[g.start : g.end], g.source_indices) for g in end.grounding] == [
        ("every 4 weeks", (0,)),
        ("costs 3 €.", (0, 1)),
        ("use citric acid.", (1,)),
    ]
    assert end.usage.input_tokens == 450  # the search results the model read are input

    # The server-side search parts are part of the model's Content, so they are sent back too.
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ChatRequest(system="s", messages=(UserText("q"), end.turn, UserText("and?")), web_search=True))
    echoed = gemini_server.last_body()["contents"][1]["parts"]
    assert [normalized(p) for p in echoed] == [normalized(p) for p in searched] + [{"text": text}]


async def test_thinking_has_its_own_budget_on_top_of_the_answer(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    await run(model, ask(max_output_tokens=700))
    config = gemini_server.last_body()["generationConfig"]
    assert wire(config["thinkingConfig"], "thinkingBudget") == 256
    assert config["maxOutputTokens"] == 700 + 256


async def test_a_model_that_refuses_a_thinking_budget_is_asked_without_one(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue_error(400, "Thinking is not supported by this model.")
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    gemini_server.enqueue(response(text_part("again"), finish_reason="STOP"))
    assert ending(await run(model, ask(max_output_tokens=700))).turn.text == "ok"
    assert ending(await run(model, ask(max_output_tokens=700))).turn.text == "again"

    configs = [r.body["generationConfig"] for r in gemini_server.requests]
    assert ["thinkingConfig" in c for c in configs] == [True, False, False]
    assert [c["maxOutputTokens"] for c in configs] == [956, 700, 700]


async def test_usage_is_priced_from_the_table(gemini_server: GeminiProtocolServer, model: GeminiModel) -> None:
    gemini_server.enqueue(
        response(text_part("Cut off")),
        response(finish_reason="MAX_TOKENS", usage_metadata=usage(1000, 200, thoughts=300, tool_use_prompt=100)),
    )
    end = ending(await run(model, ask()))
    assert end.finish_reason == "length"
    assert (end.usage.input_tokens, end.usage.output_tokens, end.usage.thinking_tokens) == (1100, 200, 300)
    # $0.25 in, $1.50 out per million; thinking is billed as output.
    assert end.usage.cost_usd == pytest.approx((1100 * 0.25 + 500 * 1.50) / 1e6)


async def test_an_unknown_model_is_charged_the_dearest_known_rate(gemini_server: GeminiProtocolServer) -> None:
    # The table's own properties are tests/llm/test_pricing.py's; this is the adapter charging by it.
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP", usage_metadata=usage(1_000_000, 0)))
    unknown = GeminiModel(api_key="test-key", base_url=gemini_server.base_url, model="gemini-99-ultra")
    try:
        end = ending(await run(unknown, ask()))
    finally:
        await unknown.aclose()
    assert gemini_server.requests[-1].model == "gemini-99-ultra"
    assert end.usage.cost_usd == pytest.approx(UNKNOWN_MODEL_PRICE.input_per_million)


async def test_statements_are_asked_for_by_schema_and_yielded_as_they_complete(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(
        response(
            text_part(
                '{"statements": [{"text": "Descale {monthly} with \\"care\\".", '
                '"evidence": [{"passage": 1, "quote": "descale monthly"}]}, {"te'
            )
        ),
        response(
            text_part(
                'xt": "Use citric acid — not vinegar.", "evidence": [{"passage": 2, "quote": "citric acid"}, '
                '{"passage": 3, "quote": "not vinegar"}]}]}'
            )
        ),
        response(finish_reason="STOP"),
        gate_after=1,
    )
    stream = model.stream(ask(answer_format="statements", tool_choice="none", tools=TOOLS, citable=(1, 2, 3)))
    first = await anext(stream)
    descale = Statement('Descale {monthly} with "care".', (Quote(1, "descale monthly"),))
    assert first == StatementDone(descale)
    assert gemini_server.frames_sent == 1
    gemini_server.release()
    events = [first] + [event async for event in stream]

    assert not any(isinstance(e, TextDelta) for e in events)
    acid = Statement("Use citric acid — not vinegar.", (Quote(2, "citric acid"), Quote(3, "not vinegar")))
    expected = (descale, acid)
    assert [s.sources for s in expected] == [(1,), (2, 3)]
    assert tuple(e.statement for e in events if isinstance(e, StatementDone)) == expected
    end = ending(events)
    assert end.statements == expected
    assert end.turn.text == 'Descale {monthly} with "care". Use citric acid — not vinegar.'
    config = gemini_server.last_body()["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = wire(config, "responseJsonSchema")
    assert schema == statements_schema((1, 2, 3))
    assert schema["properties"]["statements"]["items"]["properties"]["evidence"]["items"]["properties"]["passage"][
        "enum"
    ] == [1, 2, 3]


async def test_complete_json_returns_the_object_and_its_usage(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    schema = {"type": "object", "properties": {"unsupported": {"type": "array", "items": {"type": "integer"}}}}
    gemini_server.enqueue(
        response(
            text_part("Checking each claim.", thought=True, signature=b"sig"),
            text_part('{"unsupported": [2]}'),
            finish_reason="STOP",
            usage_metadata=usage(400, 8, thoughts=20),
        )
    )
    reply, spent = await model.complete_json("Check the statements.", "0. Descale monthly [1].", schema)
    assert reply == {"unsupported": [2]}
    assert (spent.input_tokens, spent.output_tokens, spent.thinking_tokens) == (400, 8, 20)
    assert spent.cost_usd > 0
    sent = gemini_server.requests[-1]
    assert sent.method == "generateContent"
    assert "tools" not in sent.body
    assert sent.body["generationConfig"]["responseMimeType"] == "application/json"
    assert wire(sent.body["generationConfig"], "responseJsonSchema") == schema


async def test_complete_json_refuses_a_reply_that_is_not_json(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue(response(text_part('{"unsupported": [2'), finish_reason="MAX_TOKENS"))
    with pytest.raises(ModelError, match=r"could not be parsed.*length"):
        await model.complete_json("s", "p", {"type": "object"})


@pytest.mark.parametrize(
    ("code", "retryable", "advice"),
    [
        (429, True, "quota"),
        (500, True, "try again"),
        (503, True, "try again"),
        (504, True, "try again"),
        (400, False, "refused the request"),
        (401, False, "GEMINI_API_KEY"),
        (403, False, "GEMINI_API_KEY"),
        (404, False, "SEXTANT_MODEL"),
    ],
)
async def test_error_statuses_become_model_errors(
    gemini_server: GeminiProtocolServer, model: GeminiModel, code: int, retryable: bool, advice: str
) -> None:
    gemini_server.enqueue_error(code, f"scripted failure {code}")
    with pytest.raises(ModelError) as caught:
        await run(model, ask())
    assert (caught.value.status, caught.value.retryable) == (code, retryable)
    assert advice in str(caught.value) and f"scripted failure {code}" in str(caught.value)
    assert len(gemini_server.requests) == 1  # no retries behind the loop's back


async def test_complete_json_reports_errors_the_same_way(
    gemini_server: GeminiProtocolServer, model: GeminiModel
) -> None:
    gemini_server.enqueue_error(503, "The model is overloaded. Please try again later.")
    with pytest.raises(ModelError) as caught:
        await model.complete_json("s", "p", {"type": "object"})
    assert (caught.value.status, caught.value.retryable) == (503, True)


async def test_a_wrong_key_says_which_variable_to_fix(gemini_server: GeminiProtocolServer) -> None:
    wrong = GeminiModel(api_key="not-the-key", base_url=gemini_server.base_url)
    try:
        with pytest.raises(ModelError, match="GEMINI_API_KEY") as caught:
            await run(wrong, ask())
    finally:
        await wrong.aclose()
    assert (caught.value.status, caught.value.retryable) == (400, False)
    assert gemini_server.requests[0].headers["x-goog-api-key"] == "not-the-key"


async def test_a_server_that_is_down_is_a_retryable_model_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = GeminiModel(api_key="test-key", base_url=f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(ModelError, match="could not be reached") as caught:
            await run(down, ask())
    finally:
        await down.aclose()
    assert caught.value.retryable is True
    assert caught.value.status is None


async def test_built_from_settings(gemini_server: GeminiProtocolServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", gemini_server.api_key)
    settings = ModelSettings(
        _env_file=None, model="gemini-2.5-flash", gemini_url=gemini_server.base_url, thinking_budget=128
    )
    configured = GeminiModel.from_settings(settings)
    gemini_server.enqueue(response(text_part("ok"), finish_reason="STOP"))
    try:
        await run(configured, ask(max_output_tokens=100))
    finally:
        await configured.aclose()
    sent = gemini_server.requests[-1]
    assert (configured.name, sent.model, sent.body["generationConfig"]["maxOutputTokens"]) == (
        "gemini-2.5-flash",
        "gemini-2.5-flash",
        228,
    )

    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ValueError, match="GEMINI_API_KEY"):
        GeminiModel.from_settings(ModelSettings(_env_file=None))
