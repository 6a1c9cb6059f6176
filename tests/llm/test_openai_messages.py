"""The OpenAI-shaped requests and stream handling shared by the llama.cpp and OpenAI-compatible adapters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sextant.llm.chat import (
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
    Usage,
    UserText,
)
from sextant.llm.openai_messages import (
    ARGUMENT_MAX_CHARS,
    FORCED_CALL_INSTRUCTION,
    TurnAssembler,
    call_without_arguments,
    chat_body,
    generation_schema,
    grammar_safe,
    to_openai_messages,
)
from sextant.llm.statements import MAX_QUOTE_CHARS, STATEMENTS_INSTRUCTION
from tests.llm.conftest import KB_LIST, KB_SEARCH

QUESTION = UserText("How often should I descale?")


def _chunk(content: str | None = None, calls: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    delta: dict[str, Any] = {"content": content, "tool_calls": calls}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": extra.pop("finish", None)}], **extra}


def test_the_transcript_becomes_openai_messages() -> None:
    call = ToolCall("c1", "kb_search", {"query": "descale"})
    results = ToolResults(
        (ToolResult("c1", "kb_search", "[1] every 3 months"), ToolResult("c2", "kb_list", "boom", True))
    )
    assert to_openai_messages("sys", (QUESTION, ModelTurn("", (call,)), results, ModelTurn("Every 3 months."))) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "How often should I descale?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "kb_search", "arguments": '{"query": "descale"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "[1] every 3 months"},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: boom"},
        {"role": "assistant", "content": "Every 3 months."},
    ]


def test_a_forced_call_offers_only_the_required_arguments_bounded() -> None:
    request = ChatRequest("sys", (QUESTION,), tools=(KB_SEARCH, KB_LIST), tool_choice="kb_search")
    body = chat_body(request, "json_schema")
    assert body["tool_choice"] == {"type": "function", "function": {"name": "kb_search"}}
    [tool] = body["tools"]
    assert tool["function"]["parameters"] == generation_schema(KB_SEARCH)
    assert generation_schema(KB_SEARCH)["properties"] == {
        "query": {**KB_SEARCH.input_schema["properties"]["query"], "maxLength": ARGUMENT_MAX_CHARS}
    }
    assert "response_format" not in body
    assert body["messages"][0]["content"] == f"sys\n\n{FORCED_CALL_INSTRUCTION.format(name='kb_search')}"


def test_a_forced_call_of_an_unoffered_tool_is_refused() -> None:
    with pytest.raises(ModelError, match="kb_ingest"):
        chat_body(ChatRequest("sys", (QUESTION,), tools=(KB_SEARCH,), tool_choice="kb_ingest"), "json_schema")


def test_a_tool_without_required_arguments_is_called_without_generating() -> None:
    assert call_without_arguments(KB_SEARCH) is None
    end = call_without_arguments(KB_LIST)
    assert end is not None
    [call] = end.turn.tool_calls
    assert (call.name, call.arguments, end.finish_reason) == ("kb_list", {}, "tool_calls")


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [("json_object", {"type": "json_object"}), ("json_schema", {"type": "json_schema"})],
)
def test_statements_are_asked_for_in_either_json_dialect(dialect: Any, expected: dict[str, str]) -> None:
    body = chat_body(ChatRequest("sys", (QUESTION,), answer_format="statements", max_output_tokens=99), dialect)
    assert body["response_format"].items() >= expected.items()
    # The instruction is the caller's to write (policies.answer_request): the adapter adds nothing to it.
    assert body["messages"][0]["content"] == "sys"
    assert STATEMENTS_INSTRUCTION not in json.dumps(body["messages"])
    assert body["max_tokens"] == 99
    assert "tools" not in body


def test_sources_are_limited_to_the_citable_labels() -> None:
    request = ChatRequest("sys", (QUESTION,), answer_format="statements", citable=(3, 1, 3))
    schema = chat_body(request, "json_object")["response_format"]["schema"]
    evidence = schema["properties"]["statements"]["items"]["properties"]["evidence"]["items"]
    assert evidence["properties"]["passage"] == {"type": "integer", "enum": [1, 3]}
    assert evidence["required"] == ["passage", "quote"]
    assert evidence["properties"]["quote"]["type"] == "string"


def test_quotes_are_capped_only_when_the_adapter_asks() -> None:
    request = ChatRequest("sys", (QUESTION,), answer_format="statements", citable=(1,))

    def quote_limit(body: dict[str, Any]) -> int:
        evidence = body["response_format"]["schema"]["properties"]["statements"]["items"]["properties"]["evidence"]
        return int(evidence["items"]["properties"]["quote"]["maxLength"])

    assert quote_limit(chat_body(request, "json_object")) == MAX_QUOTE_CHARS
    assert quote_limit(chat_body(request, "json_object", max_quote_chars=60)) == 60


def test_grammar_safe_bounds_every_string_and_array() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "maxItems": 50, "items": {"type": "string"}}}}
    assert grammar_safe(schema, 10)["properties"]["a"] == {
        "type": "array",
        "maxItems": 16,
        "items": {"type": "string", "maxLength": 10},
    }


def test_streamed_call_arguments_are_joined_and_checked_against_the_real_schema() -> None:
    request = ChatRequest("sys", (QUESTION,), tools=(KB_SEARCH,), tool_choice="kb_search")
    assembler = TurnAssembler(request)
    pieces = ['{"query": ', '"descale', ' interval"}']
    first = [{"index": 0, "id": "call-7", "function": {"name": "kb_search", "arguments": pieces[0]}}]
    assert assembler.add(_chunk(calls=first)) == []
    for piece in pieces[1:]:
        assert assembler.add(_chunk(calls=[{"index": 0, "function": {"arguments": piece}}])) == []
    end = assembler.finish(Usage(output_tokens=3))
    assert end.turn.tool_calls == (ToolCall("call-7", "kb_search", {"query": "descale interval"}),)
    assert (end.usage, assembler.pieces) == (Usage(output_tokens=3), 3)


def test_arguments_that_break_the_schema_are_a_model_error() -> None:
    assembler = TurnAssembler(ChatRequest("sys", (QUESTION,), tools=(KB_SEARCH,), tool_choice="kb_search"))
    assembler.add(
        _chunk(calls=[{"index": 0, "function": {"name": "kb_search", "arguments": '{"query": "x", "k": 50}'}}])
    )
    with pytest.raises(ModelError, match=r"forced call of kb_search: .*50 is greater than the maximum of 20") as error:
        assembler.finish(Usage())
    assert not error.value.retryable


def test_arguments_written_as_content_are_accepted() -> None:
    assembler = TurnAssembler(ChatRequest("sys", (QUESTION,), tools=(KB_SEARCH,), tool_choice="kb_search"))
    assert assembler.add(_chunk('{"query": "descale"}')) == []
    assert assembler.finish(Usage()).turn.tool_calls[0].arguments == {"query": "descale"}


def test_statements_stream_as_they_close_and_end_the_turn() -> None:
    assembler = TurnAssembler(ChatRequest("sys", (QUESTION,), answer_format="statements"))
    answer = json.dumps(
        {
            "statements": [
                {"text": "Every 3 months.", "evidence": [{"passage": 1, "quote": "every three months"}]},
                {"text": "Cut", "evidence": [{"passage": 2, "quote": "cut"}]},
            ]
        }
    )
    cut = answer[:-8]
    events = [e for piece in (cut[:30], cut[30:]) for e in assembler.add(_chunk(piece))]
    assert events == [StatementDone(Statement("Every 3 months.", (Quote(1, "every three months"),)))]
    usage = {"prompt_tokens": 40, "completion_tokens": 12}
    assembler.add({"choices": [], "usage": usage})
    end = assembler.finish(Usage(output_tokens=2))
    assert end.statements == (Statement("Every 3 months.", (Quote(1, "every three months"),)),)
    assert (end.turn.text, end.usage) == ("Every 3 months.", Usage(input_tokens=40, output_tokens=12))


def test_statements_parsed_under_a_quote_cap_lose_a_last_word_the_grammar_may_have_forced() -> None:
    request = ChatRequest("sys", (QUESTION,), answer_format="statements")
    quote = "Descale the machine every three months with the Aurora citic"  # the grammar stopped "citric" at 60
    answer = json.dumps({"statements": [{"text": "Every 3 months.", "evidence": [{"passage": 1, "quote": quote}]}]})
    [capped] = TurnAssembler(request, quote_cap=len(quote)).add(_chunk(answer))
    [uncapped] = TurnAssembler(request).add(_chunk(answer))
    assert isinstance(capped, StatementDone) and isinstance(uncapped, StatementDone)
    assert capped.statement.quotes == (Quote(1, "Descale the machine every three months with the Aurora"),)
    assert uncapped.statement.quotes == (Quote(1, quote),)


def test_prose_streams_text_deltas() -> None:
    assembler = TurnAssembler(ChatRequest("sys", (QUESTION,)))
    events = assembler.add(_chunk("Every ")) + assembler.add(_chunk("3 months.", finish="stop"))
    assert events == [TextDelta("Every "), TextDelta("3 months.")]
    end = assembler.finish(Usage(output_tokens=2))
    assert (end.turn.text, end.finish_reason) == ("Every 3 months.", "stop")
