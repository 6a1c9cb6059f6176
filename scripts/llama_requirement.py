"""Print the pinned llama-cpp-python requirement of pyproject.toml's "local" extra.

scripts/setup.sh and the Dockerfile build llama.cpp on its own, ahead of everything else, and take the pin
from here so that it lives in pyproject.toml alone. Standard library only: it runs before anything is
installed.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def llama_requirement(pyproject: Path = PYPROJECT) -> str:
    extra = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]["local"]
    return next(requirement for requirement in extra if requirement.startswith("llama-cpp-python"))


if __name__ == "__main__":
    sys.stdout.write(llama_requirement() + "\n")
