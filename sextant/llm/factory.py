"""Which chat model answers, from the settings: Gemini, an OpenAI-compatible server, the local model, or none."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sextant.llm.chat import ChatModel
from sextant.llm.settings import ModelSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelChoice:
    model: ChatModel | None
    provider: str
    detail: str


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

        return ModelChoice(LlamaModel.from_settings(settings), "local", f"llama.cpp {settings.local_model}")
    except ImportError as exc:
        detail = f"the {provider} model needs a package that is not installed ({exc.name}); see the README"
    except Exception as exc:  # a model that cannot load must not stop the server: it answers with excerpts
        detail = f"the {provider} model could not be loaded: {exc}"
    log.warning("%s; answers will be excerpts", detail)
    return ModelChoice(None, provider, detail)
