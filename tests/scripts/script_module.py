"""Import a file of scripts/ (not a package: each runs on its own, before anything is installed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses and typing resolve names through sys.modules
    spec.loader.exec_module(module)
    return module
