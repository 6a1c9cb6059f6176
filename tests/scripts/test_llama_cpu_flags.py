"""scripts/llama_cpu_flags.py: llama.cpp is built without AMX where the CPU lists it but a program using it faults."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.scripts.script_module import load_script

flags = load_script(Path(__file__).resolve().parents[2] / "scripts" / "llama_cpu_flags.py")

WITH_AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile amx_int8\n\nprocessor\t: 1\n"
WITHOUT_AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f\n"


def test_amx_is_read_from_the_flags_line() -> None:
    assert flags.lists_amx(WITH_AMX)
    assert not flags.lists_amx(WITHOUT_AMX)
    assert not flags.lists_amx("model name\t: a CPU named amx_tile\n")
    assert not flags.lists_amx("")


def test_the_build_changes_only_where_amx_is_listed_and_faults() -> None:
    assert flags.cmake_arguments(WITHOUT_AMX, amx_works=False) == []
    assert flags.cmake_arguments(WITH_AMX, amx_works=True) == []
    arguments = shlex.split(" ".join(flags.cmake_arguments(WITH_AMX, amx_works=False)))
    # CMAKE_ARGS is split as a shell would: each flag variable arrives whole.
    assert arguments == [f"-DCMAKE_C_FLAGS={flags.NO_AMX}", f"-DCMAKE_CXX_FLAGS={flags.NO_AMX}"]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc, which builds llama.cpp")
def test_the_flags_beat_march_native_whatever_their_order() -> None:
    # llama.cpp puts -march=native after CMAKE_C_FLAGS; GCC keeps an ISA the command line turned off explicitly.
    # -march=sapphirerapids stands for a native CPU with AMX on any machine.
    defined = subprocess.run(
        ["gcc", *flags.NO_AMX.split(), "-march=sapphirerapids", "-dM", "-E", "-"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "__AVX512VNNI__" in defined
    assert "__AMX_TILE__" not in defined and "__AMX_INT8__" not in defined and "__AMX_BF16__" not in defined


def test_a_probe_that_cannot_be_built_counts_as_amx_not_running() -> None:
    assert flags.amx_runs(compiler="no-such-compiler") is False
