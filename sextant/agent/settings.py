"""Every setting of the agent server, validated once at start-up (the knowledge base has its own class).

The model's settings are ``ModelSettings``'s (``sextant.llm.settings``), which this class extends; threads and
logging are ``SharedSettings``'s, which the knowledge base's class extends too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from sextant.llm.settings import ModelSettings
from sextant.settings import default_data_path, load_from_environment


class AgentSettings(ModelSettings):
    """Settings of ``sextant-agent``; the knowledge-base subprocess reads its own from the same environment."""

    web_search: Literal["on", "off"] = Field(
        default="off", description="Let Gemini ground answers in Google Search as a second tier after the documents."
    )
    verify: Literal["mark", "drop", "off"] = Field(
        default="off",
        description="After the quote check, a second model pass judges each statement against its passages: mark "
        "or drop the unsupported ones. Off by default: it fired 0 times in 38 checks (learning/agent.md).",
    )
    quotes: Literal["exact", "facts"] = Field(
        default="facts",
        description="How a statement's quote must stand in its passage: exact (after normalising case, spacing, "
        "dashes and hyphenated line breaks), or facts: failing that, one sentence of a passage shown must hold "
        "every word the statement adds to the question (learning/agent.md).",
    )
    unsupported: Literal["drop", "mark"] = Field(
        default="drop",
        description="A statement none of whose quotes stands in the passage it names: drop it, or keep it marked "
        "'not found in the passages' (learning/agent.md).",
    )
    host: str = Field(default="127.0.0.1", description="Address the agent server binds to.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port of the agent server.")
    allowed_origins: str = Field(
        default="http://localhost:3000,http://127.0.0.1:3000,http://localhost:5173,http://127.0.0.1:5173",
        description="Comma-separated browser origins allowed by CORS.",
    )
    rate_limit: int = Field(default=20, ge=1, description="Requests per client per window on query, ingest, upload.")
    rate_window: int = Field(default=60, ge=1, description="Rate-limit window in seconds.")
    daily_budget_usd: float = Field(
        default=0.0,
        ge=0,
        description="Cap on a paid model's spend (Gemini) per UTC day; once spent, queries get 429. 0: no cap. "
        "Never applied to a model that costs nothing (local, OpenAI-compatible).",
    )
    lab_results: Path | None = Field(
        default=None,
        description="The Index Lab's benchmark JSON (written by sextant-lab bench) shown on the UI's Index Lab "
        "page. Default: learning/ann-lab.json in a checkout, else the user-data folder.",
    )
    proxy_secret: SecretStr | None = Field(
        default=None,
        description="When set, every request but /health must carry it in X-Sextant-Proxy-Secret (the reverse "
        "proxy adds it), so the port cannot be used around the proxy's TLS and authentication.",
    )
    workspaces: Literal["on", "off"] = Field(
        default="off",
        description="on: every caller first creates an anonymous, private workspace (POST /workspaces) and sends its "
        "bearer token; workspaces expire after SEXTANT_WORKSPACE_TTL. off: one shared store, for one person.",
    )
    workspace_ttl: int = Field(
        default=3600, ge=60, le=30 * 86400, description="Seconds a workspace lives before it and its documents go."
    )
    max_workspaces: int = Field(default=100, ge=1, description="Most workspaces alive at once.")
    workspace_documents: int = Field(default=20, ge=1, description="Most documents in one workspace.")
    workspace_questions: int = Field(default=100, ge=1, description="Most questions one workspace may ask.")
    daily_questions: int = Field(
        default=2000, ge=1, description="Most questions per UTC day, all workspaces together (workspaces on)."
    )
    daily_uploads: int = Field(
        default=500, ge=1, description="Most files uploaded per UTC day, all workspaces together (workspaces on)."
    )
    state_dir: Path | None = Field(
        default=None,
        description="Folder of the agent's own records (today's spend, the workspace book). Default: <repo>/agent in "
        "a checkout, else the user-data folder.",
    )
    kb_command: str | None = Field(
        default=None,
        description="Command that starts the knowledge-base MCP server. Default: the sextant-kb installed "
        "beside this Python.",
    )

    @field_validator("proxy_secret", mode="before")
    @classmethod
    def _secret_is_long_or_unset(cls, value: object) -> object:
        # Compose passes an unset variable as ""; that means no proxy, not an empty secret.
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, str) and len(value) < 16:
            raise ValueError("must be at least 16 characters (e.g. `openssl rand -hex 24`)")
        return value

    def origins(self) -> list[str]:
        return [o.strip() for o in self.allowed_origins.split(",") if o.strip()]

    def lab_results_path(self) -> Path:
        return self.lab_results.expanduser() if self.lab_results else default_data_path("learning") / "ann-lab.json"


def load_agent_settings() -> AgentSettings:
    return load_from_environment(AgentSettings, "sextant-agent")
