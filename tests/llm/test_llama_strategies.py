"""Greedy decoding, the cache kept to the system turn and drafting, each against what it replaces, on SmolLM2-135M
(real llama.cpp)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llama_cpp import Llama

from sextant.llm.llama_local import product_strategies
from sextant.llm.llama_runtime import GreedyStep, LlamaRuntime, Strategies
from sextant.llm.llama_strategies import DRAFT_TOKENS, GreedyDecoding, SystemTurnPrefix, prompt_lookup
from tests.llm.conftest import loaded
from tests.llm.llama_replies import QUESTIONS, STATEMENTS, reply

# Words no model would choose unprompted: most of their tokens are ones the grammar must force.
UNLIKELY = {
    "type": "object",
    "properties": {"animal": {"type": "string", "enum": ["xylophone-quokka", "zebra 42"]}},
    "required": ["animal"],
}
SYSTEM = "Answer from the passages in one sentence."
PASSAGES = (
    "[1] Descale the espresso machine every two months if the water is hard. [2] A sourdough loaf needs 75 percent "
    "hydration. [3] Aquarium filters are rinsed in tank water once a month."
)


def greedy(runtime: LlamaRuntime) -> Strategies:
    return Strategies(GreedyDecoding())


def steady(runtime: LlamaRuntime) -> Strategies:
    return Strategies(GreedyDecoding(), SystemTurnPrefix.of(runtime))


@pytest.fixture(scope="module")
def runtimes(smollm2: Path) -> Iterator[dict[str, Any]]:
    with (
        loaded(Llama, smollm2) as chain,
        loaded(partial(LlamaRuntime, compose=greedy), smollm2) as greedy_runtime,
        loaded(partial(LlamaRuntime, compose=steady), smollm2) as steady_runtime,
        loaded(partial(LlamaRuntime, compose=product_strategies), smollm2) as drafting,
    ):
        yield {"chain": chain, "greedy": greedy_runtime, "steady": steady_runtime, "drafting": drafting}


def count_passes(llama: LlamaRuntime, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each batch ``llama`` reads, recorded from now on."""
    batches: list[int] = []
    read = llama.eval

    def counted(tokens: Sequence[int]) -> None:
        batches.append(len(tokens))
        read(tokens)

    monkeypatch.setattr(llama, "eval", counted)
    return batches


# Greedy decoding: the grammar asked about the model's own choice first.


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("schema", [STATEMENTS, UNLIKELY, None], ids=["statements", "forced-words", "no-grammar"])
def test_the_greedy_reply_is_the_chains_token_for_token(
    runtimes: dict[str, Any], question: str, schema: dict[str, Any] | None
) -> None:
    greedy = reply(runtimes["greedy"], question, schema)
    assert greedy == reply(runtimes["chain"], question, schema)
    assert greedy.strip()


def test_sampling_with_a_temperature_keeps_the_librarys_chain(runtimes: dict[str, Any]) -> None:
    llama, decoding = runtimes["greedy"], GreedyDecoding()
    assert isinstance(decoding.sampler(llama, {"temp": 0.0}), GreedyStep)
    assert decoding.sampler(llama, {"temp": 0.7}) is None
    assert decoding.sampler(llama, {"temp": 0.0, "repeat_penalty": 1.1}) is None
    assert decoding.sampler(llama, {"temp": 0.0, "logits_processor": [lambda ids, logits: logits]}) is None
    seeded = reply(llama, QUESTIONS[0], STATEMENTS, temperature=0.7, seed=5)
    assert seeded == reply(runtimes["chain"], QUESTIONS[0], STATEMENTS, temperature=0.7, seed=5)


# The cache kept to the system turn: a reply depends on its prompt alone.


def completion(llama: LlamaRuntime, user: str) -> Any:
    return llama.create_chat_completion(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        max_tokens=48,
        temperature=0.0,
    )


def steady_reply(llama: LlamaRuntime, user: str) -> str:
    return str(completion(llama, user)["choices"][0]["message"]["content"])


def test_a_reply_does_not_depend_on_the_prompts_before_it(runtimes: dict[str, Any]) -> None:
    llama = runtimes["steady"]
    question = f"{PASSAGES}\n\nQuestion: How often is the espresso machine descaled?"
    llama.reset()
    fresh = steady_reply(llama, question)
    assert fresh.strip()
    assert steady_reply(llama, question) == fresh  # the whole prompt cached: read again after the system turn
    # After another prompt sharing the system turn and the passages, a longer prefix than the system turn.
    steady_reply(llama, f"{PASSAGES}\n\nQuestion: How wet is sourdough dough?")
    assert steady_reply(llama, question) == fresh


