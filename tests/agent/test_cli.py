"""``sextant-agent``: the settings and flags it serves with, and a bad setting refused by name before anything
starts. The network server itself (uvicorn) is replaced: these tests check what it is handed."""

from __future__ import annotations

from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from sextant.agent import cli


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each ``uvicorn.run`` was asked to serve, instead of serving it."""
    runs: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: runs.append({"app": app, **options}))
    return runs


def test_the_agent_serves_on_the_configured_address(
    served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEXTANT_HOST", "0.0.0.0")
    monkeypatch.setenv("SEXTANT_PORT", "8123")
    cli.main([])
    [run] = served
    assert (run["host"], run["port"]) == ("0.0.0.0", 8123)
    assert isinstance(run["app"], FastAPI) and run["app"].title == "Sextant agent"
    assert run["log_config"] is None  # the agent's own log format, request ids included


def test_flags_override_the_settings(served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_PORT", "8123")
    cli.main(["--host", "127.0.0.2", "--port", "9000"])
    assert (served[0]["host"], served[0]["port"]) == ("127.0.0.2", 9000)


def test_a_bad_setting_exits_naming_the_variable_before_anything_is_served(
    served: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_PORT", "eighty")
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("sextant-agent: SEXTANT_PORT: ")
    assert served == []
