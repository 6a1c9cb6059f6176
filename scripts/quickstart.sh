#!/usr/bin/env bash
# Set up, load the sample corpus into the knowledge base, and ask it a question over MCP.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/sextant-ingest -r eval/corpus/documents
.venv/bin/python scripts/ask.py "${1:-How often should the espresso machine be descaled?}"
