"""The model's settings: read by sextant-ingest without the agent server's, and extended by the agent's."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from sextant.agent.settings import AgentSettings
from sextant.llm.settings import ModelSettings, load_model_settings

REPO = Path(__file__).resolve().parents[2]


def test_a_bad_agent_server_variable_does_not_stop_a_command_that_reads_only_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEXTANT_PORT", "not a port")
    monkeypatch.setenv("SEXTANT_OVERVIEWS", "on")
    assert load_model_settings("sextant-ingest").overviews == "on"
    with pytest.raises(ValidationError, match="port"):
        AgentSettings(_env_file=None)


def test_a_bad_model_variable_exits_naming_it_and_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_LOCAL_URL", "127.0.0.1:8080/v1")
    with pytest.raises(SystemExit) as exc:
        load_model_settings("sextant-ingest")
    assert exc.value.code == 2
    assert (
        "sextant-ingest: SEXTANT_LOCAL_URL: Value error, must start with http:// or https://" in capsys.readouterr().err
    )


def test_the_models_folder_defaults_to_the_checkout_and_follows_the_setting(tmp_path: Path) -> None:
    assert ModelSettings(_env_file=None).model_files_dir() == REPO / "models"
    assert ModelSettings(_env_file=None, models_dir=tmp_path).model_files_dir() == tmp_path
