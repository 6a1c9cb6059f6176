#!/usr/bin/env bash
# The packaged MiniLM's two runtimes side by side on the same questions: fp32 under torch (full installs) and int8
# under onnxruntime (a plain install). Each runtime builds its own stores from scratch (its own vectors), then is
# graded on the golden sets and on BEIR (NFCorpus dev, SciFact train), dense and fused. One thread each, both at once.
#   bash bench/embed_precision.sh [OUT_DIR] [DATA_DIR]      (learning/light-install.md)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-bench/out/embed_precision}")
data=$(realpath -m "${2:-${SEXTANT_DATA_DIR:-../shared/data}}")
mkdir -p "$out"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false SEXTANT_THREADS=1
run() {
    local precision=$1
    export SEXTANT_EMBED_PRECISION=$precision
    .venv/bin/sextant-eval --set all --modes dense rrf --store "$out/stores-$precision" --json "$out/golden-$precision.json"
    .venv/bin/sextant-eval beir --data "$data/beir/nfcorpus" --split dev --mode dense rrf \
        --store "$out/stores-$precision/nfcorpus" --json "$out/nfcorpus-dev-$precision.json"
    .venv/bin/sextant-eval beir --data "$data/beir/scifact" --split train --mode dense rrf \
        --store "$out/stores-$precision/scifact" --json "$out/scifact-train-$precision.json"
}
run fp32 >"$out/fp32.log" 2>&1 &
fp32=$!
run int8 >"$out/int8.log" 2>&1 &
int8=$!
wait $fp32 $int8
echo "embed_precision: results in $out"
