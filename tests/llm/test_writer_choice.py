"""``SEXTANT_LOCAL_MODEL=auto``: the 1.5B model writes where threads and its file allow, and memory unless the
answer check loads it anyway; else the 0.5B."""

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
    assert choose_writer("my.gguf", 1, 1 * GIB, tmp_path, checked_by_large=False).model == "my.gguf"


def test_auto_takes_the_larger_model_where_the_machine_can_hold_it(fetched: Path) -> None:
    chosen = choose_writer("auto", 2, 16 * GIB, fetched, checked_by_large=False)
    assert chosen.model == LARGE
    assert chosen.reason == "auto: 2 threads and 16 GiB"


def test_memory_does_not_stop_the_larger_model_that_the_answer_check_loads_anyway(fetched: Path) -> None:
    # The check reads with the writer's weights: the 0.5B writer beside it would take more, not less.
    chosen = choose_writer("auto", 2, 4 * GIB, fetched, checked_by_large=True)
    assert (chosen.model, chosen.reason) == (LARGE, "auto: 2 threads, and the answer check loads it anyway")
    assert choose_writer("auto", 1, 4 * GIB, fetched, checked_by_large=True).model == SMALL  # threads still count


@pytest.mark.parametrize(
    ("threads", "memory", "why"),
    [(2, 6 * GIB, "6.0 GiB of memory, under 8"), (1, 16 * GIB, "SEXTANT_THREADS=1, under 2")],
)
def test_auto_takes_the_smaller_model_on_a_small_machine(fetched: Path, threads: int, memory: int, why: str) -> None:
    chosen = choose_writer("auto", threads, memory, fetched, checked_by_large=False)
    assert (chosen.model, chosen.reason) == (SMALL, f"auto: {why}")


def test_auto_without_the_larger_file_says_how_to_fetch_it(tmp_path: Path) -> None:
    chosen = choose_writer("auto", 4, 32 * GIB, tmp_path, checked_by_large=True)
    assert chosen.model == SMALL
    assert f"sextant-models fetch {LARGE}" in chosen.reason


def test_unknown_memory_does_not_stop_the_larger_model(fetched: Path) -> None:
    assert choose_writer("auto", 2, None, fetched, checked_by_large=False).model == LARGE


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


def test_the_writer_alone_or_beside_another_checker_is_held_to_the_memory_rule(
    fetched: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_choice, "machine_memory", lambda: 4 * GIB)
    settings = ModelSettings(models_dir=fetched, threads=2, _env_file=None)
    assert writer(settings, LARGE).model == LARGE  # the agent: its check loads the 1.5B model
    assert writer(settings).model == SMALL  # sextant-adapt's questions, or the check off: the writer alone
    assert writer(settings, SMALL).model == SMALL
