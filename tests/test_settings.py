from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from sextant.agent.settings import AgentSettings
from sextant.llm.settings import ModelSettings
from sextant.settings import KbSettings, SharedSettings, load_settings, report_legacy_variables

REPO = Path(__file__).resolve().parent.parent


def test_defaults_are_the_documented_ones() -> None:
    s = KbSettings(_env_file=None)  # type: ignore[call-arg]
    assert (s.chunk_tokens, s.embedder, s.max_per_document, s.reranker) == (200, "all-MiniLM-L6-v2", 2, None)
    assert s.store_dir() == REPO / "chroma_db"  # a source checkout keeps its store beside the code


def test_the_dense_weight_defaults_to_its_fusions_own(monkeypatch: pytest.MonkeyPatch) -> None:
    assert KbSettings(_env_file=None).fusion_weights() == (1.0, 1.0)  # type: ignore[call-arg]
    monkeypatch.setenv("SEXTANT_FUSION", "scores")
    assert KbSettings(_env_file=None).fusion_weights() == (1.5, 1.0)  # type: ignore[call-arg]
    monkeypatch.setenv("SEXTANT_DENSE_WEIGHT", "5")
    assert KbSettings(_env_file=None).fusion_weights() == (5.0, 1.0)  # type: ignore[call-arg]


def test_variables_are_read_with_the_sextant_prefix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", str(tmp_path))
    monkeypatch.setenv("SEXTANT_CHUNK_TOKENS", "128")
    monkeypatch.setenv("SEXTANT_RERANKER", "off")
    s = KbSettings(_env_file=None)  # type: ignore[call-arg]
    assert (s.store_dir(), s.chunk_tokens, s.reranker) == (tmp_path, 128, None)


def test_a_bad_value_exits_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_CHUNK_TOKENS", "lots")
    with pytest.raises(SystemExit) as exc:
        load_settings()
    assert exc.value.code == 2
    assert "SEXTANT_CHUNK_TOKENS" in capsys.readouterr().err


def test_a_blank_store_folder_is_the_default_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_CHROMA_DIR", "  ")
    settings = KbSettings(_env_file=None)  # type: ignore[call-arg]
    assert settings.chroma_dir is None and settings.store_dir().name == "chroma_db"  # not the working directory


def test_chroma_url_needs_a_scheme() -> None:
    with pytest.raises(ValidationError, match="SEXTANT_CHROMA_URL"):
        KbSettings(chroma_url="localhost:8000", _env_file=None)  # type: ignore[call-arg]


def test_leftover_agenticrag_variables_are_reported_with_their_new_name(capsys: pytest.CaptureFixture[str]) -> None:
    messages = report_legacy_variables({"AGENTICRAG_CHUNK_TOKENS": "100", "PATH": "/bin"})
    assert messages == ["AGENTICRAG_CHUNK_TOKENS is no longer read; rename it to SEXTANT_CHUNK_TOKENS"]
    assert "SEXTANT_CHUNK_TOKENS" in capsys.readouterr().err


def test_every_setting_is_documented_on_the_settings_page() -> None:
    page = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    # A setting is documented where it heads a row of the page's tables: `| `SEXTANT_X` | default | meaning |`.
    documented = {
        name
        for line in page.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`(\w+)`", line.split("|")[1])
    }
    names = {f"SEXTANT_{name.upper()}" for cls in (KbSettings, AgentSettings) for name in cls.model_fields}
    names = (names - {"SEXTANT_GEMINI_API_KEY"}) | {"GEMINI_API_KEY"}
    missing = sorted(names - documented)
    assert not missing, f"settings without a row in docs/settings.md: {missing}"
    stale = sorted(documented - names)
    assert not stale, f"docs/settings.md has rows for settings that no longer exist: {stale}"


def test_each_variable_is_declared_by_one_class_only() -> None:
    # Threads and logging are SharedSettings', which the knowledge base's and the model's classes extend; the
    # agent's extends the model's. A second declaration would be a second default and a second description.
    owner: dict[str, str] = {}
    twice = []
    for cls in (SharedSettings, KbSettings, ModelSettings, AgentSettings):
        for name in vars(cls).get("__annotations__", {}):
            if name in owner:
                twice.append(f"{name} ({owner[name]} and {cls.__name__})")
            owner[name] = cls.__name__
    assert not twice, f"settings declared twice: {twice}"
    assert set(owner) == set(KbSettings.model_fields) | set(AgentSettings.model_fields)


def test_an_installed_copy_keeps_its_store_in_the_user_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    from sextant import settings as settings_module

    monkeypatch.setattr(settings_module, "_checkout_root", lambda: None)
    store = KbSettings(_env_file=None).store_dir()  # type: ignore[call-arg]
    assert store == Path(platformdirs.user_data_dir("sextant", appauthor=False)) / "chroma_db"
