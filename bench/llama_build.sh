#!/usr/bin/env bash
# How much of the first setup's compile does building only llama.cpp's libraries save? Builds the installed
# llama-cpp-python's wheel twice in one run, from source with no pip cache: first as scripts/setup.sh
# builds it (libllama and libggml only), then with llama-cpp-python's default targets less the multimodal
# library (the setup before learning/setup.md), and prints each build's wall time, files compiled and the
# ratio, with the CPU seconds the compilers used (less sensitive than wall time to a busy machine). Then it loads the default local model from the lean wheel and generates, to show nothing the
# product needs was left out. Usage: bash bench/llama_build.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/out/llama-build}
mkdir -p "$out"
version=$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
lean="-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$PWD/scripts/llama_libraries_only.cmake"
reference="-DLLAVA_BUILD=OFF"

build() {
    local name=$1 args=$2 start
    rm -rf "${out:?}/$name" && mkdir -p "$out/$name"
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    CMAKE_ARGS="$args" /usr/bin/time -f '%U %S' -o "$out/$name.cpu" .venv/bin/python -m pip wheel -v \
        --no-cache-dir --no-deps --wheel-dir "$out/$name" "llama-cpp-python==$version" >"$out/$name.log" 2>&1
    local seconds cpu steps
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    cpu=$(awk '{print $1 + $2}' "$out/$name.cpu")
    steps=$(grep -oE '^ *\[[0-9]+/[0-9]+\]' "$out/$name.log" | tail -n 1 | cut -d/ -f2 | tr -d ']' || true)
    printf '%-10s wall %7.1f s  cpu %7.1f s  %4s build steps  load before %s, after %s\n' "$name" "$seconds" \
        "$cpu" "$steps" "$load" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/summary.txt"
}

: >"$out/summary.txt"
build lean "$lean"
build reference "$reference"
ratio() { awk -v col="$1" '$1=="lean"{l=$col} $1=="reference"{r=$col} END{printf "%.3f", l/r}' "$out/summary.txt"; }
echo "lean / reference: wall $(ratio 3), cpu $(ratio 6)" | tee -a "$out/summary.txt"
unzip -l "$out"/lean/*.whl | grep -oE 'llama_cpp/lib/[^ ]+' | tee -a "$out/summary.txt"

# The lean wheel, unpacked ahead of the installed one on the path, answers under a JSON grammar with the
# default model (the grammar code lives in libllama, which is kept).
rm -rf "$out/unpacked" && mkdir -p "$out/unpacked"
.venv/bin/python -m zipfile -e "$out"/lean/*.whl "$out/unpacked"
PYTHONPATH="$out/unpacked" .venv/bin/python - <<'PY' | tee -a "$out/summary.txt"
import llama_cpp
from llama_cpp import Llama

from sextant.llm.model_files import KNOWN_MODELS
from sextant.llm.settings import load_model_settings

spec = KNOWN_MODELS["qwen2.5-coder-0.5b-instruct"]
path = load_model_settings("bench").model_files_dir() / spec.file_name
llm = Llama(model_path=str(path), n_ctx=512, n_threads=2, verbose=False)
messages = [{"role": "user", "content": "Say hello in one word."}]
reply = llm.create_chat_completion(messages=messages, max_tokens=8, response_format={"type": "json_object"})
print("lean wheel", llama_cpp.__file__, "generates:", repr(reply["choices"][0]["message"]["content"]))
PY
