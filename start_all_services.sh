#!/usr/bin/env bash
# Start Sextant's services, wait until each is healthy, print where they are, and stay in the foreground.
# If any part fails to come up, stop whatever did start and exit non-zero. Ctrl-C stops everything.
#
# Knobs: PY (python of the venv, default .venv/bin/python), HOST (default 127.0.0.1), PORT (agent, default 8000),
# UI (on|off, default on), UI_PORT (browser UI, default 3000; built on first start, needs Node 20+), WAIT_S (seconds to wait for health, default 180).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
UI=${UI:-on}
UI_PORT=${UI_PORT:-3000}
WAIT_S=${WAIT_S:-180}
LOG_DIR=${LOG_DIR:-.sextant-logs}
mkdir -p "$LOG_DIR"

pids=()
# shellcheck disable=SC2317  # reached through the traps below, which shellcheck does not follow
stop_all() {
    local code=$?
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    exit "$code"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "start_all_services: $*" >&2
    exit 1
}

[ -x "$PY" ] || fail "no Python at $PY: run 'bash scripts/setup.sh' first, or set PY"

port_free() {
    "$PY" - "$1" "$2" <<'PYEOF'
import socket, sys
s = socket.socket()
# As the servers bind: the last run's connections in TIME_WAIT do not make a port busy; a listener does.
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind((sys.argv[1], int(sys.argv[2])))
except OSError:
    sys.exit(1)
PYEOF
}

wait_for() {  # name url pid log
    local name=$1 url=$2 pid=$3 log=$4 deadline=$((SECONDS + WAIT_S))
    until "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" "$url" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log" >&2 || true
            fail "$name exited before it was healthy (log: $log)"
        fi
        [ "$SECONDS" -lt "$deadline" ] || fail "$name was not healthy within ${WAIT_S}s (log: $log)"
        sleep 1
    done
}

# The page is served from UI_PORT: let it call the agent unless the origins are set explicitly.
export SEXTANT_ALLOWED_ORIGINS=${SEXTANT_ALLOWED_ORIGINS:-http://$HOST:$UI_PORT,http://localhost:$UI_PORT,http://127.0.0.1:$UI_PORT}
port_free "$HOST" "$PORT" || fail "port $PORT on $HOST is already in use (set PORT)"
"$PY" -m sextant.agent.cli --host "$HOST" --port "$PORT" >"$LOG_DIR/agent.log" 2>&1 &
pids+=($!)
wait_for "agent" "http://$HOST:$PORT/health" "${pids[-1]}" "$LOG_DIR/agent.log"

ui_url="off (UI=off)"
if [ "$UI" = on ]; then
    port_free "$HOST" "$UI_PORT" || fail "port $UI_PORT on $HOST is already in use (set UI_PORT, or UI=off)"
    SEXTANT_API_URL="http://$HOST:$PORT" UI_HOST="$HOST" UI_PORT="$UI_PORT" bash scripts/serve_ui.sh \
        >"$LOG_DIR/ui.log" 2>&1 &
    pids+=($!)
    wait_for "the browser UI" "http://$HOST:$UI_PORT/" "${pids[-1]}" "$LOG_DIR/ui.log"
    ui_url="http://$HOST:$UI_PORT/"
fi

health=$("$PY" -c "import json, sys, urllib.request; h = json.load(urllib.request.urlopen(sys.argv[1])); print(h['model']['detail'])" "http://$HOST:$PORT/health")
printf '\n%-12s %s\n' "service" "address"
printf '%-12s %s\n' "agent API" "http://$HOST:$PORT/"
printf '%-12s %s\n' "API docs" "http://$HOST:$PORT/docs"
printf '%-12s %s\n' "health" "http://$HOST:$PORT/health"
printf '%-12s %s\n' "browser UI" "$ui_url"
printf '%-12s %s\n' "model" "$health"
printf '%-12s %s\n\n' "logs" "$LOG_DIR/"
echo "Sextant is running; Ctrl-C stops it."
wait -n "${pids[@]}"
fail "a service stopped; see $LOG_DIR/"
