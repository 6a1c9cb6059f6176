"""scripts/build_progress.py: a verbose build's output becomes a line of progress every few seconds."""

from __future__ import annotations

import io
import itertools
import sys
from pathlib import Path

import pytest

from tests.scripts.script_module import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_progress.py"


build_progress = load_script(SCRIPT)


def test_before_the_first_compile_it_says_the_build_is_being_prepared() -> None:
    assert build_progress.progress_line("llama.cpp", 0, 0, 75, 0) == "llama.cpp: preparing the build (1:15)"


def test_it_counts_files_and_estimates_the_rest_at_the_pace_so_far() -> None:
    # 20 of 80 in 60 s of compiling: 60 more files at that pace is 3 minutes.
    line = build_progress.progress_line("llama.cpp", 20, 80, 90, 60)
    assert line == "llama.cpp: 20 of 80 files compiled (1:30), about 3 min left"


def test_no_estimate_before_a_tenth_is_done_nor_once_all_are() -> None:
    assert "left" not in build_progress.progress_line("x", 5, 80, 30, 20)
    assert "left" not in build_progress.progress_line("x", 80, 80, 300, 280)


def test_ninja_steps_are_read_from_pip_s_indented_verbose_output(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = itertools.count(0.0, 10.0)
    monkeypatch.setattr(build_progress.time, "monotonic", lambda: next(clock))
    build = b"".join(
        [b"  -- Configuring done\n"]
        + [f"  [{n}/4] /usr/bin/c++ -c file{n}.cpp\n".encode() for n in range(1, 5)]
        + [b"  *** Created llama_cpp_python.whl\n"]
    )
    log = io.BytesIO()
    said = io.StringIO()
    monkeypatch.setattr(sys, "stdout", said)
    build_progress.follow(io.BytesIO(build), log, "llama.cpp", every=5)
    assert log.getvalue() == build  # the whole output is kept for when the build fails
    lines = said.getvalue().splitlines()
    assert lines[0].startswith("llama.cpp: preparing the build")
    assert "llama.cpp: 4 of 4 files compiled" in lines[-1]  # said once more when the output ends
    assert any(" of 4 files compiled" in line for line in lines[1:-1])


def test_the_last_count_is_said_when_the_output_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    said = io.StringIO()
    monkeypatch.setattr(sys, "stdout", said)
    build = b"  [1/2] cc a.c\n  [2/2] ld liba.so\n"
    build_progress.follow(io.BytesIO(build), io.BytesIO(), "llama.cpp", every=3600)
    lines = said.getvalue().splitlines()
    assert len(lines) == 1  # nothing periodic within the hour, only the closing count
    assert lines[0].startswith("llama.cpp: 2 of 2 files compiled (0:")


def test_a_build_that_compiles_nothing_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    said = io.StringIO()
    monkeypatch.setattr(sys, "stdout", said)
    reused = b"  Using cached llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl\n"
    build_progress.follow(io.BytesIO(reused), io.BytesIO(), "llama.cpp", every=3600)
    assert said.getvalue().startswith("llama.cpp: nothing to compile (0:")