def test_the_system_turn_is_read_once_as_a_batch_of_its_own_and_the_rest_whole_each_time(
    runtimes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    llama = runtimes["steady"]
    batches = count_passes(llama, monkeypatch)
    llama.reset()
    question = f"{PASSAGES}\n\nQuestion: How often is the espresso machine descaled?"
    steady_reply(llama, question)
    system_turn, rest = batches[0], batches[1]
    prompt = llama.tokenize(b"<|im_start|>system\n" + SYSTEM.encode() + b"<|im_end|>", special=True)
    assert system_turn == len(prompt) and prompt[-1] == SystemTurnPrefix.of(llama).end_of_turn
    batches.clear()
    steady_reply(llama, question)  # the whole prompt was cached; only the system turn is kept
    assert batches[0] == rest
    batches.clear()
    other = completion(llama, f"{PASSAGES}\n\nQuestion: How wet is sourdough dough?")
    # It shares the passages with the one before, but all of its own user turn is read, in one batch.
    assert batches[0] == other["usage"]["prompt_tokens"] - system_turn


def test_nothing_is_kept_without_an_end_of_turn_with_something_after_it(runtimes: dict[str, Any]) -> None:
    llama = runtimes["steady"]
    prefix = SystemTurnPrefix.of(llama)
    with_turns = llama.tokenize(b"<|im_start|>system\nhi<|im_end|>\n<|im_start|>user\nyo<|im_end|>\n", special=True)
    end = prefix.system_turn(with_turns)
    assert with_turns[end - 1] == prefix.end_of_turn and llama.detokenize(with_turns[:end]).endswith(b"hi")
    assert prefix.system_turn(with_turns[:end]) == 0  # nothing after it: nothing to keep
    assert prefix.system_turn(llama.tokenize(b"no template here")) == 0
    assert SystemTurnPrefix(None).system_turn(with_turns) == 0  # a vocabulary without the marker


# Drafting: tokens drafted from the prompt checked in one pass.


def test_the_draft_is_what_followed_the_last_tokens_where_they_first_occurred() -> None:
    lookup = prompt_lookup()
    tokens = [7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 0, 0, 7, 8, 9]
    assert lookup(np.array(tokens, dtype=np.intc)).tolist() == [1, 2, 3, 4, 5][:DRAFT_TOKENS]


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("schema", [STATEMENTS, None], ids=["statements", "no-grammar"])
def test_the_drafted_reply_is_the_undrafted_one(
    runtimes: dict[str, Any], question: str, schema: dict[str, Any] | None
) -> None:
    drafted = reply(runtimes["drafting"], question, schema)
    assert drafted.strip()
    assert drafted == reply(runtimes["steady"], question, schema)
    assert reply(runtimes["drafting"], question, schema) == drafted  # and the same again


def test_copied_words_take_fewer_passes_than_tokens(runtimes: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    llama = runtimes["drafting"]
    batches = count_passes(llama, monkeypatch)
    sentence = "Descale the espresso machine every two months if the water is hard."
    copy = {"type": "object", "properties": {"quote": {"type": "string", "enum": [sentence]}}, "required": ["quote"]}
    completion: Any = llama.create_chat_completion(
        messages=[{"role": "system", "content": "Quote the passage."}, {"role": "user", "content": sentence}],
        response_format={"type": "json_object", "schema": copy},
        max_tokens=40,
        temperature=0.0,
    )
    assert sentence in completion["choices"][0]["message"]["content"]
    generated = completion["usage"]["completion_tokens"]
    passes = batches[2:]  # after the system turn and the rest of the prompt
    assert generated >= 15
    assert len(passes) < 0.75 * generated  # most of the sentence's tokens came several to a pass


def test_logits_are_asked_for_at_a_drafts_positions_and_only_at_the_end_of_a_prompt(
    runtimes: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    llama = runtimes["drafting"]
    flags: list[tuple[int, bool]] = []
    set_batch = llama._batch.set_batch

    def recorded(batch: Sequence[int], n_past: int, logits_all: bool) -> None:
        flags.append((len(batch), logits_all))
        set_batch(batch=batch, n_past=n_past, logits_all=logits_all)

    monkeypatch.setattr(llama._batch, "set_batch", recorded)
    reply(llama, QUESTIONS[0], STATEMENTS)
    system_turn, prompt, *passes = flags
    assert not system_turn[1] and not prompt[1] and prompt[0] > DRAFT_TOKENS + 1
    assert all(every == (size > 1) for size, every in passes)
    assert any(size > 1 for size, _ in passes)
