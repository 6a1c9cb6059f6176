"""Print the CMake arguments that keep llama.cpp's build off CPU features this machine lists but cannot run.

llama.cpp compiles with ``-march=native``, which turns on its AMX kernels wherever the CPU lists AMX. A virtual
machine can list AMX and still fault on the first tile instruction: on a Firecracker guest of a Sapphire Rapids
host every model crashed in ``ggml_backend_amx_mul_mat`` (``ldtilecfg``: general protection fault) although
the kernel granted the permission. So where AMX is listed, a few lines of C that ask for it and use one tile
are compiled and run first; if they fail, the build gets ``-mno-amx-*``, which GCC honours whatever
``-march`` says. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

# Ask Linux for the tile data state, configure one 16-row tile, zero it, release it.
AMX_PROBE = r"""
#include <immintrin.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
    unsigned char config[64];
    if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) != 0) return 2;
    memset(config, 0, sizeof config);
    config[0] = 1;    /* palette */
    config[16] = 64;  /* bytes per row of tile 0 */
    config[48] = 16;  /* rows of tile 0 */
    _tile_loadconfig(config);
    _tile_zero(0);
    _tile_release();
    return 0;
}
"""


def lists_amx(cpuinfo: str) -> bool:
    """Whether the first processor's flags name AMX."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return "amx_tile" in line.split(":", 1)[1].split()
    return False


def amx_runs(compiler: str = "gcc") -> bool:
    """Whether a program using one AMX tile compiles and exits cleanly here."""
    with tempfile.TemporaryDirectory() as folder:
        source, program = Path(folder) / "amx.c", Path(folder) / "amx"
        source.write_text(AMX_PROBE, encoding="utf-8")
        try:
            subprocess.run(
                [compiler, "-O1", "-mamx-tile", str(source), "-o", str(program)], check=True, capture_output=True
            )
            return subprocess.run([str(program)], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False


def cmake_arguments(cpuinfo: str, amx_works: bool) -> list[str]:
    """Arguments for CMAKE_ARGS: none where nothing listed needs turning off."""
    if not lists_amx(cpuinfo) or amx_works:
        return []
    return [f"-DCMAKE_C_FLAGS='{NO_AMX}'", f"-DCMAKE_CXX_FLAGS='{NO_AMX}'"]


def main() -> None:
    cpuinfo = CPUINFO.read_text(encoding="utf-8") if CPUINFO.exists() else ""
    arguments = cmake_arguments(cpuinfo, lists_amx(cpuinfo) and amx_runs())
    sys.stdout.write(" ".join(arguments) + "\n")


if __name__ == "__main__":
    main()
