#!/usr/bin/env bash
# Set up (if needed), then run every check CI runs: lint, types, the browser interface's suites, the Python
# tests, the retrieval-quality gate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports --no-logo  # the layers of pyproject.toml's [tool.importlinter]
.venv/bin/python eval/check_golden.py
bash scripts/validate_deploy.sh
# The browser interface first: its build is what start_all_services.sh serves in the Python tests.
bash scripts/test_frontend.sh
.venv/bin/python -m pytest "$@"
.venv/bin/sextant-eval --check
