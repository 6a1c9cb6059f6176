"""Replies drafted from the prompt, against the undrafted runtime, on SmolLM2-135M (real llama.cpp)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sextant.llm.llama_draft import DRAFT_TOKENS, DraftingLlama, prompt_lookup
from sextant.llm.llama_prefix import SteadyLlama
from tests.llm.conftest import loaded
from tests.llm.llama_replies import QUESTIONS, STATEMENTS, reply


def test_the_draft_is_what_followed_the_last_tokens_where_they_first_occurred() -> None:
    lookup = prompt_lookup()
    tokens = [7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 0, 0, 7, 8, 9]
    assert lookup(np.array(tokens, dtype=np.intc)).tolist() == [1, 2, 3, 4, 5][:DRAFT_TOKENS]


@pytest.fixture(scope="module")
def runtimes(smollm2: Path) -> Iterator[dict[str, SteadyLlama]]:
    with loaded(SteadyLlama, smollm2) as steady, loaded(DraftingLlama, smollm2) as drafting:
        yield {"steady": steady, "drafting": drafting}


def count_passes(llama: DraftingLlama, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each batch ``llama`` reads, recorded from now on."""
    batches: list[int] = []
    read = llama.eval

    def counted(tokens: Sequence[int]) -> None:
        batches.append(len(tokens))
        read(tokens)

    monkeypatch.setattr(llama, "eval", counted)
    return batches


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("schema", [STATEMENTS, None], ids=["statements", "no-grammar"])
def test_the_drafted_reply_is_the_undrafted_one(
    runtimes: dict[str, SteadyLlama], question: str, schema: dict[str, Any] | None
) -> None:
    drafted = reply(runtimes["drafting"], question, schema)
    assert drafted.strip()
    assert drafted == reply(runtimes["steady"], question, schema)
    assert reply(runtimes["drafting"], question, schema) == drafted  # and the same again


def test_copied_words_take_fewer_passes_than_tokens(
    runtimes: dict[str, SteadyLlama], monkeypatch: pytest.MonkeyPatch
) -> None:
    llama = runtimes["drafting"]
    assert isinstance(llama, DraftingLlama)
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
    runtimes: dict[str, SteadyLlama], monkeypatch: pytest.MonkeyPatch
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
