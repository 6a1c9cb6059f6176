"""Which packaged model writes the answers when ``SEXTANT_LOCAL_MODEL=auto``: the machine decides.

On all 121 golden questions, both checked by the same answer check, the 1.5B model's answers stood on the
labelled sentence 71 times in 105 against the 0.5B model's 62, and on a wrong one 9 times against 17, at 1.7-1.9x
the seconds per answer (learning/agent.md, run 12). Better answers are worth the wait where a prompt is read on
two threads. Memory decides only where the answer check does not load the 1.5B model anyway: since the check
reads with the writer's weights, the 1.5B model writing and checking takes less memory than the 0.5B model
writing beside it (2.12 against 2.54 GB proportional, run 15).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sextant.llm.model_files import ModelFileError, resolve
from sextant.llm.settings import ModelSettings

SMALL = "qwen2.5-coder-0.5b-instruct"
LARGE = "qwen2.5-coder-1.5b-instruct"
# Where the 1.5B model would be loaded for writing alone (the answer check off, or another model): it takes
# 3.0 GB at its peak against the 0.5B model's 1.7 GB (learning/agent.md, run 3), and the knowledge base, the
# browser and the system need the rest.
LARGE_NEEDS_MEMORY = 8 * 2**30
# One thread made the 1.5B model's answer 1.43x slower again: 26 s against the 0.5B model's 14.5 s on a slow box.
LARGE_NEEDS_THREADS = 2
_CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")


@dataclass(frozen=True, slots=True)
class WriterChoice:
    model: str  # what ``load_gguf`` resolves: a known name or a .gguf path
    reason: str


def writer(settings: ModelSettings, checker: str | None = None) -> WriterChoice:
    """The model ``settings`` name, ``auto`` resolved on this machine; ``checker``: the answer check's model, if any."""
    return choose_writer(
        settings.local_model,
        settings.threads,
        machine_memory(),
        settings.model_files_dir(),
        checked_by_large=checker == LARGE,
    )


def choose_writer(
    setting: str, threads: int, memory: int | None, models_dir: Path, *, checked_by_large: bool
) -> WriterChoice:
    """``setting`` itself unless it is ``auto``; then the 1.5B model where threads and its file allow, and memory
    too unless ``checked_by_large`` (the answer check loads the 1.5B model anyway)."""
    if setting != "auto":
        return WriterChoice(setting, "SEXTANT_LOCAL_MODEL")
    if not checked_by_large and memory is not None and memory < LARGE_NEEDS_MEMORY:
        return WriterChoice(SMALL, f"auto: {memory / 2**30:.1f} GiB of memory, under {LARGE_NEEDS_MEMORY // 2**30}")
    if threads < LARGE_NEEDS_THREADS:
        return WriterChoice(SMALL, f"auto: SEXTANT_THREADS={threads}, under {LARGE_NEEDS_THREADS}")
    try:
        resolve(LARGE, models_dir)
    except ModelFileError:
        return WriterChoice(SMALL, f"auto: {LARGE} is not fetched (sextant-models fetch {LARGE})")
    if checked_by_large:
        return WriterChoice(LARGE, f"auto: {threads} threads, and the answer check loads it anyway")
    return WriterChoice(LARGE, f"auto: {threads} threads and {'?' if memory is None else round(memory / 2**30)} GiB")


def machine_memory() -> int | None:
    """The memory this process may use: the machine's, or a container's cgroup limit when that is lower."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None
    try:
        limit = _CGROUP_LIMIT.read_text().strip()
    except OSError:
        return memory
    return min(memory, int(limit)) if limit.isdigit() else memory
