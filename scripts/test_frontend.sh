#!/usr/bin/env bash
# Build and test the browser interface, as CI does: the API schema is current, npm ci, type-check,
# lint and format (Biome, frontend/biome.jsonc), Vitest, production build, then Playwright end to end
# in Debian's Chromium against the real agent server and sextant-kb. Five e2e files, each with its
# own store and ports:
#   e2e/app.e2e.mjs          no model (SEXTANT_PROVIDER=none: answers are excerpts, which still cite),
#                            the committed corpus: ask, cite, upload a PDF, reload, Index Lab, phone width;
#   e2e/local-model.e2e.mjs  the real local model (SEXTANT_PROVIDER=local, smollm2-135m-instruct from
#                            models/, one thread, SEXTANT_VERIFY=off) over the espresso manual: a written
#                            answer, the forced kb_search in the trace, [n] opening a page-labelled passage;
#   e2e/workspaces.e2e.mjs   SEXTANT_WORKSPACES=on: two browsers get separate workspaces and never see
#                            each other's uploads; deleting one from the command palette leaves the other;
#   e2e/mcp-app.e2e.mjs      sextant-kb's MCP App in the official host bridge (ext-apps' AppBridge): the cited
#                            PDF page with the passage highlighted, inside the host page.
#   e2e/formats.e2e.mjs      no model, the committed corpus: drop a slide deck and a scanned PDF page (e2e/fixtures/),
#                            cite "Slide 3" and the OCR'd passage with its quote highlighted on the scan (skips without
#                            Tesseract's English data).
# Exits non-zero on the first failure. Needs Node 20+ and npm, and the SmolLM2 file that setup.sh
# fetches (sextant-models fetch); installs Chromium with apt if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

step() { printf '\n== %s\n' "$*"; }

[ -x .venv/bin/sextant-agent ] || bash scripts/setup.sh
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    step "installing Chromium (apt)"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

step "the committed API schema is the agent's"
.venv/bin/python frontend/scripts/openapi.py --check

cd frontend
step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "generated API types are current"
generated=$(mktemp --suffix=.d.ts)
trap 'rm -f "$generated"' EXIT
npx --no-install openapi-typescript openapi.json -o "$generated" >/dev/null 2>&1
if ! cmp -s "$generated" src/api/schema.d.ts; then
    echo "frontend/src/api/schema.d.ts is stale: run 'npm run gen:api' in frontend/" >&2
    exit 1
fi

step "type-check"
npm run --silent typecheck

step "lint and format (Biome)"
npm run --silent lint

step "unit tests (Vitest)"
npm test --silent

step "build"
npm run --silent build >/dev/null

step "end to end (Playwright, Chromium, real agent + sextant-kb: no model, then the local model)"
npm run --silent e2e
echo
echo "test_frontend: all passed"
