"""The settings that choose and tune the chat model, read by the agent server and by ``sextant-ingest``.

``AgentSettings`` extends this class, so each variable is declared once; the knowledge base's CLI reads only
this part, and a bad agent-only variable (a port, a CORS origin) cannot stop an ingest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator

from sextant.settings import SharedSettings, default_data_path, http_url, load_from_environment

Provider = Literal["auto", "gemini", "local", "openai", "none"]


class ModelSettings(SharedSettings):
    """Which model answers and how: provider, model names and endpoints, token limits, local model files."""

    provider: Provider = Field(
        default="auto",
        description="Which model answers: auto picks gemini when GEMINI_API_KEY is set, else openai when "
        "SEXTANT_LOCAL_URL is set, else local when the local model file is present, else none (excerpts).",
    )
    model: str = Field(default="gemini-3.1-flash-lite", description="Gemini model name.")
    gemini_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GEMINI_API_KEY", "SEXTANT_GEMINI_API_KEY"),
        description="Gemini API key (read from GEMINI_API_KEY).",
    )
    gemini_url: str | None = Field(
        default=None, description="Base URL of the Gemini API, for a proxy or a local server speaking its protocol."
    )
    thinking_budget: int = Field(
        default=512, ge=0, le=24576, description="Tokens Gemini may spend thinking, on top of the answer's tokens."
    )
    max_output_tokens: int = Field(default=1024, ge=64, le=8192, description="Most tokens in one model turn.")
    local_model: str = Field(
        default="auto",
        description="Local GGUF model that writes the answers: auto (qwen2.5-coder-1.5b-instruct with 2 threads, its "
        "file fetched, and the answer check loading it anyway or at least 8 GiB of memory, else "
        "qwen2.5-coder-0.5b-instruct; learning/agent.md, runs 12 and 15), a "
        "name known to sextant-models, or a path to a .gguf file. With SEXTANT_LOCAL_URL it is the model name the "
        "server is asked for, and auto takes the first model the server lists.",
    )
    answer_check: str = Field(
        default="auto",
        description="With the local model, a second local model reads each statement's sentences and the question "
        "and says whether they answer it; statements it says no to are removed. auto: qwen2.5-coder-1.5b-instruct "
        "(sextant-models fetch qwen2.5-coder-1.5b-instruct; without its file answers are unchecked, with a warning); "
        "off; or a model name or .gguf path (learning/agent.md, run 7).",
    )
    local_url: str | None = Field(
        default=None,
        description="OpenAI-compatible chat endpoint (llama.cpp server, Ollama, vLLM), e.g. http://127.0.0.1:8080/v1.",
    )
    models_dir: Path | None = Field(
        default=None,
        description="Folder of local model files. Default: <repo>/models in a checkout, else the user-data folder.",
    )
    overviews: Literal["on", "off"] = Field(
        default="off",
        description="on: when a model is configured, /ingest, /upload and sextant-ingest have it write one overview "
        "per new or changed document, stored as a searchable passage. Off by default: learning/overviews.md.",
    )

    @field_validator("local_url", "gemini_url")
    @classmethod
    def _url_has_scheme(cls, value: str | None) -> str | None:
        # load_from_environment names the variable before the message.
        return http_url(value, "must start with http:// or https://")

    @field_validator("gemini_api_key", mode="before")
    @classmethod
    def _blank_key_is_no_key(cls, value: object) -> object:
        # Compose passes an unset GEMINI_API_KEY as "": with "auto" that must pick the local model, not Gemini.
        return None if isinstance(value, str) and not value.strip() else value

    def model_files_dir(self) -> Path:
        if self.models_dir is not None:
            return self.models_dir.expanduser()
        return default_data_path("models")


def load_model_settings(program: str) -> ModelSettings:
    return load_from_environment(ModelSettings, program)
