"""``sextant-models``: list shows each known model's state, fetch refuses unknown names and skips a verified file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sextant.llm.model_files import KNOWN_MODELS
from sextant.llm.model_files_cli import main


def test_list_shows_absent_verified_and_mismatched_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    smol = KNOWN_MODELS["smollm2-135m-instruct"]
    (tmp_path / smol.file_name).write_bytes(b"not the model")
    with pytest.raises(SystemExit) as exit_:
        main(["--models-dir", str(tmp_path), "list"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert re.search(r"qwen2.5-coder-0.5b-instruct +absent", out)
    assert re.search(r"smollm2-135m-instruct +PRESENT BUT SHA256 MISMATCH", out)


def test_fetch_refuses_an_unknown_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--models-dir", str(tmp_path), "fetch", "gpt-5"])
    assert exit_.value.code == 2
    assert "invalid choice: 'gpt-5'" in capsys.readouterr().err


def test_a_model_under_terms_of_use_is_fetched_only_once_they_are_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--models-dir", str(tmp_path), "fetch", "embeddinggemma-300m"])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert "Gemma Terms of Use" in err and "--accept-terms" in err
    assert not (tmp_path / "embeddinggemma-300m").exists()


@pytest.mark.slow
def test_fetch_skips_a_verified_file(smollm2: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--models-dir", str(smollm2.parent), "fetch", "smollm2-135m-instruct"])
    assert exit_.value.code == 0
    assert "already present and verified" in capsys.readouterr().out


def test_without_models_dir_the_folder_is_sextant_models_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_MODELS_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as exit_:
        main(["list"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"models folder: {tmp_path}\n")
