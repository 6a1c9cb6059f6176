"""The in-process llama.cpp adapter, run for real on SmolLM2-135M (weak answers, fast enough for CI)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import validate

from sextant.llm.chat import (
    ChatEvent,
    ChatModel,
    ChatRequest,
    ModelTurn,
    StatementDone,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    TurnEnd,
    UserText,
)
from sextant.llm.llama_local import QUOTE_MAX_CHARS, LlamaModel
from sextant.llm.llama_strategies import GreedyDecoding, PromptLookupDrafting, SystemTurnPrefix
from sextant.llm.model_files import KNOWN_MODELS, ModelFileError
from sextant.llm.settings import ModelSettings
from sextant.llm.statements import STATEMENTS_INSTRUCTION
from tests.llm.conftest import KB_LIST, KB_SEARCH, PASSAGES, SYSTEM, TEST_MODEL

QUESTION = UserText("How often should the espresso machine be descaled?")


def _settings(models_dir: Path, model: str = TEST_MODEL) -> ModelSettings:
    return ModelSettings(local_model=model, models_dir=models_dir, threads=1, _env_file=None)


@pytest.fixture(scope="module")
def model(smollm2: Path) -> Iterator[LlamaModel]:
    loaded = LlamaModel.from_settings(_settings(smollm2.parent))
    yield loaded
    asyncio.run(loaded.aclose())


async def _turn(model: LlamaModel, request: ChatRequest) -> list[ChatEvent]:
    return [event async for event in model.stream(request)]


def _answer_request() -> ChatRequest:
    call = ToolCall("call-1", "kb_search", {"query": "descale espresso machine"})
    messages = (QUESTION, ModelTurn("", (call,)), ToolResults((ToolResult("call-1", "kb_search", PASSAGES),)))
    # The caller writes the JSON instruction into the system prompt (as ``policies.answer_request`` does).
    return ChatRequest(
        f"{SYSTEM}\n\n{STATEMENTS_INSTRUCTION}",
        messages,
        tools=(KB_SEARCH,),
        tool_choice="none",
        answer_format="statements",
        citable=(1, 2, 3),
    )


def test_a_missing_model_names_the_fetch_command(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="sextant-models fetch smollm2-135m-instruct"):
        LlamaModel.from_settings(_settings(tmp_path))


def test_a_file_that_fails_its_hash_is_not_loaded(tmp_path: Path) -> None:
    (tmp_path / KNOWN_MODELS[TEST_MODEL].file_name).write_bytes(b"GGUF but not SmolLM2")
    with pytest.raises(ModelFileError, match="corrupt or not the pinned model"):
        LlamaModel.from_settings(_settings(tmp_path))


@pytest.mark.slow
async def test_a_forced_search_returns_arguments_valid_against_the_tool_schema(model: LlamaModel) -> None:
    assert isinstance(model, ChatModel)
    request = ChatRequest(SYSTEM, (QUESTION,), tools=(KB_SEARCH, KB_LIST), tool_choice="kb_search")
    *deltas, end = await _turn(model, request)
    assert deltas == []
    assert isinstance(end, TurnEnd)
    [call] = end.turn.tool_calls
    assert call.name == "kb_search"
    validate(call.arguments, KB_SEARCH.input_schema)
    assert end.usage.input_tokens > 0 and end.usage.output_tokens > 0 and end.usage.cost_usd == 0


@pytest.mark.slow
async def test_a_forced_call_without_arguments_generates_nothing(model: LlamaModel) -> None:
    before = model.tokens_generated
    [end] = await _turn(model, ChatRequest(SYSTEM, (QUESTION,), tools=(KB_SEARCH, KB_LIST), tool_choice="kb_list"))
    assert isinstance(end, TurnEnd) and end.turn.tool_calls[0].arguments == {}
    assert model.tokens_generated == before


@pytest.mark.slow
async def test_a_statements_answer_streams_each_statement_and_cites_only_citable_labels(model: LlamaModel) -> None:
    *streamed, end = await _turn(model, _answer_request())
    assert isinstance(end, TurnEnd)
    # The 135M model may abstain ({"statements": []}, which the schema allows now that every statement must
    # quote); either way the grammar-constrained reply finished and every statement it made was streamed.
    assert end.finish_reason == "stop"
    assert [e.statement for e in streamed if isinstance(e, StatementDone)] == list(end.statements)
    assert {label for s in end.statements for label in s.sources} <= {1, 2, 3}
    assert all(s.quotes and all(0 < len(q.text) <= QUOTE_MAX_CHARS for q in s.quotes) for s in end.statements)
    assert end.turn.tool_calls == ()


@pytest.mark.slow
async def test_the_grammar_stops_a_quote_at_the_local_cap(model: LlamaModel, monkeypatch: pytest.MonkeyPatch) -> None:
    # Shown a 72-character example quote, the 135M model writes quotes of 400 characters without the cap.
    monkeypatch.setattr("sextant.llm.llama_local.QUOTE_MAX_CHARS", 60)
    example = "descale the machine every 3 months, or every month if your water is hard"
    instruction = (
        'Answer with JSON only, exactly like this example: {"statements": [{"text": "Descale every 3 months.", '
        f'"evidence": [{{"passage": 1, "quote": "{example}"}}]}}]}}'
    )
    question = UserText(f"{PASSAGES}\n\nHow often should the machine be descaled?")
    request = ChatRequest(f"{SYSTEM}\n\n{instruction}", (question,), answer_format="statements", citable=(1, 2, 3))
    *_, end = await _turn(model, request)
    assert isinstance(end, TurnEnd)
    lengths = [len(q.text) for s in end.statements for q in s.quotes]
    assert len(example) > 60 and lengths and max(lengths) <= 60


@pytest.mark.slow
async def test_prose_streams_text_and_counts_tokens(model: LlamaModel) -> None:
    request = ChatRequest(SYSTEM, (UserText("Say hello in one short sentence."),), max_output_tokens=40)
    *deltas, end = await _turn(model, request)
    assert isinstance(end, TurnEnd)
    assert deltas and all(isinstance(d, TextDelta) for d in deltas)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == end.turn.text
    assert 0 < end.usage.output_tokens <= 40


@pytest.mark.slow
async def test_closing_the_stream_stops_generation(model: LlamaModel) -> None:
    request = ChatRequest(SYSTEM, (UserText("Count from 1 to 500, separated by commas."),), max_output_tokens=600)
    before = model.tokens_generated
    stream = model.stream(request)
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()
    # aclose waits for the worker: whatever it generated after the close is counted by now.
    assert model.tokens_generated - before < 100
    [*_, end] = await _turn(model, ChatRequest(SYSTEM, (UserText("Say hi."),), max_output_tokens=8))
    assert isinstance(end, TurnEnd) and end.turn.text


@pytest.mark.slow
async def test_complete_json_follows_the_schema(model: LlamaModel) -> None:
    schema = {
        "type": "object",
        "properties": {"supported": {"type": "boolean"}, "reason": {"type": "string", "maxLength": 80}},
        "required": ["supported", "reason"],
    }
    prompt = f"Passages:\n{PASSAGES}\n\nStatement: descale every 3 months [1]. Is it supported by passage 1?"
    reply, usage = await model.complete_json("You check statements against passages.", prompt, schema)
    validate(reply, schema)
    assert usage.output_tokens > 0 and usage.cost_usd == 0


def test_the_product_decodes_greedily_with_the_cache_kept_to_the_system_turn_and_drafts(model: LlamaModel) -> None:
    strategies = model.llama.strategies
    assert isinstance(strategies.decoding, GreedyDecoding)
    assert isinstance(strategies.prefix, SystemTurnPrefix) and strategies.prefix.end_of_turn is not None
    assert isinstance(strategies.drafting, PromptLookupDrafting) and model.llama.draft_model is not None


def test_one_thread_generates_and_every_thread_of_the_setting_reads_the_prompt(smollm2: Path) -> None:
    settings = ModelSettings(local_model=TEST_MODEL, models_dir=smollm2.parent, threads=2, _env_file=None)
    loaded = LlamaModel.from_settings(settings)
    try:
        llama = loaded._llama  # the adapter's own llama.cpp handle: what it was loaded with is the point here
        assert (llama.n_threads, llama.n_threads_batch) == (1, 2)
    finally:
        asyncio.run(loaded.aclose())
