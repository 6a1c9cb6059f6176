"""``SEXTANT_LOCAL_MODEL=auto``: the 1.5B model writes where memory, threads and its file allow, else the 0.5B."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sextant.llm import writer_choice
from sextant.llm.model_files import KNOWN_MODELS
from sextant.llm.settings import ModelSettings
from sextant.llm.writer_choice import LARGE, SMALL, choose_writer, machine_memory, writer

GIB = 2**30


@pytest.fixture
def fetched(tmp_path: Path) -> Path:
    (tmp_path / KNOWN_MODELS[LARGE].file_name).write_bytes(b"")
    return tmp_path


def test_a_named_model_is_taken_as_given(tmp_path: Path) -> None:
    assert choose_writer("my.gguf", 1, 1 * GIB, tmp_path).model == "my.gguf"


def test_auto_takes_the_larger_model_where_the_machine_can_hold_it(fetched: Path) -> None:
    chosen = choose_writer("auto", 2, 16 * GIB, fetched)
    assert chosen.model == LARGE
    assert chosen.reason == "auto: 2 threads and 16 GiB"


@pytest.mark.parametrize(
    ("threads", "memory", "why"),
    [(2, 6 * GIB, "6.0 GiB of memory, under 8"), (1, 16 * GIB, "SEXTANT_THREADS=1, under 2")],
)
def test_auto_takes_the_smaller_model_on_a_small_machine(fetched: Path, threads: int, memory: int, why: str) -> None:
    chosen = choose_writer("auto", threads, memory, fetched)
    assert (chosen.model, chosen.reason) == (SMALL, f"auto: {why}")


def test_auto_without_the_larger_file_says_how_to_fetch_it(tmp_path: Path) -> None:
    chosen = choose_writer("auto", 4, 32 * GIB, tmp_path)
    assert chosen.model == SMALL
    assert f"sextant-models fetch {LARGE}" in chosen.reason


def test_unknown_memory_does_not_stop_the_larger_model(fetched: Path) -> None:
    assert choose_writer("auto", 2, None, fetched).model == LARGE


def test_a_container_s_memory_limit_is_the_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = tmp_path / "memory.max"
    monkeypatch.setattr(writer_choice, "_CGROUP_LIMIT", limit)
    limit.write_text("4294967296\n")
    assert machine_memory() == 4 * GIB
    limit.write_text("max\n")
    assert machine_memory() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_the_settings_default_is_auto(fetched: Path) -> None:
    settings = ModelSettings(models_dir=fetched, threads=1, _env_file=None)
    assert settings.local_model == "auto"
    assert writer(settings).model == SMALL
