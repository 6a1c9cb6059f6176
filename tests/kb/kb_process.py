"""How tests start the real ``sextant-kb`` process: the installed script, and an environment of its own."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def server_command() -> str:
    """The ``sextant-kb`` installed beside this Python."""
    return tool_command("sextant-kb")


def tool_command(name: str) -> str:
    """A command of the distribution (``sextant-ingest``, ``sextant-forget``, …) installed beside this Python."""
    script = shutil.which(name, path=str(Path(sys.executable).parent))
    assert script, f"{name} is not installed in this environment: pip install -e '.[dev]'"
    return script


def server_environment(home: Path, *, log_level: str = "WARNING") -> dict[str, str]:
    """Nothing from the caller's environment but PATH: a store under ``home``, no model hub."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "SEXTANT_CHROMA_DIR": str(home / "store"),
        "SEXTANT_LOG_LEVEL": log_level,
    }
