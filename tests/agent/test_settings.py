"""The agent's settings as Compose and shells hand them over: an unset variable often arrives as ""."""

from __future__ import annotations

import pytest

from sextant.agent.settings import AgentSettings


def settings() -> AgentSettings:
    return AgentSettings(_env_file=None)  # type: ignore[call-arg]


def test_a_blank_gemini_key_is_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # docker-compose.yml passes GEMINI_API_KEY="" when none is set; "auto" must then take the local model.
    monkeypatch.setenv("GEMINI_API_KEY", "  ")
    assert settings().gemini_api_key is None
    monkeypatch.setenv("GEMINI_API_KEY", "a-key")
    key = settings().gemini_api_key
    assert key is not None and key.get_secret_value() == "a-key"


def test_a_blank_proxy_secret_is_no_proxy_and_a_short_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_PROXY_SECRET", "")
    assert settings().proxy_secret is None
    monkeypatch.setenv("SEXTANT_PROXY_SECRET", "short")
    with pytest.raises(ValueError, match="at least 16 characters"):
        settings()
