"""The scripted double at the chat-model boundary: it replays its turns in order and records what it was asked."""

from __future__ import annotations

import pytest

from sextant.llm.chat import (
    ChatEvent,
    ChatModel,
    ChatRequest,
    ModelError,
    Quote,
    Statement,
    StatementDone,
    TextDelta,
    TurnEnd,
    Usage,
    UserText,
)
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, search_call

REQUEST = ChatRequest(system="s", messages=(UserText("How often should I descale?"),))


async def _events(model: ScriptedModel, request: ChatRequest = REQUEST) -> list[ChatEvent]:
    return [event async for event in model.stream(request)]


async def test_a_turn_streams_word_sized_deltas_then_its_statements_then_the_end() -> None:
    statement = Statement("Every three months.", (Quote(1, "descale the machine every 3 months"),))
    model = ScriptedModel([ScriptedTurn("Every three months.", statements=(statement,), usage=Usage(5, 3))])
    assert isinstance(model, ChatModel)
    events = await _events(model)
    assert events[:3] == [TextDelta("Every "), TextDelta("three "), TextDelta("months.")]
    assert events[3] == StatementDone(statement)
    end = events[4]
    assert isinstance(end, TurnEnd) and len(events) == 5
    assert (end.turn.text, end.usage, end.statements) == ("Every three months.", Usage(5, 3), (statement,))
    assert model.requests == [REQUEST]


async def test_turns_are_replayed_in_order_and_a_scripted_error_is_raised() -> None:
    call = search_call("descaling", k=3)
    model = ScriptedModel([ScriptedTurn(tool_calls=(call,)), ScriptedTurn(error=ModelError("busy", retryable=True))])
    end = (await _events(model))[-1]
    assert isinstance(end, TurnEnd) and end.turn.tool_calls == (call,)
    assert (call.name, call.arguments) == ("kb_search", {"query": "descaling", "k": 3})
    with pytest.raises(ModelError, match="busy") as raised:
        await _events(model)
    assert raised.value.retryable
    with pytest.raises(ModelError, match="no more turns"):
        await _events(model)
    assert len(model.requests) == 3


async def test_json_replies_answer_complete_json_in_order_and_record_the_prompt() -> None:
    model = ScriptedModel([], json_replies=[{"verdict": "supported"}])
    assert await model.complete_json("system", "the prompt", {"type": "object"}) == ({"verdict": "supported"}, Usage())
    assert model.json_prompts == ["the prompt"]
    with pytest.raises(ModelError, match="no more JSON replies"):
        await model.complete_json("system", "again", {"type": "object"})
