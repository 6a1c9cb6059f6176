"""Command-line tools from npm that the tests run, each pinned by a package.json and lock file of its own folder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def npm_tool(folder: Path, name: str) -> Path:
    """``folder``'s ``node_modules/.bin/<name>``, installed from its lock file (``npm ci``) on the first use."""
    command = folder / "node_modules" / ".bin" / name
    if not command.exists():
        npm = shutil.which("npm")
        assert npm, f"npm (Node's package manager) is needed to install {name} into {folder}"
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, capture_output=True, timeout=600)
    return command
