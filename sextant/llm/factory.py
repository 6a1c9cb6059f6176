"""Which chat model answers, from the settings: Gemini, an OpenAI-compatible server, the local model, or none."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sextant.llm.chat import ChatModel, YesNoModel
from sextant.llm.settings import ModelSettings
from sextant.llm.writer_choice import LARGE

if TYPE_CHECKING:
    from sextant.llm.llama_local import LlamaModel

log = logging.getLogger(__name__)


# The answer check's model for the local provider (learning/agent.md, run 7): the larger of the two writers.
CHECKER = LARGE


@dataclass(frozen=True)
class ModelChoice:
    model: ChatModel | None
    provider: str
    detail: str
    # Asked whether a statement's sentences answer the question (``sextant.agent.answer_check``).
    checker: YesNoModel | None = None

    async def aclose(self) -> None:
        # The checker first: it may be reading with the model's weights.
        if self.checker is not None:
            await self.checker.aclose()
        if self.model is not None:
            await self.model.aclose()


def build_model(settings: ModelSettings) -> ModelChoice:
    """The configured model, or None with the reason (answers are then excerpts)."""
    provider = settings.provider
    if provider == "auto":
        if settings.gemini_api_key is not None:
            provider = "gemini"
        elif settings.local_url:
            provider = "openai"
        else:
            provider = "local"
    if provider == "none":
        return ModelChoice(None, "none", "SEXTANT_PROVIDER=none: answers are excerpts")
    try:
        if provider == "gemini":
            from sextant.llm.gemini import GeminiModel

            if settings.gemini_api_key is None:
                return ModelChoice(None, "gemini", "GEMINI_API_KEY is not set")
            return ModelChoice(GeminiModel.from_settings(settings), "gemini", f"Gemini {settings.model}")
        if provider == "openai":
            from sextant.llm.openai_compat import OpenAICompatModel

            if not settings.local_url:
                return ModelChoice(None, "openai", "SEXTANT_LOCAL_URL is not set")
            return ModelChoice(OpenAICompatModel.from_settings(settings), "openai", f"endpoint {settings.local_url}")
        from sextant.llm.llama_local import LlamaModel

        checks = checker_model(settings)
        local = LlamaModel.from_settings(settings, checker=checks)
        checker, checked = _checker(settings, checks, local)
        return ModelChoice(local, "local", f"llama.cpp {local.name}; {checked}", checker)
    except ImportError as exc:
        detail = f"the {provider} model needs a package that is not installed ({exc.name}); see the README"
    except Exception as exc:  # a model that cannot load must not stop the server: it answers with excerpts
        detail = f"the {provider} model could not be loaded: {exc}"
    log.warning("%s; answers will be excerpts", detail)
    return ModelChoice(None, provider, detail)


def checker_model(settings: ModelSettings) -> str | None:
    """The model the answer check loads beside the local model (a name or a .gguf path); None when it is off."""
    if settings.answer_check == "off":
        return None
    return CHECKER if settings.answer_check == "auto" else settings.answer_check


def _checker(settings: ModelSettings, name: str | None, writer: LlamaModel) -> tuple[YesNoModel | None, str]:
    """The answer check's model ``name`` and a note on it; a model that cannot load leaves answers unchecked, with a
    warning.

    A checker of the writer's own file reads with the writer's loaded weights.
    """
    if name is None:
        return None, "answers not checked (SEXTANT_ANSWER_CHECK=off)"
    from sextant.llm.llama_yes_no import LlamaYesNo

    try:
        checker = LlamaYesNo.load(name, settings.model_files_dir(), settings.threads, beside=writer.llama)
    except Exception as exc:  # a missing checker must not stop the server: answers are then unchecked
        log.warning("answers will not be checked against the question: %s", exc)
        return None, f"answers not checked ({exc})"
    shared = " (the writer's loaded weights)" if checker.shared else ""
    return checker, f"answers checked by {checker.name}{shared}"
