"""Which model the settings choose: ``auto``'s order, and a model that cannot be built is none, with the reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sextant.llm.factory import CHECKER, build_model, checker_model
from sextant.llm.gemini import GeminiModel
from sextant.llm.openai_compat import OpenAICompatModel
from sextant.llm.settings import ModelSettings
from tests.llm.conftest import TEST_MODEL


def _settings(**values: object) -> ModelSettings:
    return ModelSettings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)


def test_none_answers_with_excerpts() -> None:
    choice = build_model(_settings(provider="none"))
    assert (choice.model, choice.provider) == (None, "none")
    assert "excerpts" in choice.detail


async def test_auto_picks_gemini_when_a_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "a-key")
    choice = build_model(_settings(local_url="http://127.0.0.1:9/v1", model="gemini-2.5-flash"))
    assert isinstance(choice.model, GeminiModel) and choice.provider == "gemini"
    assert choice.detail == "Gemini gemini-2.5-flash"
    await choice.model.aclose()


async def test_auto_without_a_key_picks_the_openai_endpoint() -> None:
    choice = build_model(_settings(local_url="http://127.0.0.1:9/v1"))
    assert isinstance(choice.model, OpenAICompatModel) and choice.provider == "openai"
    assert choice.detail == "endpoint http://127.0.0.1:9/v1"
    await choice.model.aclose()


def test_a_named_provider_without_its_setting_is_none_naming_the_variable() -> None:
    assert build_model(_settings(provider="gemini")).detail == "GEMINI_API_KEY is not set"
    assert build_model(_settings(provider="openai")).detail == "SEXTANT_LOCAL_URL is not set"


def test_a_local_model_that_cannot_load_is_none_with_the_reason(tmp_path: Path) -> None:
    # auto, with neither a key nor an endpoint, falls to the local model; its file is missing here.
    choice = build_model(_settings(models_dir=tmp_path, local_model="smollm2-135m-instruct"))
    assert (choice.model, choice.provider) == (None, "local")
    assert "sextant-models fetch smollm2-135m-instruct" in choice.detail


def test_the_local_model_is_checked_by_the_named_checker(smollm2: Path) -> None:
    choice = build_model(
        _settings(models_dir=smollm2.parent, local_model=TEST_MODEL, answer_check=TEST_MODEL, threads=1)
    )
    assert choice.model is not None and choice.checker is not None
    # The checker's file is the writer's: it reads with the weights already loaded.
    assert choice.detail == f"llama.cpp {TEST_MODEL}; answers checked by {TEST_MODEL} (the writer's loaded weights)"
    asyncio.run(choice.aclose())


def test_a_checker_whose_file_is_missing_leaves_answers_unchecked_and_says_how_to_fetch_it(
    smollm2: Path, tmp_path: Path
) -> None:
    # auto's checker is the 1.5B model, which this folder does not hold.
    (tmp_path / smollm2.name).symlink_to(smollm2)
    choice = build_model(_settings(models_dir=tmp_path, local_model=str(tmp_path / smollm2.name), threads=1))
    assert choice.model is not None and choice.checker is None
    assert "answers not checked" in choice.detail and f"sextant-models fetch {CHECKER}" in choice.detail
    asyncio.run(choice.aclose())


def test_off_asks_no_checker(smollm2: Path) -> None:
    choice = build_model(_settings(models_dir=smollm2.parent, local_model=TEST_MODEL, answer_check="off", threads=1))
    assert choice.checker is None and choice.detail.endswith("answers not checked (SEXTANT_ANSWER_CHECK=off)")
    asyncio.run(choice.aclose())


def test_the_checker_model_is_the_larger_one_by_default_a_named_one_or_none() -> None:
    # The writer's choice (writer_choice.writer) is told this name, so that auto knows what the check loads.
    assert checker_model(_settings()) == CHECKER
    assert checker_model(_settings(answer_check=TEST_MODEL)) == TEST_MODEL
    assert checker_model(_settings(answer_check="off")) is None
