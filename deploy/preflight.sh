#!/usr/bin/env bash
# Check a server before Sextant goes live; exit 1 when anything is wrong, with what to do about it.
#
#   bash deploy/preflight.sh          before `docker compose -f deploy/docker-compose.prod.yml up`: secrets in
#                                     deploy/.env, ports 80/443 free, disk space, the model file's sha256 in the image
#   bash deploy/preflight.sh --live   once it is up: the same without the ports, plus the agent's /health (inside
#                                     the network) and that Caddy asks for a password
#
# Knobs: COMPOSE (default: docker compose, else docker-compose), ENV_FILE (default deploy/.env),
# MIN_FREE_GB (default 10: images about 4 GB, the store grows with your documents).
set -euo pipefail
cd "$(dirname "$0")/.."
ENV_FILE=${ENV_FILE:-deploy/.env}
MIN_FREE_GB=${MIN_FREE_GB:-10}
LIVE=off
[ "${1:-}" = "--live" ] && LIVE=on

if [ -z "${COMPOSE:-}" ]; then
    if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE="docker-compose"; fi
fi
read -r -a compose <<<"$COMPOSE"
compose+=(-f deploy/docker-compose.prod.yml --env-file "$ENV_FILE")

failures=0
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; failures=$((failures + 1)); }

# deploy/.env is read line by line, never sourced: a value is data, not shell.
declare -A env=()
if [ -f "$ENV_FILE" ]; then
    while IFS='=' read -r key value; do
        [[ "$key" =~ ^[A-Z_][A-Z0-9_]*$ ]] && env[$key]=$value
    done <"$ENV_FILE"
fi
get() { printf '%s' "${env[$1]:-}"; }

echo "secrets ($ENV_FILE)"
[ -f "$ENV_FILE" ] || bad "$ENV_FILE is missing: cp deploy/.env.example $ENV_FILE and fill it in"
for name in SEXTANT_DOMAIN ACME_EMAIL SEXTANT_BASIC_AUTH_USER SEXTANT_BASIC_AUTH_HASH SEXTANT_PROXY_SECRET; do
    if [ -n "$(get "$name")" ]; then ok "$name is set"; else bad "$name is empty"; fi
done
secret=$(get SEXTANT_PROXY_SECRET)
if [ -n "$secret" ] && [ "${#secret}" -lt 16 ]; then bad "SEXTANT_PROXY_SECRET is shorter than 16 characters"; fi
case "$(get SEXTANT_BASIC_AUTH_HASH)" in
    '' ) ;;
    JDJ* | \$2* ) ok "SEXTANT_BASIC_AUTH_HASH looks like bcrypt" ;;
    * ) bad "SEXTANT_BASIC_AUTH_HASH is not a bcrypt hash: use caddy hash-password (see deploy/.env.example)" ;;
esac
case "$(get SEXTANT_DOMAIN)" in
    '' | localhost | *example.org) bad "SEXTANT_DOMAIN must be this server's public name (Let's Encrypt checks it)" ;;
esac

echo "compose file"
if "${compose[@]}" config -q; then ok "deploy/docker-compose.prod.yml is valid with $ENV_FILE"; else bad "compose config failed"; fi

echo "disk"
free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
if [ "$free_gb" -ge "$MIN_FREE_GB" ]; then ok "${free_gb} GB free"; else bad "${free_gb} GB free, want ${MIN_FREE_GB}"; fi

if [ "$LIVE" = off ]; then
    echo "ports"
    for port in 80 443; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            bad "port $port is in use: stop what listens there (Caddy needs it for TLS)"
        else
            ok "port $port is free"
        fi
    done
fi

echo "model files (in the agent image)"
# A full sha256 of every model file present, against the registry's pinned hash (not the cached record).
check_models='
import sys
from pathlib import Path
from sextant.llm.model_files import KNOWN_MODELS, file_sha256
from sextant.agent.settings import AgentSettings
folder = AgentSettings().model_files_dir()
wanted = AgentSettings().local_model
bad = 0
for spec in KNOWN_MODELS.values():
    path = folder / spec.file_name
    if not path.is_file():
        if spec.name == wanted:
            print(f"  FAIL  {spec.name}: absent from {folder}"); bad += 1
        continue
    if file_sha256(path) == spec.sha256:
        print(f"  ok    {spec.name}: sha256 {spec.sha256[:16]}... verified")
    else:
        print(f"  FAIL  {spec.name}: sha256 differs from the pinned one; rebuild the image"); bad += 1
sys.exit(1 if bad else 0)
'
if [ "$LIVE" = on ]; then
    models=("${compose[@]}" exec -T agent python -c "$check_models")
else
    models=("${compose[@]}" run --rm --no-deps -T agent python -c "$check_models")
fi
"${models[@]}" || failures=$((failures + 1))

if [ "$LIVE" = on ]; then
    echo "health"
    health='import json, urllib.request; h = json.load(urllib.request.urlopen("http://127.0.0.1:8000/health", timeout=5)); print(h["status"], h["model"]["detail"]); raise SystemExit(h["status"] != "ok")'
    if out=$("${compose[@]}" exec -T agent python -c "$health"); then ok "agent /health: $out"; else bad "agent /health: ${out:-no answer}"; fi
    code=$(curl -s -o /dev/null -w '%{http_code}' "https://$(get SEXTANT_DOMAIN)/" || true)
    if [ "$code" = 401 ]; then ok "https://$(get SEXTANT_DOMAIN)/ asks for a password"; else bad "https://$(get SEXTANT_DOMAIN)/ answered $code, want 401"; fi
fi

if [ "$failures" -gt 0 ]; then
    echo "preflight: $failures problem(s)" >&2
    exit 1
fi
echo "preflight: ready"
