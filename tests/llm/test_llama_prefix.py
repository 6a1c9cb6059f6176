"""The same prompt gets the same reply whatever was asked before, on SmolLM2-135M (real llama.cpp)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sextant.llm.llama_prefix import SteadyLlama
from tests.llm.conftest import loaded

SYSTEM = "Answer from the passages in one sentence."
PASSAGES = (
    "[1] Descale the espresso machine every two months if the water is hard. [2] A sourdough loaf needs 75 percent "
    "hydration. [3] Aquarium filters are rinsed in tank water once a month."
)


@pytest.fixture(scope="module")
def steady(smollm2: Path) -> Iterator[SteadyLlama]:
    with loaded(SteadyLlama, smollm2) as llama:
        yield llama


def completion(llama: SteadyLlama, user: str) -> Any:
    return llama.create_chat_completion(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        max_tokens=48,
        temperature=0.0,
    )


def reply(llama: SteadyLlama, user: str) -> str:
    return str(completion(llama, user)["choices"][0]["message"]["content"])


def test_a_reply_does_not_depend_on_the_prompts_before_it(steady: SteadyLlama) -> None:
    question = f"{PASSAGES}\n\nQuestion: How often is the espresso machine descaled?"
    steady.reset()
    fresh = reply(steady, question)
    assert fresh.strip()
    assert reply(steady, question) == fresh  # the whole prompt cached: read again after the system turn
    # After another prompt sharing the system turn and the passages, a longer prefix than the system turn.
    reply(steady, f"{PASSAGES}\n\nQuestion: How wet is sourdough dough?")
    assert reply(steady, question) == fresh


def test_the_system_turn_is_read_once_as_a_batch_of_its_own_and_the_rest_whole_each_time(
    steady: SteadyLlama, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    read = steady.eval
    monkeypatch.setattr(steady, "eval", lambda tokens: (batches.append(len(tokens)), read(tokens))[1])
    steady.reset()
    question = f"{PASSAGES}\n\nQuestion: How often is the espresso machine descaled?"
    reply(steady, question)
    system_turn, rest = batches[0], batches[1]
    prompt = steady.tokenize(b"<|im_start|>system\n" + SYSTEM.encode() + b"<|im_end|>", special=True)
    assert system_turn == len(prompt) and prompt[-1] == steady._end_of_turn
    batches.clear()
    reply(steady, question)  # the whole prompt was cached; only the system turn is kept
    assert batches[0] == rest
    batches.clear()
    other = completion(steady, f"{PASSAGES}\n\nQuestion: How wet is sourdough dough?")
    # It shares the passages with the one before, but all of its own user turn is read, in one batch.
    assert batches[0] == other["usage"]["prompt_tokens"] - system_turn


def test_nothing_is_kept_without_an_end_of_turn_with_something_after_it(steady: SteadyLlama) -> None:
    with_turns = steady.tokenize(b"<|im_start|>system\nhi<|im_end|>\n<|im_start|>user\nyo<|im_end|>\n", special=True)
    end = steady._system_turn(with_turns)
    assert with_turns[end - 1] == steady._end_of_turn and steady.detokenize(with_turns[:end]).endswith(b"hi")
    assert steady._system_turn(with_turns[:end]) == 0  # nothing after it: nothing to keep
    assert steady._system_turn(steady.tokenize(b"no template here")) == 0
