"""Yes-or-no questions to a local model, run for real on SmolLM2-135M (its verdicts are weak; the path is real)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.llm.chat import ModelError
from sextant.llm.llama_local import load_gguf
from sextant.llm.llama_runtime import LlamaRuntime
from sextant.llm.llama_yes_no import CONTEXT_TOKENS, LlamaYesNo
from sextant.llm.model_files import ModelFileError
from tests.llm.conftest import TEST_MODEL

SYSTEM = "You check whether a text answers a question. Reply yes or no."


@pytest.fixture(scope="module")
def model(smollm2: Path) -> Iterator[LlamaYesNo]:
    loaded = LlamaYesNo.load(TEST_MODEL, smollm2.parent, threads=1)
    yield loaded
    asyncio.run(loaded.aclose())


async def test_the_answer_is_a_probability_and_the_same_each_time(model: LlamaYesNo) -> None:
    question = "Text: Brew espresso at 93 degrees Celsius.\n\nQuestion: How hot is espresso brewed? Reply yes or no."
    first = await model.yes_probability(SYSTEM, question)
    assert 0.0 < first < 1.0
    assert await model.yes_probability(SYSTEM, question) == first  # one forward pass, no sampling


async def test_the_text_of_the_question_moves_the_answer(model: LlamaYesNo) -> None:
    asked = [
        await model.yes_probability(SYSTEM, f"Is {thing}? Reply yes or no.")
        for thing in ("water wet", "the sun cold", "a cat a dog")
    ]
    assert len(set(asked)) == 3  # the prompt reaches the model: each question scores differently


async def test_a_question_longer_than_the_context_is_an_error_not_a_crash(model: LlamaYesNo) -> None:
    with pytest.raises(ModelError, match="too long"):
        await model.yes_probability(SYSTEM, "word " * CONTEXT_TOKENS)
    assert 0.0 < await model.yes_probability(SYSTEM, "Is water wet? Reply yes or no.") < 1.0


def test_a_missing_model_file_names_the_command_that_fetches_it(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=f"sextant-models fetch {TEST_MODEL}"):
        LlamaYesNo.load(TEST_MODEL, tmp_path, threads=1)


QUESTIONS = (
    "Text: Brew espresso at 93 degrees Celsius.\n\nQuestion: How hot is espresso brewed? Reply yes or no.",
    "Text: Rinse aquarium filters in tank water.\n\nQuestion: How hot is espresso brewed? Reply yes or no.",
)


@pytest.fixture(scope="module")
def writer(smollm2: Path) -> Iterator[LlamaRuntime]:
    """The writer as the product loads it, on one thread."""
    llama, _ = load_gguf(TEST_MODEL, smollm2.parent, threads=1)
    yield llama
    llama.close()


def _reply(llama: LlamaRuntime) -> str:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Is water wet?"}]
    reply = llama.create_chat_completion(messages=messages, max_tokens=24, temperature=0.0)  # type: ignore[arg-type]
    return str(reply["choices"][0]["message"]["content"])  # type: ignore[index]


async def test_beside_the_writers_file_the_check_shares_its_weights_and_gives_the_same_verdicts(
    model: LlamaYesNo, writer: LlamaRuntime, smollm2: Path
) -> None:
    shared = LlamaYesNo.load(TEST_MODEL, smollm2.parent, threads=1, beside=writer)
    try:
        assert shared.shared and not model.shared and shared.name == TEST_MODEL
        for question in QUESTIONS:  # bit for bit what a separately loaded copy says
            assert await shared.yes_probability(SYSTEM, question) == await model.yes_probability(SYSTEM, question)
    finally:
        await shared.aclose()


async def test_a_shared_check_leaves_the_writer_as_it_was(writer: LlamaRuntime, smollm2: Path) -> None:
    before = _reply(writer)
    shared = LlamaYesNo.load(TEST_MODEL, smollm2.parent, threads=1, beside=writer)
    await shared.yes_probability(SYSTEM, QUESTIONS[0])
    assert _reply(writer) == before  # the check read in a context of its own
    await shared.aclose()
    assert _reply(writer) == before  # closing it freed its context, not the writer's weights


def test_a_model_from_another_file_is_loaded_not_shared(writer: LlamaRuntime, smollm2: Path, tmp_path: Path) -> None:
    copy = shutil.copy(smollm2, tmp_path / "copy.gguf")
    other = LlamaYesNo.load(str(copy), tmp_path, threads=1, beside=writer)
    assert not other.shared and other.name == "copy"
    asyncio.run(other.aclose())
