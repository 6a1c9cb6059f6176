#!/usr/bin/env bash
# Set up (the local model included), load the sample corpus, and ask the agent a question: the local
# model answers from the real sextant-kb process, citing page and passage. No key, nothing paid.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "quickstart: loading the sample corpus (eval/corpus/documents: 25 files, about 30 s)"
.venv/bin/sextant-ingest -r eval/corpus/documents
echo "quickstart: asking the local model (loading it takes a few seconds; an answer 5-20 s on 2 cores)"
.venv/bin/sextant-ask "${1:-How often should the espresso machine be descaled?}"
