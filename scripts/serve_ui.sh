#!/usr/bin/env bash
# Serve the browser interface (frontend/dist) on port 3000, building it first if there is no build.
# Stays in the foreground (exec: the node process has this script's pid). For start_all_services.sh.
#
# Knobs: UI_HOST (default 127.0.0.1), UI_PORT (default 3000), SEXTANT_API_URL (the agent the page
# talks to; default http://127.0.0.1:${PORT:-8000}). The agent must allow the page's origin
# (SEXTANT_ALLOWED_ORIGINS; :3000 and :5173 on localhost and 127.0.0.1 are allowed by default).
set -euo pipefail
cd "$(dirname "$0")/../frontend"
UI_HOST=${UI_HOST:-127.0.0.1}
UI_PORT=${UI_PORT:-3000}
SEXTANT_API_URL=${SEXTANT_API_URL:-http://127.0.0.1:${PORT:-8000}}

if [ ! -f dist/index.html ]; then
    command -v npm >/dev/null || { echo "serve_ui: npm is needed to build the UI (Node 20+)" >&2; exit 1; }
    [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
    npm run --silent build >/dev/null
fi
exec node scripts/serve.mjs --host "$UI_HOST" --port "$UI_PORT" --api "$SEXTANT_API_URL"
